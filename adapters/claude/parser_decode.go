package claude

import "github.com/zwarm/zwarm/adapters/internal/jsonscan"

// line holds the fields of one output line the events need, as raw JSON
// values in the line (see jsonscan.Scanner). The parser reuses one line
// for every line it reads.
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
	retryDelay, toolUseResult, denials, modelUsage []byte
}

type message struct {
	id, model []byte
	usage     usage
	hasUsage  bool
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
func (l *line) decode(s *jsonscan.Scanner, b []byte) bool { return s.Line(b, l.read) }

func (l *line) read(s *jsonscan.Scanner) bool {
	errs, content := l.errors[:0], l.msg.content[:0]
	*l = line{errors: errs}
	l.msg.content = content
	s.Enter()
	for s.More() {
		switch s.Member() {
		case "type":
			s.Str(&l.typ)
		case "subtype":
			s.Str(&l.subtype)
		case "session_id":
			s.Str(&l.sessionID)
		case "message":
			if ok, fresh := s.Object(&l.hasMsg); ok {
				if fresh {
					l.msg = message{content: l.msg.content[:0]}
				}
				l.msg.decode(s)
			}
		case "is_error":
			s.Boolean(&l.isError)
		case "result":
			l.result = s.Value()
		case "api_error_status":
			l.apiStatus = s.Value()
		case "num_turns":
			s.Int64(&l.numTurns)
		case "total_cost_usd":
			s.OptFloat64(&l.cost, &l.hasCost)
		case "usage":
			if ok, fresh := s.Object(&l.hasUsage); ok {
				if fresh {
					l.usage = usage{}
				}
				l.usage.decode(s)
			}
		case "errors":
			// A repeated array is decoded over the previous one, entry by
			// entry, as encoding/json does.
			n := 0
			if s.Array() {
				for s.More() {
					if n == len(l.errors) {
						l.errors = append(l.errors, nil)
					}
					s.Str(&l.errors[n])
					n++
				}
			}
			l.errors = l.errors[:n]
		case "attempt":
			s.Int64(&l.attempt)
		case "max_retries":
			s.Int64(&l.maxRetries)
		case "error_status":
			l.errorStatus = s.Value()
		case "error":
			l.err = s.Value()
		case "retry_delay_ms":
			l.retryDelay = s.Value()
		case "tool_use_result":
			l.toolUseResult = s.Value()
		case "permission_denials":
			l.denials = s.Value()
		case "modelUsage":
			l.modelUsage = s.Value()
		default:
			s.Skip()
		}
	}
	return s.Done() && !s.Mismatch
}

func (m *message) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "id":
			s.Str(&m.id)
		case "model":
			s.Str(&m.model)
		case "content":
			m.content, m.isArray, m.mismatch = blocks(s, m.content)
		case "usage":
			if ok, fresh := s.Object(&m.hasUsage); ok {
				if fresh {
					m.usage = usage{}
				}
				m.usage.decode(s)
			}
		default:
			s.Skip()
		}
	}
}

func (u *usage) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "input_tokens":
			s.Int64(&u.input)
		case "output_tokens":
			s.Int64(&u.output)
		case "cache_read_input_tokens":
			s.Int64(&u.cacheRead)
		case "cache_creation_input_tokens":
			s.Int64(&u.cacheCreation)
		default:
			s.Skip()
		}
	}
}

// blocks reads the next value, a content array, into dst. Like
// encoding/json it goes on past a field of the wrong type (leaving that
// field as it was) and reports it as a mismatch; an entry that is not an
// object is an empty block. isArray is false if the value is not an
// array, which is a mismatch unless it is null. A mismatch here is not
// one of the line: the content was decoded apart from it.
func blocks(s *jsonscan.Scanner, dst []block) (_ []block, isArray, mismatch bool) {
	dst = dst[:0]
	outer := s.Mismatch
	s.Mismatch = false
	switch s.Kind() {
	case '[':
		isArray = true
		s.Enter()
		for s.More() {
			var b block
			if s.Entry() {
				b.decode(s)
			}
			dst = append(dst, b)
		}
	case 'n':
		s.Skip()
	default:
		s.WrongType()
	}
	mismatch, s.Mismatch = s.Mismatch, outer
	return dst, isArray, mismatch
}

func (b *block) decode(s *jsonscan.Scanner) {
	for s.More() {
		switch s.Member() {
		case "type":
			s.Str(&b.typ)
		case "text":
			s.Str(&b.text)
		case "thinking":
			s.Str(&b.thinking)
		case "id":
			s.Str(&b.id)
		case "name":
			s.Str(&b.name)
		case "input":
			b.input = s.Value()
		case "tool_use_id":
			s.Str(&b.toolUseID)
		case "content":
			b.content = s.Value()
		case "is_error":
			s.Boolean(&b.isError)
		default:
			s.Skip()
		}
	}
}
