package codex

import "github.com/tidwall/gjson"

// line holds the fields of one output line the events need, as views into
// the line (see view). The parser reuses one line, and the backing arrays
// of its slices, for every line it reads.
type line struct {
	typ, threadID gjson.Result
	item          item
	hasItem       bool
	usage         usage
	hasUsage      bool
	err           errObj
	hasErr        bool
	message       gjson.Result // a string, or any JSON codex may print instead
}

type errObj struct{ message gjson.Result }

type usage struct {
	input, cached, cacheWrite, output, reasoning, total int64
}

type item struct {
	id, typ, text, command, output, status gjson.Result
	exitCode                               int64
	hasExit                                bool
	changes                                []change
	todos                                  []todo
	server, tool, query, message           gjson.Result
	arguments, result                      gjson.Result // any JSON
	err                                    errObj
	hasErr                                 bool
}

type change struct{ path, kind gjson.Result }

type todo struct {
	text      gjson.Result
	completed bool
}

// decode reads the line object v into l. It reports false if a known
// field has a JSON type encoding/json would have refused.
func (l *line) decode(v gjson.Result) bool {
	changes, todos := l.item.changes[:0], l.item.todos[:0]
	*l = line{}
	l.item.changes, l.item.todos = changes, todos
	var f fields
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.str(&l.typ, v)
		case "thread_id":
			f.str(&l.threadID, v)
		case "item":
			if ok, fresh := f.object(v, &l.hasItem); ok {
				if fresh {
					l.item.reset()
				}
				l.item.decode(v, &f)
			}
		case "usage":
			if ok, fresh := f.object(v, &l.hasUsage); ok {
				if fresh {
					l.usage = usage{}
				}
				l.usage.decode(v, &f)
			}
		case "error":
			if ok, fresh := f.object(v, &l.hasErr); ok {
				if fresh {
					l.err = errObj{}
				}
				l.err.decode(v, &f)
			}
		case "message":
			l.message = v
		}
		return !f.bad
	})
	return !f.bad
}

func (e *errObj) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "message" {
			f.str(&e.message, v)
		}
		return !f.bad
	})
}

func (u *usage) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			f.int64(&u.input, v)
		case "cached_input_tokens":
			f.int64(&u.cached, v)
		case "cache_write_input_tokens":
			f.int64(&u.cacheWrite, v)
		case "output_tokens":
			f.int64(&u.output, v)
		case "reasoning_output_tokens":
			f.int64(&u.reasoning, v)
		case "total_tokens":
			f.int64(&u.total, v)
		}
		return !f.bad
	})
}

// reset empties the item, keeping its slices' backing arrays.
func (it *item) reset() {
	changes, todos := it.changes[:0], it.todos[:0]
	*it = item{changes: changes, todos: todos}
}

func (it *item) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			f.str(&it.id, v)
		case "type":
			f.str(&it.typ, v)
		case "text":
			f.str(&it.text, v)
		case "command":
			f.str(&it.command, v)
		case "aggregated_output":
			f.str(&it.output, v)
		case "exit_code":
			f.optInt64(&it.exitCode, &it.hasExit, v)
		case "status":
			f.str(&it.status, v)
		case "changes":
			// A repeated array is decoded over the previous one, entry by
			// entry, as encoding/json does.
			n := 0
			if f.array(v) {
				v.ForEach(func(_, v gjson.Result) bool {
					if n == len(it.changes) {
						it.changes = append(it.changes, change{})
					}
					decodeEntry(&it.changes[n], v, f)
					n++
					return true
				})
			}
			it.changes = it.changes[:n]
		case "items":
			n := 0
			if f.array(v) {
				v.ForEach(func(_, v gjson.Result) bool {
					if n == len(it.todos) {
						it.todos = append(it.todos, todo{})
					}
					decodeEntry(&it.todos[n], v, f)
					n++
					return true
				})
			}
			it.todos = it.todos[:n]
		case "server":
			f.str(&it.server, v)
		case "tool":
			f.str(&it.tool, v)
		case "arguments":
			it.arguments = v
		case "result":
			it.result = v
		case "error":
			if ok, fresh := f.object(v, &it.hasErr); ok {
				if fresh {
					it.err = errObj{}
				}
				it.err.decode(v, f)
			}
		case "query":
			f.str(&it.query, v)
		case "message":
			f.str(&it.message, v)
		}
		return !f.bad
	})
}

// decodeEntry decodes one array entry: an object into e, null leaving e
// as it was.
func decodeEntry[E interface {
	decode(gjson.Result, *fields)
}](e E, v gjson.Result, f *fields) {
	if isObject(v) {
		e.decode(v, f)
	} else if v.Type != gjson.Null {
		f.bad = true
	}
}

func (c *change) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "path":
			f.str(&c.path, v)
		case "kind":
			f.str(&c.kind, v)
		}
		return !f.bad
	})
}

func (t *todo) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "text":
			f.str(&t.text, v)
		case "completed":
			f.boolean(&t.completed, v)
		}
		return !f.bad
	})
}
