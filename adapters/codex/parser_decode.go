package codex

// line holds the fields of one output line the events need, as raw JSON
// values in the line (see scanner). The parser reuses one line, and the
// backing arrays of its slices, for every line it reads.
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
func (l *line) decode(s *scanner, b []byte) bool {
	s.startFast(b)
	if l.read(s) {
		return true
	}
	s.start(b, true)
	if l.read(s) {
		return true
	}
	// Invalid UTF-8 or a lone surrogate, or a line encoding/json would not
	// decode either.
	s.start(b, false)
	return l.read(s)
}

func (l *line) read(s *scanner) bool {
	changes, todos := l.item.changes[:0], l.item.todos[:0]
	*l = line{}
	l.item.changes, l.item.todos = changes, todos
	s.enter()
	for s.more() {
		switch s.member() {
		case "type":
			s.str(&l.typ)
		case "thread_id":
			s.str(&l.threadID)
		case "item":
			if ok, fresh := s.object(&l.hasItem); ok {
				if fresh {
					l.item.reset()
				}
				l.item.decode(s)
			}
		case "usage":
			if ok, fresh := s.object(&l.hasUsage); ok {
				if fresh {
					l.usage = usage{}
				}
				l.usage.decode(s)
			}
		case "error":
			if ok, fresh := s.object(&l.hasErr); ok {
				if fresh {
					l.err = errObj{}
				}
				l.err.decode(s)
			}
		case "message":
			l.message = s.value()
		default:
			s.skip()
		}
	}
	return s.done() && !s.mismatch
}

// Each decode method reads the members of the object the scanner has
// entered, up to its closing brace.

func (e *errObj) decode(s *scanner) {
	for s.more() {
		if s.member() == "message" {
			s.str(&e.message)
		} else {
			s.skip()
		}
	}
}

func (u *usage) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "input_tokens":
			s.int64(&u.input)
		case "cached_input_tokens":
			s.int64(&u.cached)
		case "cache_write_input_tokens":
			s.int64(&u.cacheWrite)
		case "output_tokens":
			s.int64(&u.output)
		case "reasoning_output_tokens":
			s.int64(&u.reasoning)
		case "total_tokens":
			s.int64(&u.total)
		default:
			s.skip()
		}
	}
}

// reset empties the item, keeping its slices' backing arrays.
func (it *item) reset() {
	changes, todos := it.changes[:0], it.todos[:0]
	*it = item{changes: changes, todos: todos}
}

func (it *item) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "id":
			s.str(&it.id)
		case "type":
			s.str(&it.typ)
		case "text":
			s.str(&it.text)
		case "command":
			s.str(&it.command)
		case "aggregated_output":
			s.str(&it.output)
		case "exit_code":
			s.optInt64(&it.exitCode, &it.hasExit)
		case "status":
			s.str(&it.status)
		case "changes":
			it.changes = entries(s, it.changes)
		case "items":
			it.todos = entries(s, it.todos)
		case "server":
			s.str(&it.server)
		case "tool":
			s.str(&it.tool)
		case "arguments":
			it.arguments = s.value()
		case "result":
			it.result = s.value()
		case "error":
			if ok, fresh := s.object(&it.hasErr); ok {
				if fresh {
					it.err = errObj{}
				}
				it.err.decode(s)
			}
		case "query":
			s.str(&it.query)
		case "message":
			s.str(&it.message)
		default:
			s.skip()
		}
	}
}

// entries decodes an array of objects over dst: a repeated array is
// decoded over the previous one, entry by entry, and a null entry leaves
// its entry as it was, as encoding/json does. null decodes to no entries.
func entries[E any, P interface {
	*E
	decode(*scanner)
}](s *scanner, dst []E) []E {
	n := 0
	if s.array() {
		for s.more() {
			if n == len(dst) {
				var zero E
				dst = append(dst, zero)
			}
			if s.entry() {
				P(&dst[n]).decode(s)
			}
			n++
		}
	}
	return dst[:n]
}

func (c *change) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "path":
			s.str(&c.path)
		case "kind":
			s.str(&c.kind)
		default:
			s.skip()
		}
	}
}

func (t *todo) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "text":
			s.str(&t.text)
		case "completed":
			s.boolean(&t.completed)
		default:
			s.skip()
		}
	}
}
