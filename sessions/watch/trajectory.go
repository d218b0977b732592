package watch

import (
	"bytes"
	"context"
	"os"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// TurnEvents is what a Trajectory read of one turn found.
type TurnEvents struct {
	Turn record.Turn
	// First is set the first time the turn is reported.
	First bool
	// Skipped is how many bytes of the turn file were not read because
	// there were more than the window: at its start when First, else
	// right before these events (the agent wrote more than a window since
	// the previous read).
	Skipped int64
	Events  []record.Event
}

// Trajectory follows one session's events incrementally: each Read returns
// only what the agent wrote since the previous one, for every turn. It is
// what live views (the dashboard, logs -f) build on. Turn files larger than
// the window are read from their last window bytes only, so selecting a
// session with a 100 MB turn costs the same as a small one; so is what a
// running turn grew by since the previous read, when that is more than the
// window: a reader that falls behind an agent printing gigabytes catches
// up with one window's work, whatever it missed.
//
// Without a window nothing is skipped, and a Read takes at most
// readBudget bytes of each turn: Behind then says there is more to read,
// so a reader of a turn that is gigabytes long holds one stretch of its
// events at a time, never the whole turn.
type Trajectory struct {
	m       Source
	id      string
	opt     TrajectoryOptions
	readers map[int]*TurnReader
	done    map[int]bool
	behind  map[int]bool // turns with more to read than the last Read took
}

// readBudget is how much of a turn file a windowless Read takes at most.
const readBudget = 1 << 20

// TrajectoryOptions chooses what a Trajectory reads.
type TrajectoryOptions struct {
	// Window bounds how much of each turn file is read (its last Window
	// bytes, from a line boundary); 0 reads turn files whole.
	Window int64
	// From is the first turn to read; Only, if set, the only one.
	From, Only int
}

// NewTrajectory follows session id (a full id).
func NewTrajectory(m Source, id string, opt TrajectoryOptions) *Trajectory {
	return &Trajectory{m: m, id: id, opt: opt, readers: map[int]*TurnReader{}, done: map[int]bool{},
		behind: map[int]bool{}}
}

// Read returns the session's current record and, per turn, the events
// appended since the last Read. A turn that has ended is read to its end,
// unterminated last line included, and then never again.
func (t *Trajectory) Read(ctx context.Context) (*record.Session, []TurnEvents, error) {
	s, err := t.m.Get(ctx, t.id)
	if err != nil {
		return nil, nil, err
	}
	out, err := t.read(ctx, s)
	return s, out, err
}

// read reads the new events of s, a record of the session just loaded.
func (t *Trajectory) read(ctx context.Context, s *record.Session) ([]TurnEvents, error) {
	ad, err := t.m.Adapters().Lookup(s.Adapter)
	if err != nil {
		return nil, err
	}
	turns := s.Turns
	if s.Legacy {
		turns = state.LegacyTurns(t.m.Store().TurnsDir(s.ID), s)
	}
	var out []TurnEvents
	for _, turn := range turns {
		if t.done[turn.N] || turn.N < t.opt.From || t.opt.Only != 0 && turn.N != t.opt.Only {
			continue
		}
		te := TurnEvents{Turn: turn}
		rd, ok := t.readers[turn.N]
		if !ok {
			path := t.m.Store().TurnPath(s.ID, turn.N)
			te.First, te.Skipped = true, tailStart(path, t.opt.Window)
			rd = NewTurnReader(path, ad.NewParser(), te.Skipped)
			t.readers[turn.N] = rd
		} else if next, skipped := t.skipAhead(rd, ad); skipped > 0 {
			rd, te.Skipped = next, skipped
			t.readers[turn.N] = rd
		}
		ended := turn.EndedAt != nil || s.Legacy
		if err := ctx.Err(); err != nil {
			return out, err
		}
		limit := int64(0)
		if t.opt.Window <= 0 {
			limit = readBudget
		}
		more, err := rd.ReadSome(ended, limit, func(ev record.Event) { te.Events = append(te.Events, ev) })
		if err != nil {
			return out, err
		}
		if more {
			t.behind[turn.N] = true
		} else {
			delete(t.behind, turn.N)
		}
		if ended && !more {
			rd.Close()
			delete(t.readers, turn.N)
			t.done[turn.N] = true
		}
		if te.First || len(te.Events) > 0 {
			out = append(out, te)
		}
	}
	return out, nil
}

// Behind reports whether the last Read left something to read in a turn
// file (a windowless Read takes at most readBudget bytes of each): the
// next Read goes on with it, whether or not the file changes meanwhile.
func (t *Trajectory) Behind() bool { return len(t.behind) > 0 }

// behindOn reports whether turn n has more to read than the last Read took.
func (t *Trajectory) behindOn(n int) bool { return t.behind[n] }

// skipAhead moves rd to the last window of its file when more than a
// window is left to read, and says how many bytes it skipped (0: rd reads
// on where it was).
func (t *Trajectory) skipAhead(rd *TurnReader, ad agent.Adapter) (*TurnReader, int64) {
	if t.opt.Window <= 0 {
		return rd, 0
	}
	fi, err := os.Stat(rd.path)
	if err != nil || fi.Size()-rd.Offset() <= t.opt.Window {
		return rd, 0
	}
	start := tailStart(rd.path, t.opt.Window)
	if start <= rd.Offset() {
		return rd, 0
	}
	skipped := start - rd.Offset()
	rd.Close()
	return NewTurnReader(rd.path, ad.NewParser(), start), skipped
}

// Close releases the open turn files.
func (t *Trajectory) Close() {
	for n, rd := range t.readers {
		rd.Close()
		delete(t.readers, n)
	}
}

// tailStart is where to start reading a file so that at most window bytes
// are read: the first line boundary after size-window, or 0.
func tailStart(path string, window int64) int64 {
	if window <= 0 {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= window {
		return 0
	}
	start := fi.Size() - window
	buf := make([]byte, 64<<10)
	for off := start; off < fi.Size(); off += int64(len(buf)) {
		n, _ := f.ReadAt(buf, off)
		if n <= 0 {
			break
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1
		}
	}
	return fi.Size()
}
