package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine is the longest message a client may send: the SDK's own bound.
const maxLine = mcp.DefaultMaxLineLength

// Stdio is the transport of a server on a client's pipes (in, out): the
// SDK's, with every line checked before the SDK reads it. The SDK reads
// its input as one stream of JSON, so one line that is not JSON (or not
// JSON-RPC) would end the connection, and requests read before it would
// go unanswered. Such a line is answered as JSON-RPC says, with an error
// (-32700, parse error; -32600, invalid request) whose id is null, and
// dropped; the next line is read as usual.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{Reader: &checkedLines{r: bufio.NewReaderSize(in, 64<<10), out: w}, Writer: w, MaxLineLength: maxLine + 1}
}

// lockedWriter writes one message at a time: the SDK's answers and the
// errors of lines it never saw share the client's pipe.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error {
	if c, ok := l.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// checkedLines hands the SDK the client's lines that are JSON-RPC
// messages, and answers the others itself.
type checkedLines struct {
	r    *bufio.Reader
	out  io.Writer
	next []byte // the rest of a checked line, for the SDK
}

func (c *checkedLines) Read(p []byte) (int, error) {
	for len(c.next) == 0 {
		line, long, err := c.line()
		switch why, code := check(line, long); {
		case len(line) == 0 && !long:
		case why == "":
			c.next = append(line, '\n')
		default:
			c.answer(code, why)
		}
		if err != nil && len(c.next) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.next)
	c.next = c.next[n:]
	return n, nil
}

func (c *checkedLines) Close() error { return nil }

// line reads the next line, trimmed; one over maxLine (long) is read to
// its end, and nothing of it kept.
func (c *checkedLines) line() (line []byte, long bool, err error) {
	for {
		chunk, err := c.r.ReadSlice('\n')
		if long = long || len(line)+len(chunk) > maxLine+1; long {
			line = nil
		} else {
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSpace(line), long, err
		}
	}
}

// check says what is wrong with a line for the SDK ("" if nothing), and
// the JSON-RPC error code that says it.
func check(line []byte, long bool) (string, int64) {
	switch {
	case long:
		return fmt.Sprintf("invalid request: a message over %d bytes", maxLine), jsonrpc.CodeInvalidRequest
	case len(line) == 0:
		return "", 0
	case !json.Valid(line):
		return "parse error: the line is not JSON", jsonrpc.CodeParseError
	case line[0] == '[':
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return "invalid request: an empty or broken batch", jsonrpc.CodeInvalidRequest
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return "invalid request: " + err.Error(), jsonrpc.CodeInvalidRequest
			}
		}
	default:
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			return "invalid request: " + err.Error(), jsonrpc.CodeInvalidRequest
		}
	}
	return "", 0
}

// answer writes the error of a line the SDK never saw.
func (c *checkedLines) answer(code int64, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	c.out.Write(append(b, '\n'))
}
