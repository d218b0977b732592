package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// WriteListJSON prints a listing as encoding/json prints []sessionJSON,
// indented, byte for byte, one session at a time: a listing of 100,000
// sessions is never held as JSON whole, and the fields of a session are
// written by hand (reflection was most of the cost). What the hand-written
// path does not cover (turns, a landing, a string that needs escaping, a
// number JSON cannot hold) goes through encoding/json, which says the same.
func WriteListJSON(w io.Writer, list []*record.Session) error {
	if len(list) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	// The sessions are encoded in chunks on every processor and written in
	// order; at most a few chunks wait to be written, so memory stays
	// bounded however long the list.
	chunks := (len(list) + jsonChunk - 1) / jsonChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	done := make([]chan jsonPart, chunks)
	for i := range done {
		done[i] = make(chan jsonPart, 1)
	}
	// A worker takes a buffer to fill, and the writer gives it back once
	// written: at most 2*workers chunks are in flight, in as many buffers,
	// however long the list.
	free := make(chan []byte, 2*workers)
	for range 2 * workers {
		free <- nil
	}
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				var b []byte
				select {
				case b = <-free:
				case <-stop:
					return
				}
				i := int(next.Add(1)) - 1
				if i >= chunks {
					return
				}
				var err error
				for k := i * jsonChunk; k < min(len(list), (i+1)*jsonChunk) && err == nil; k++ {
					if b, err = appendSessionJSON(b, ToJSON(list[k])); k < len(list)-1 {
						b = append(b, ',')
					}
					b = append(b, '\n')
				}
				done[i] <- jsonPart{b, err}
			}
		})
	}
	defer wg.Wait()
	defer close(stop)
	for i := range chunks {
		p := <-done[i]
		if p.err != nil {
			return p.err
		}
		// A chunk is written as it is (a few hundred kilobytes): a
		// buffer between would copy all of it once more.
		if _, err := w.Write(p.b); err != nil {
			return err
		}
		free <- p.b[:0]
	}
	_, err := io.WriteString(w, "]\n")
	return err
}

// jsonChunk is how many sessions one goroutine encodes at a time.
const jsonChunk = 256

type jsonPart struct {
	b   []byte
	err error
}

// appendSessionJSON appends v as the element of an indented array.
func appendSessionJSON(b []byte, v SessionJSON) ([]byte, error) {
	e := &jsonAppender{b: b}
	e.raw("  {")
	e.str("id", v.ID)
	e.str("task", v.Task)
	e.str("status", string(v.Status))
	e.boolean("settled", v.Settled)
	e.str("adapter", v.Adapter)
	e.str("model", v.Model)
	if v.Sandbox != "" {
		e.str("sandbox", v.Sandbox)
	}
	e.str("working_dir", v.WorkingDir)
	e.str("source", v.Source.String())
	e.time("created_at", &v.CreatedAt)
	e.time("updated_at", &v.UpdatedAt)
	e.time("ended_at", v.EndedAt)
	e.time("last_event_at", v.LastEventAt)
	e.num("pid", int64(v.PID))
	if v.ExitCode == nil {
		e.key("exit_code")
		e.raw("null")
	} else {
		e.num("exit_code", int64(*v.ExitCode))
	}
	e.num("turn", int64(v.Turn))
	e.str("thread_id", v.ThreadID)
	e.key("usage")
	e.raw("{")
	e.depth++
	u := v.Usage
	e.num("input_tokens", u.InputTokens)
	e.num("cached_input_tokens", u.CachedInputTokens)
	if u.CacheWriteInputTokens != 0 {
		e.num("cache_write_input_tokens", u.CacheWriteInputTokens)
	}
	e.num("output_tokens", u.OutputTokens)
	e.num("reasoning_output_tokens", u.ReasoningOutputTokens)
	e.num("total_tokens", u.TotalTokens)
	e.close('}')
	e.key("cost_usd")
	if v.CostUSD == nil {
		e.raw("null")
	} else {
		e.float(*v.CostUSD)
	}
	e.str("last_message", v.LastMessage)
	e.str("error", v.Error)
	e.num("pending_injects", int64(v.PendingInjects))
	e.num("denied", int64(v.Denied))
	e.str("runner", v.Runner)
	e.str("job_id", v.JobID)
	e.str("runner_state", v.RunnerState)
	valueOr(e, "job_resources", len(v.JobResources) == 0, "{}", v.JobResources)
	valueOr(e, "accounting", len(v.Accounting) == 0, "[]", v.Accounting)
	e.str("isolation", v.Isolation)
	e.str("worktree", v.Worktree)
	e.str("branch", v.Branch)
	e.str("base", v.Base)
	e.str("base_commit", v.BaseCommit)
	e.key("changes")
	if c := v.Changes; c == nil {
		e.raw("null")
	} else {
		e.raw("{")
		e.depth++
		e.num("files", int64(c.Files))
		e.num("added", int64(c.Added))
		e.num("deleted", int64(c.Deleted))
		e.close('}')
	}
	e.str("changes_text", v.ChangesText)
	valueOr(e, "landed", v.Landed == nil, "null", v.Landed)
	valueOr(e, "earlier_landings", len(v.EarlierLandings) == 0, "[]", v.EarlierLandings)
	e.key("conflict")
	if len(v.Conflict) == 0 {
		e.raw("[]")
	} else {
		e.raw("[")
		e.depth++
		for _, c := range v.Conflict {
			e.line()
			e.quoted(c)
		}
		e.close(']')
	}
	valueOr(e, "turns", len(v.Turns) == 0, "[]", v.Turns)
	e.str("role", v.Role)
	e.str("reasoning_effort", v.ReasoningEffort)
	e.str("instructions", v.Instructions)
	e.key("max_cost_usd")
	if v.MaxCostUSD == nil {
		e.raw("null")
	} else {
		e.float(*v.MaxCostUSD)
	}
	valueOr(e, "attached", len(v.Attached) == 0, "[]", v.Attached)
	e.depth--
	e.b = append(e.b, "\n  }"...)
	return e.b, e.err
}

