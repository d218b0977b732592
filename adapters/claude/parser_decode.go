package claude

import (
	"iter"
	"strconv"
)

// line holds the fields of one output line the events need, as raw JSON
// values in the line (see scanner). The parser reuses one line for every
// line it reads.
type line struct {
	typ, subtype, sessionID []byte
	msg                     message
	hasMsg                  bool
	isError                 bool
	result, apiStatus       []byte // any JSON
	numTurns                int64
	cost                    float64
	hasCost                 bool
	usage                   usage
	hasUsage                bool
	errors                  [][]byte
	// system/api_retry
	attempt, maxRetries int64
	errorStatus, err    []byte // any JSON
	// Read leniently, any JSON: the parser before this one ignored them,
	// so their type never made a line raw.
	retryDelay, toolUseResult []byte
}

type message struct {
	id, model []byte
	// content, any JSON, read as an array of blocks while the line is
	// read: isArray says whether it was one, mismatch whether a block had
	// a field of the wrong type (which encoding/json skipped).
	content           []block
	isArray, mismatch bool
}

type usage struct {
	input, output, cacheRead, cacheCreation int64
}

// block is one entry of a message's content.
type block struct {
	typ, text, thinking, id, name, toolUseID []byte
	input, content                           []byte // any JSON
	isError                                  bool
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
	errs, content := l.errors[:0], l.msg.content[:0]
	*l = line{errors: errs}
	l.msg.content = content
	s.enter()
	for s.more() {
		switch s.member() {
		case "type":
			s.str(&l.typ)
		case "subtype":
			s.str(&l.subtype)
		case "session_id":
			s.str(&l.sessionID)
		case "message":
			if ok, fresh := s.object(&l.hasMsg); ok {
				if fresh {
					l.msg = message{content: l.msg.content[:0]}
				}
				l.msg.decode(s)
			}
		case "is_error":
			s.boolean(&l.isError)
		case "result":
			l.result = s.value()
		case "api_error_status":
			l.apiStatus = s.value()
		case "num_turns":
			s.int64(&l.numTurns)
		case "total_cost_usd":
			s.optFloat64(&l.cost, &l.hasCost)
		case "usage":
			if ok, fresh := s.object(&l.hasUsage); ok {
				if fresh {
					l.usage = usage{}
				}
				l.usage.decode(s)
			}
		case "errors":
			// A repeated array is decoded over the previous one, entry by
			// entry, as encoding/json does.
			n := 0
			if s.array() {
				for s.more() {
					if n == len(l.errors) {
						l.errors = append(l.errors, nil)
					}
					s.str(&l.errors[n])
					n++
				}
			}
			l.errors = l.errors[:n]
		case "attempt":
			s.int64(&l.attempt)
		case "max_retries":
			s.int64(&l.maxRetries)
		case "error_status":
			l.errorStatus = s.value()
		case "error":
			l.err = s.value()
		case "retry_delay_ms":
			l.retryDelay = s.value()
		case "tool_use_result":
			l.toolUseResult = s.value()
		default:
			s.skip()
		}
	}
	return s.done() && !s.mismatch
}

func (m *message) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "id":
			s.str(&m.id)
		case "model":
			s.str(&m.model)
		case "content":
			m.content, m.isArray, m.mismatch = s.blocks(m.content)
		default:
			s.skip()
		}
	}
}

func (u *usage) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "input_tokens":
			s.int64(&u.input)
		case "output_tokens":
			s.int64(&u.output)
		case "cache_read_input_tokens":
			s.int64(&u.cacheRead)
		case "cache_creation_input_tokens":
			s.int64(&u.cacheCreation)
		default:
			s.skip()
		}
	}
}

// blocks reads the next value, a content array, into dst. Like
// encoding/json it goes on past a field of the wrong type (leaving that
// field as it was) and reports it as a mismatch; an entry that is not an
// object is an empty block. isArray is false if the value is not an
// array, which is a mismatch unless it is null. A mismatch here is not
// one of the line: the content was decoded apart from it.
func (s *scanner) blocks(dst []block) (_ []block, isArray, mismatch bool) {
	dst = dst[:0]
	outer := s.mismatch
	s.mismatch = false
	switch s.kind() {
	case '[':
		isArray = true
		s.enter()
		for s.more() {
			var b block
			if s.entry() {
				b.decode(s)
			}
			dst = append(dst, b)
		}
	case 'n':
		s.skip()
	default:
		s.wrongType()
	}
	mismatch, s.mismatch = s.mismatch, outer
	return dst, isArray, mismatch
}

func (b *block) decode(s *scanner) {
	for s.more() {
		switch s.member() {
		case "type":
			s.str(&b.typ)
		case "text":
			s.str(&b.text)
		case "thinking":
			s.str(&b.thinking)
		case "id":
			s.str(&b.id)
		case "name":
			s.str(&b.name)
		case "input":
			b.input = s.value()
		case "tool_use_id":
			s.str(&b.toolUseID)
		case "content":
			b.content = s.value()
		case "is_error":
			s.boolean(&b.isError)
		default:
			s.skip()
		}
	}
}

// optFloat64 reads a number into a pointer field: null unsets it, a
// number out of float64's range is a type error, as in encoding/json.
func (s *scanner) optFloat64(dst *float64, set *bool) {
	switch s.kind() {
	case '0':
		n, err := strconv.ParseFloat(view(s.value()), 64)
		if err != nil {
			s.mismatch = true
			return
		}
		*dst, *set = n, true
	case 'n':
		s.skip()
		*dst, *set = 0, false
	default:
		s.wrongType()
	}
}

// each yields the entries of the array raw, a valid value, as raw JSON;
// nothing if raw is not an array. The loop body must read with another
// scanner.
func (s *scanner) each(raw []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !isArray(raw) {
			return
		}
		s.reset(raw)
		s.enter()
		for s.more() {
			if !yield(s.value()) {
				return
			}
		}
	}
}
