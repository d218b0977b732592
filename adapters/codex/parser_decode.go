package codex

import "github.com/zwarm/zwarm/adapters/internal/jsonscan"

// line holds the fields of one output line the events need, as raw JSON
// values in the line (see jsonscan.Scanner). The parser reuses one line,
// and the backing arrays of its slices, for every line it reads.
type line struct {
	typ, threadID []byte
	item          item
	hasItem       bool
	usage         usage
	hasUsage      bool
	err           errObj
	hasErr        bool
	message       []byte // a string, or any JSON codex may print instead
}

type errObj struct{ message []byte }

type usage struct {
	input, cached, cacheWrite, output, reasoning, total int64
}

type item struct {
	id, typ, text, command, output, status []byte
	exitCode                               int64
	hasExit                                bool
	changes                                []change
	todos                                  []todo
	server, tool, query, message           []byte
	arguments, result                      []byte // any JSON
	err                                    errObj
	hasErr                                 bool
}

type change struct{ path, kind []byte }

type todo struct {
	text      []byte
	completed bool
}

// decode reads the line b, an object, into l. It reports false if b is
// not valid JSON or a known field has a JSON type encoding/json would
// have refused.
func (l *line) decode(s *jsonscan.Scanner, b []byte) bool { return s.Line(b, l.read) }

func (l *line) read(s *jsonscan.Scanner) bool {
	changes, todos := l.item.changes[:0], l.item.todos[:0]
	*l = line{}
	l.item.changes, l.item.todos = changes, todos
	s.Enter()
	for s.More() {
		switch s.Member() {
		case "type":
			s.Str(&l.typ)
		case "thread_id":
			s.Str(&l.threadID)
		case "item":
			if ok, fresh := s.Object(&l.hasItem); ok {
				if fresh {
					l.item.reset()
				}
				l.item.decode(s)
			}
		case "usage":
			if ok, fresh := s.Object(&l.hasUsage); ok {
				if fresh {
					l.usage = usage{}
				}
				l.usage.decode(s)
			}
		case "error":
			if ok, fresh := s.Object(&l.hasErr); ok {
				if fresh {
					l.err = errObj{}
				}
				l.err.decode(s)
			}
		case "message":
			l.message = s.Value()
		default:
			s.Skip()
		}
	}
	return s.Done() && !s.Mismatch
}

// Each decode method reads the members of the object the scanner has
// entered, up to its closing brace.

func (e *errObj) decode(s *jsonscan.Scanner) {
	for s.More() {
		if s.Member() == "message" {
			s.Str(&e.message)
		} else {
			s.Skip()
		}
	}
}

func (u *usage) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "input_tokens":
			s.Int64(&u.input)
		case "cached_input_tokens":
			s.Int64(&u.cached)
		case "cache_write_input_tokens":
			s.Int64(&u.cacheWrite)
		case "output_tokens":
			s.Int64(&u.output)
		case "reasoning_output_tokens":
			s.Int64(&u.reasoning)
		case "total_tokens":
			s.Int64(&u.total)
		default:
			s.Skip()
		}
	}
}

// reset empties the item, keeping its slices' backing arrays.
func (it *item) reset() {
	changes, todos := it.changes[:0], it.todos[:0]
	*it = item{changes: changes, todos: todos}
}

func (it *item) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "id":
			s.Str(&it.id)
		case "type":
			s.Str(&it.typ)
		case "text":
			s.Str(&it.text)
		case "command":
			s.Str(&it.command)
		case "aggregated_output":
			s.Str(&it.output)
		case "exit_code":
			s.OptInt64(&it.exitCode, &it.hasExit)
		case "status":
			s.Str(&it.status)
		case "changes":
			it.changes = entries(s, it.changes)
		case "items":
			it.todos = entries(s, it.todos)
		case "server":
			s.Str(&it.server)
		case "tool":
			s.Str(&it.tool)
		case "arguments":
			it.arguments = s.Value()
		case "result":
			it.result = s.Value()
		case "error":
			if ok, fresh := s.Object(&it.hasErr); ok {
				if fresh {
					it.err = errObj{}
				}
				it.err.decode(s)
			}
		case "query":
			s.Str(&it.query)
		case "message":
			s.Str(&it.message)
		default:
			s.Skip()
		}
	}
}

// entries decodes an array of objects over dst: a repeated array is
// decoded over the previous one, entry by entry, and a null entry leaves
// its entry as it was, as encoding/json does. null decodes to no entries.
func entries[E any, P interface {
	*E
	decode(*jsonscan.Scanner)
}](s *jsonscan.Scanner, dst []E) []E {
	n := 0
	if s.Array() {
		for s.More() {
			if n == len(dst) {
				var zero E
				dst = append(dst, zero)
			}
			if s.Entry() {
				P(&dst[n]).decode(s)
			}
			n++
		}
	}
	return dst[:n]
}

func (c *change) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "path":
			s.Str(&c.path)
		case "kind":
			s.Str(&c.kind)
		default:
			s.Skip()
		}
	}
}

func (t *todo) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "text":
			s.Str(&t.text)
		case "completed":
			s.Boolean(&t.completed)
		default:
			s.Skip()
		}
	}
}
