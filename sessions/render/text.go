package render

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Clip makes s one safe line of at most n runes: whitespace runs (newlines
// included) become one space, control characters are escaped, and what is
// cut is marked with "…".
func Clip(s string, n int) string {
	if len(s) <= n && plainLine(s) {
		return s // short, printable, single spaces: nothing to do
	}
	s = SafeLine(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(0, n-1)]) + "…"
}

// plainLine reports whether s is printable ASCII with no leading, trailing
// or repeated spaces: what Clip would return unchanged.
func plainLine(s string) bool {
	prev := byte(' ')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 && !(c == ' ' && prev != ' ') || c >= 0x7f {
			return false
		}
		prev = c
	}
	return prev != ' '
}

// Lines splits text into safe display lines: CRLF ends a line like LF,
// tabs are expanded, every other control character is escaped, and
// trailing blank lines are dropped.
func Lines(s string) []string {
	return splitSafe(strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n"))
}

// splitSafe is Lines of text whose CRLFs are already LFs, without the
// trimming: every line, blank ones at the end included.
func splitSafe(s string) []string { return appendSplitSafe(nil, s) }

// expandTabs replaces tabs by spaces up to the next multiple of 8 columns,
// as a terminal would show them, so a line's width is what it looks like.
func expandTabs(s string) string {
	i := strings.IndexByte(s, '\t')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	col := 0
	for ; i >= 0; i = strings.IndexByte(s, '\t') {
		b.WriteString(s[:i])
		col += utf8.RuneCountInString(s[:i])
		n := 8 - col%8
		b.WriteString(tabStop[:n])
		col += n
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

const tabStop = "        "

// Excerpt keeps the first head and last tail lines of a long text, as safe
// display lines. Only the lines kept are made safe: a command's megabytes
// of output cost a count of its newlines.
func Excerpt(s string, head, tail int) []string {
	body := s // without its trailing line ends, CRLF ones included
	for strings.HasSuffix(body, "\n") {
		body = strings.TrimSuffix(strings.TrimSuffix(body, "\n"), "\r")
	}
	n := strings.Count(body, "\n") + 1
	if n <= head+tail+1 {
		lines := Lines(s)
		if len(lines) <= head+tail {
			return lines
		}
		out := append([]string{}, lines[:head]...)
		out = append(out, moreLines(len(lines)-head-tail))
		return append(out, lines[len(lines)-tail:]...)
	}
	// The first head lines end at the head-th newline; the last tail lines
	// start after the (n-tail)-th. Splitting there keeps CRLF pairs whole.
	end := 0
	for i := 0; i < head; i++ {
		end += strings.IndexByte(body[end:], '\n') + 1
	}
	start := len(body)
	for i := 0; i < tail; i++ {
		start = strings.LastIndexByte(body[:start], '\n')
	}
	out := make([]string, 0, head+1+tail)
	if head > 0 {
		h := strings.ReplaceAll(body[:end], "\r\n", "\n")
		out = appendSplitSafe(out, h[:len(h)-1])
	}
	out = append(out, moreLines(n-head-tail))
	if tail > 0 {
		out = appendSplitSafe(out, strings.ReplaceAll(body[start+1:], "\r\n", "\n"))
	}
	return out
}

// appendSplitSafe appends splitSafe(s) to out.
func appendSplitSafe(out []string, s string) []string {
	s = Safe(s)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, expandTabs(s))
		}
		out = append(out, expandTabs(s[:i]))
		s = s[i+1:]
	}
}

// moreLines marks the lines an excerpt leaves out (fmt cost more than the
// rest of a short command's excerpt).
func moreLines(n int) string { return "… " + strconv.Itoa(n) + " more lines …" }

// ErrorText is an agent's error as a person wants to read it. Agents pass
// on the model API's response body as it came, so a message may be, or
// end with, a JSON document such as {"error": {"message": "Invalid
// request: ..."}}: then its message is what is shown, after whatever text
// came before the document.
func ErrorText(s string) string {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return s
	}
	var doc map[string]any
	if json.Unmarshal([]byte(s[i:]), &doc) != nil {
		return s
	}
	msg := jsonMessage(doc)
	if msg == "" {
		return s
	}
	prefix := strings.TrimRight(strings.TrimSpace(s[:i]), ":")
	if prefix == "" {
		return msg
	}
	return prefix + ": " + msg
}

// jsonMessage finds the human message of an API error body: error.message,
// error (a string), or message.
func jsonMessage(doc map[string]any) string {
	switch e := doc["error"].(type) {
	case string:
		return e
	case map[string]any:
		if m, ok := e["message"].(string); ok && m != "" {
			return m
		}
	}
	if m, ok := doc["message"].(string); ok {
		return m
	}
	return ""
}

// ToolOutput is what a tool returned, as text. An MCP result is a JSON
// document whose content blocks carry the text ({"content": [{"type":
// "text", "text": "..."}]}): their text is the output.
func ToolOutput(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") {
		return s
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structured_content"`
	}
	if json.Unmarshal([]byte(t), &res) != nil || len(res.Content) == 0 {
		return s
	}
	var parts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		} else {
			parts = append(parts, "["+c.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}