// jsonAppender writes the members of an object indented two spaces a
// level, the array holding it being level 1.
type jsonAppender struct {
	b     []byte
	depth int // of the members being written
	first bool
	err   error
}

func (e *jsonAppender) raw(s string) {
	e.b = append(e.b, s...)
	if s == "{" || s == "[" || s == "  {" {
		if s == "  {" {
			e.depth = 2
		}
		e.first = true
	}
}

// line starts the next member or element.
func (e *jsonAppender) line() {
	if !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
	e.b = append(e.b, indents[:1+2*e.depth]...)
}

// indents is a newline and the indentation of every level used.
const indents = "\n            "

func (e *jsonAppender) key(k string) {
	e.line()
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, `": `...)
}

// close ends an object or array opened at the level above.
func (e *jsonAppender) close(c byte) {
	e.depth--
	e.b = append(e.b, indents[:1+2*e.depth]...)
	e.b = append(e.b, c)
	e.first = false
}

func (e *jsonAppender) str(k, v string) {
	e.key(k)
	e.quoted(v)
}

func (e *jsonAppender) quoted(v string) {
	for i := 0; i < len(v); i++ {
		if escaped[v[i]] {
			e.value(v)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, v...)
	e.b = append(e.b, '"')
}

// escaped are the bytes encoding/json writes otherwise than as they are
// (control characters, quote, backslash, what HTML would read, and
// anything not ASCII, whose validity it checks): a string holding one is
// left to it.
var escaped = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'
	}
	return t
}()

func (e *jsonAppender) num(k string, v int64) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *jsonAppender) boolean(k string, v bool) {
	e.key(k)
	e.b = strconv.AppendBool(e.b, v)
}

func (e *jsonAppender) time(k string, t *time.Time) {
	e.key(k)
	if t == nil {
		e.b = append(e.b, "null"...)
		return
	}
	if y := t.Year(); y < 0 || y > 9999 {
		e.value(*t) // encoding/json says why it cannot (a copy: t must not escape)
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

// float is encoding/json's format of a float64.
func (e *jsonAppender) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.value(f) // the error encoding/json gives
		return
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if n := len(e.b); format == 'e' && n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
		e.b[n-2] = e.b[n-1] // e-09 is e-9
		e.b = e.b[:n-1]
	}
}

// valueOr writes v under key, or, when empty says it holds nothing,
// none. It is generic so that v becomes an interface (a boxed copy) only
// when it is written: a list's sessions mostly hold nothing there.
func valueOr[T any](e *jsonAppender, key string, empty bool, none string, v T) {
	e.key(key)
	if empty {
		e.raw(none)
		return
	}
	e.value(v)
}

// value appends v through encoding/json, indented at the current level.
func (e *jsonAppender) value(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		if e.err == nil {
			e.err = err
		}
		return
	}
	var out bytes.Buffer
	prefix := make([]byte, 0, 2*e.depth)
	for range e.depth {
		prefix = append(prefix, "  "...)
	}
	json.Indent(&out, data, string(prefix), "  ")
	e.b = append(e.b, out.Bytes()...)
}
