package main

import (
	"io"
	"sort"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// logPrinter prints a session's steps as they arrive the way show does: a
// turn that has ended is folded as render.TurnLines does, so a finished
// session's log reads exactly like show. A turn still running while
// following is printed live through a render.Stream, then closed by its
// end line. Neither is held: the subscription hands over a bounded stretch
// of a turn at a time, and a folded turn goes through a render.TurnWriter
// from the end of the first update that has it.
type logPrinter struct {
	st         *state.Store
	w          io.Writer
	from, only int
	follow     bool
	prog       *cli.Progress
	setup      *setupTail // printed until the first turn starts

	id      string
	pending map[int]*turnLog // turns seen, not printed
	live    map[int]*render.Stream
	done    map[int]bool
	started bool          // a turn has been printed: the next one is set apart
	lines   []render.Line // what the update being taken prints, in order
}

type turnLog struct {
	turn   record.Turn
	events []record.Event     // until it is known how the turn is shown
	w      *render.TurnWriter // once it is folded
}

func (p *logPrinter) wanted(n int) bool {
	return n >= p.from && (p.only == 0 || n == p.only)
}

// update takes one update of the subscription.
func (p *logPrinter) update(u watch.Update) {
	p.prog.Update(u)
	if u.Session == nil {
		return
	}
	p.id = u.ID
	p.print(p.setup.next(u.Session.Turn > 0 || u.Session.Settled()))
	if p.pending == nil {
		p.pending, p.live, p.done = map[int]*turnLog{}, map[int]*render.Stream{}, map[int]bool{}
	}
	for _, st := range u.Timeline() {
		n := st.Turn.N
		if !p.wanted(n) || p.done[n] {
			continue
		}
		switch st.Kind {
		case watch.StepTurnStarted:
			if p.pending[n] == nil && p.live[n] == nil {
				p.pending[n] = &turnLog{turn: st.Turn}
			}
		case watch.StepEvent:
			if s := p.live[n]; s != nil {
				p.emit(s.Event(st.Event)...)
			} else if tl := p.pending[n]; tl != nil && tl.w != nil {
				tl.w.Event(st.Event)
			} else if tl != nil {
				tl.events = append(tl.events, st.Event)
			}
		case watch.StepTurnEnded:
			if p.live[n] != nil {
				p.emit(render.TurnEnd(st.Turn, stderrTail(p.st, p.id, st.Turn))...)
				delete(p.live, n)
			} else if tl := p.pending[n]; tl != nil {
				if tl.w == nil {
					p.fold(tl, st.Turn)
				}
				tl.w.Ended(st.Turn)
				tl.w.End(stderrTail(p.st, p.id, st.Turn))
				delete(p.pending, n)
			}
			p.done[n] = true
		}
	}
	// A turn still running at the end of the update goes live: what it did
	// so far is printed as it would have been live, and the rest follows.
	if p.follow && !u.Session.Settled() {
		for _, n := range sortedTurns(p.pending) {
			tl := p.pending[n]
			if tl.w != nil {
				continue // folded already
			}
			delete(p.pending, n)
			s := &render.Stream{}
			p.live[n] = s
			p.emit(p.gap()...)
			p.emit(render.TurnHeader(tl.turn))
			p.emit(render.Prompt(tl.turn)...)
			for _, ev := range tl.events {
				p.emit(s.Event(ev)...)
			}
		}
	}
	// Any other turn is folded, as show does; what it printed so far goes
	// through the fold now, and the rest as it arrives.
	for _, n := range sortedTurns(p.pending) {
		if tl := p.pending[n]; tl.w == nil {
			t := tl.turn
			if n <= len(u.Session.Turns) {
				t = u.Session.Turns[n-1] // as it stands now: ended, if it has
			}
			p.fold(tl, t)
		}
	}
	p.flush()
}

// emit adds lines to what the update being taken prints.
func (p *logPrinter) emit(l ...render.Line) { p.lines = append(p.lines, l...) }

// flush prints what the update emitted.
func (p *logPrinter) flush() {
	p.print(p.lines)
	p.lines = p.lines[:0]
}

// fold starts folding a turn, its record t: a gap, its header
// and prompt, and the events read so far.
func (p *logPrinter) fold(tl *turnLog, t record.Turn) {
	p.emit(p.gap()...)
	tl.w = render.NewTurnWriter(t, func(l []render.Line) { p.emit(l...) })
	for _, ev := range tl.events {
		tl.w.Event(ev)
	}
	tl.events = nil
}

// finish prints what was read of turns that have not ended (a snapshot of
// a running session, without --follow), folded like show.
func (p *logPrinter) finish() {
	p.print(p.setup.next(true))
	for _, n := range sortedTurns(p.pending) {
		tl := p.pending[n]
		if tl.w == nil {
			p.fold(tl, tl.turn)
		}
		tl.w.End("")
	}
	p.pending = nil
	p.flush()
}

// gap is the blank line between two turns.
func (p *logPrinter) gap() []render.Line {
	if !p.started {
		p.started = true
		return nil
	}
	return []render.Line{{}}
}

func (p *logPrinter) print(lines []render.Line) {
	if len(lines) == 0 {
		return
	}
	p.prog.Print(func() { printLines(p.w, lines) })
}

func sortedTurns(m map[int]*turnLog) []int {
	ns := make([]int, 0, len(m))
	for n := range m {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}
