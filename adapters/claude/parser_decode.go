package claude

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// line holds the fields of one output line the events need, as views into
// the line (see view). The parser reuses one line for every line it reads.
type line struct {
	typ, subtype, sessionID gjson.Result
	msg                     message
	hasMsg                  bool
	isError                 bool
	result, apiStatus       gjson.Result // any JSON
	numTurns                int64
	cost                    float64
	hasCost                 bool
	usage                   usage
	hasUsage                bool
	errors                  []gjson.Result
	// system/api_retry
	attempt, maxRetries int64
	errorStatus, err    gjson.Result // any JSON
	// Read leniently, any JSON: the parser before this one ignored them,
	// so their type never made a line raw.
	retryDelay, toolUseResult gjson.Result
}

type message struct {
	id, model gjson.Result
	content   gjson.Result // any JSON
}

type usage struct {
	input, output, cacheRead, cacheCreation int64
}

// block is one entry of a message's content.
type block struct {
	typ, text, thinking, id, name, toolUseID gjson.Result
	input, content                           gjson.Result // any JSON
	isError                                  bool
}

// decode reads the line object v into l. It reports false if a known
// field has a JSON type encoding/json would have refused.
func (l *line) decode(v gjson.Result) bool {
	errs := l.errors[:0]
	*l = line{errors: errs}
	var f fields
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.str(&l.typ, v)
		case "subtype":
			f.str(&l.subtype, v)
		case "session_id":
			f.str(&l.sessionID, v)
		case "message":
			if ok, fresh := f.object(v, &l.hasMsg); ok {
				if fresh {
					l.msg = message{}
				}
				l.msg.decode(v, &f)
			}
		case "is_error":
			f.boolean(&l.isError, v)
		case "result":
			l.result = v
		case "api_error_status":
			l.apiStatus = v
		case "num_turns":
			f.int64(&l.numTurns, v)
		case "total_cost_usd":
			f.optFloat64(&l.cost, &l.hasCost, v)
		case "usage":
			if ok, fresh := f.object(v, &l.hasUsage); ok {
				if fresh {
					l.usage = usage{}
				}
				l.usage.decode(v, &f)
			}
		case "errors":
			// A repeated array is decoded over the previous one, entry by
			// entry, as encoding/json does.
			n := 0
			if f.array(v) {
				v.ForEach(func(_, v gjson.Result) bool {
					if n == len(l.errors) {
						l.errors = append(l.errors, gjson.Result{})
					}
					f.str(&l.errors[n], v)
					n++
					return true
				})
			}
			l.errors = l.errors[:n]
		case "attempt":
			f.int64(&l.attempt, v)
		case "max_retries":
			f.int64(&l.maxRetries, v)
		case "error_status":
			l.errorStatus = v
		case "error":
			l.err = v
		case "retry_delay_ms":
			l.retryDelay = v
		case "tool_use_result":
			l.toolUseResult = v
		}
		return !f.bad
	})
	return !f.bad
}

func (m *message) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			f.str(&m.id, v)
		case "model":
			f.str(&m.model, v)
		case "content":
			m.content = v
		}
		return true
	})
}

func (u *usage) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			f.int64(&u.input, v)
		case "output_tokens":
			f.int64(&u.output, v)
		case "cache_read_input_tokens":
			f.int64(&u.cacheRead, v)
		case "cache_creation_input_tokens":
			f.int64(&u.cacheCreation, v)
		}
		return true
	})
}

// blocks decodes a content array into dst. Like encoding/json it goes on
// past a field of the wrong type (leaving that field as it was) and
// reports it in f; an entry that is not an object is an empty block. It
// reports false if v is not an array.
func blocks(dst []block, v gjson.Result, f *fields) ([]block, bool) {
	dst = dst[:0]
	if !isArray(v) {
		if v.Type != gjson.Null {
			f.bad = true
		}
		return dst, false
	}
	v.ForEach(func(_, v gjson.Result) bool {
		var b block
		if isObject(v) {
			b.decode(v, f)
		} else if v.Type != gjson.Null {
			f.bad = true
		}
		dst = append(dst, b)
		return true
	})
	return dst, true
}

func (b *block) decode(v gjson.Result, f *fields) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.str(&b.typ, v)
		case "text":
			f.str(&b.text, v)
		case "thinking":
			f.str(&b.thinking, v)
		case "id":
			f.str(&b.id, v)
		case "name":
			f.str(&b.name, v)
		case "input":
			b.input = v
		case "tool_use_id":
			f.str(&b.toolUseID, v)
		case "content":
			b.content = v
		case "is_error":
			f.boolean(&b.isError, v)
		}
		return true
	})
}

// optFloat64 keeps a number in a pointer field: null unsets it, a number
// out of float64's range is a type error, as in encoding/json.
func (f *fields) optFloat64(dst *float64, set *bool, v gjson.Result) {
	switch v.Type {
	case gjson.Number:
		n, err := strconv.ParseFloat(v.Raw, 64)
		if err != nil {
			f.bad = true
			return
		}
		*dst, *set = n, true
	case gjson.Null:
		*dst, *set = 0, false
	default:
		f.bad = true
	}
}
