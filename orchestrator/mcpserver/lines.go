package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
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
// dropped; the next line is read as usual. A batch is such a line too.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out, open: map[string]bool{}}
	return &mcp.IOTransport{Reader: &checkedLines{r: bufio.NewReaderSize(in, 64<<10), out: w}, Writer: w, MaxLineLength: maxLine + 1}
}

// lockedWriter writes one message at a time: the SDK's answers and the
// errors of lines it never saw share the client's pipe. It keeps the ids
// of the client's requests not answered yet (open): the SDK never
// answers a request whose id is one of them, and the client would wait
// for good.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open map[string]bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	// The SDK writes one message a line; an answer has an id and no
	// method (a request of the server's own has both).
	answer := json.Unmarshal(p, &m) == nil && m.ID != nil && m.Method == ""
	l.mu.Lock()
	defer l.mu.Unlock()
	if answer {
		delete(l.open, idKey(m.ID))
	}
	return l.w.Write(p)
}

// opened records the id of a request read, unless one of that id is
// open already (false).
func (l *lockedWriter) opened(id json.RawMessage) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := idKey(id)
	if l.open[k] {
		return false
	}
	l.open[k] = true
	return true
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
	out  *lockedWriter
	next []byte // the rest of a checked line, for the SDK
}

func (c *checkedLines) Read(p []byte) (int, error) {
	for len(c.next) == 0 {
		line, long, err := c.line()
		why, code, id := check(line, long)
		switch {
		case len(line) == 0 && !long:
		case why == "" && id != nil && !c.out.opened(id):
			c.answer(jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s is a request's not answered yet; give each request an id of its own", id))
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
// the JSON-RPC error code that says it; and, for a request, its id.
func check(line []byte, long bool) (why string, code int64, id json.RawMessage) {
	switch {
	case long:
		return fmt.Sprintf("invalid request: a message over %d bytes", maxLine), jsonrpc.CodeInvalidRequest, nil
	case len(line) == 0:
		return "", 0, nil
	case !json.Valid(line):
		return "parse error: the line is not JSON", jsonrpc.CodeParseError, nil
	case line[0] == '[':
		// The SDK ends the connection on a batch it cannot take (any
		// batch once 2025-06-18 or later is agreed, one whose ids repeat,
		// or reuse a batch's still unanswered), dropping the answers of
		// every call under way; and MCP has no batches since 2025-06-18.
		return "invalid request: a batch; send each message on a line of its own (MCP has no JSON-RPC batches since 2025-06-18)", jsonrpc.CodeInvalidRequest, nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return "invalid request: " + err.Error(), jsonrpc.CodeInvalidRequest, nil
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(line, &m)
	if _, ok := msg.(*jsonrpc.Request); !ok || m.ID == nil {
		return "", 0, nil // an answer to the server, or a notification
	}
	// The SDK takes a null id for none (the request is never answered),
	// and a number for an int64 (1.5 is answered as 1).
	var n int64
	if s := string(m.ID); s == "null" || s[0] != '"' && json.Unmarshal(m.ID, &n) != nil {
		return fmt.Sprintf("invalid request: id %s; a request's id is a string or an integer, with no fraction or exponent (a notification has none)", m.ID), jsonrpc.CodeInvalidRequest, nil
	}
	return "", 0, m.ID
}

// idKey is an id as one key whatever its spelling ("\u0041" is "A", 7 is
// 7, and a string "7" is not the number 7), read from a request or from
// the SDK's answer to it.
func idKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return "s" + s
	}
	var n int64
	if json.Unmarshal(id, &n) == nil {
		return "n" + strconv.FormatInt(n, 10)
	}
	return "?" + string(id)
}

// answer writes the error of a line the SDK never saw.
func (c *checkedLines) answer(code int64, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	c.out.Write(append(b, '\n'))
}
