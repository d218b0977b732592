package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// TurnLog is one turn with the events its agent printed.
type TurnLog struct {
	Turn   record.Turn    `json:"turn"`
	Events []record.Event `json:"events"`
}

// Message is one message of the conversation: a prompt or an agent reply.
type Message struct {
	Turn int    `json:"turn"`
	Role string `json:"role"` // "user" or "assistant"
	Text string `json:"text"`
}

// Transcript parses every turn of a session into memory. For a session of
// any size, Turns and ReadTurn read it turn by turn, event by event.
func Transcript(ctx context.Context, m Source, idOrPrefix string) (*record.Session, []TurnLog, error) {
	s, err := m.Get(ctx, idOrPrefix)
	if err != nil {
		return nil, nil, err
	}
	turns := Turns(m, s)
	out := make([]TurnLog, 0, len(turns))
	for _, t := range turns {
		tl := TurnLog{Turn: t}
		if err := ReadTurn(ctx, m, s, t.N, func(ev record.Event) { tl.Events = append(tl.Events, ev) }); err != nil {
			return s, nil, err
		}
		out = append(out, tl)
	}
	return s, out, nil
}

// Turns lists a session's turns, those of a Python zwarm record included.
func Turns(m Source, s *record.Session) []record.Turn {
	if s.Legacy {
		return state.LegacyTurns(m.Store().TurnsDir(s.ID), s)
	}
	return s.Turns
}

// ReadTurn parses turn n of s, a record just read, passing each event to
// fn as it is read: nothing of the turn is held. A turn that has not ended
// is read as far as its last complete line.
func ReadTurn(ctx context.Context, m Source, s *record.Session, n int, fn func(record.Event)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ad, err := m.Adapters().Lookup(s.Adapter)
	if err != nil {
		return err
	}
	final := s.Legacy || n <= len(s.Turns) && s.Turns[n-1].EndedAt != nil
	path := m.Store().TurnPath(s.ID, n)
	if final && n <= len(s.Turns) && outputLost(path, s.Turns[n-1]) {
		// It read as a turn in which nothing happened.
		fn(record.Event{Type: record.EventError, Text: fmt.Sprintf("the turn's output, %s, is gone: what the agent printed in it is lost (its last message was %q)",
			path, s.Turns[n-1].LastMessage)})
		return nil
	}
	r := NewTurnReader(path, ad.NewParser(), 0)
	defer r.Close()
	return r.Read(final, fn)
}

// outputLost says the output file of turn t, at path, is gone although
// the record says the agent spoke in it (its last message, its usage).
func outputLost(path string, t record.Turn) bool {
	if t.LastMessage == "" && t.Usage.TotalTokens == 0 {
		return false
	}
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// Messages is the conversation: each turn's prompt and the agent's replies.
func Messages(s *record.Session, turns []TurnLog) []Message {
	if s.Legacy && len(s.LegacyMessages) > 0 {
		out := make([]Message, 0, len(s.LegacyMessages))
		for _, lm := range s.LegacyMessages {
			out = append(out, Message{Role: lm.Role, Text: lm.Content})
		}
		return out
	}
	var out []Message
	for _, tl := range turns {
		if tl.Turn.Prompt != "" {
			out = append(out, Message{Turn: tl.Turn.N, Role: "user", Text: tl.Turn.Prompt})
		}
		for _, ev := range tl.Events {
			if ev.Type == record.EventMessage && ev.Phase != record.PhaseStarted && ev.Phase != record.PhaseUpdated {
				out = append(out, Message{Turn: tl.Turn.N, Role: "assistant", Text: ev.Text})
			}
		}
	}
	return out
}

// RawTurn returns the path of turn n's raw output, checking it exists.
func RawTurn(ctx context.Context, m Source, idOrPrefix string, n int) (string, error) {
	s, err := m.Get(ctx, idOrPrefix)
	if err != nil {
		return "", err
	}
	p := m.Store().TurnPath(s.ID, n)
	if _, err := os.Stat(p); err != nil {
		last := s.Turn
		if s.Legacy {
			last = len(state.LegacyTurns(filepath.Dir(p), s))
		}
		return "", config.Invalidf("session %s has no turn %d (it has %d)", record.ShortID(s.ID), n, last)
	}
	return p, nil
}
