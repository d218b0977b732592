package main

import (
	"io"
	"sort"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

// logPrinter prints a session's steps as they arrive the way show does: a
// turn that has ended is printed whole, folded by render.TurnLines, so a
// finished session's log reads exactly like show. A turn still running
// while following is printed live through a render.Stream, then closed by
// its end line.
type logPrinter struct {
	st         *sessions.Store
	w          io.Writer
	from, only int
	follow     bool
	prog       *progress

	id      string
	pending map[int]*turnLog // turns seen, not printed
	live    map[int]*render.Stream
	done    map[int]bool
	started bool // a turn has been printed: the next one is set apart
}

type turnLog struct {
	turn   sessions.Turn
	events []sessions.Event
}

func (p *logPrinter) wanted(n int) bool {
	return n >= p.from && (p.only == 0 || n == p.only)
}

// update takes one update of the subscription.
func (p *logPrinter) update(u sessions.Update) {
	p.prog.Update(u)
	if u.Session == nil {
		return
	}
	p.id = u.ID
	if p.pending == nil {
		p.pending, p.live, p.done = map[int]*turnLog{}, map[int]*render.Stream{}, map[int]bool{}
	}
	var lines []render.Line
	for _, st := range u.Timeline() {
		n := st.Turn.N
		if !p.wanted(n) || p.done[n] {
			continue
		}
		switch st.Kind {
		case sessions.StepTurnStarted:
			if p.pending[n] == nil && p.live[n] == nil {
				p.pending[n] = &turnLog{turn: st.Turn}
			}
		case sessions.StepEvent:
			if s := p.live[n]; s != nil {
				lines = append(lines, s.Event(st.Event)...)
			} else if tl := p.pending[n]; tl != nil {
				tl.events = append(tl.events, st.Event)
			}
		case sessions.StepTurnEnded:
			if p.live[n] != nil {
				lines = append(lines, render.TurnEnd(st.Turn, stderrTail(p.st, p.id, st.Turn))...)
				delete(p.live, n)
			} else if tl := p.pending[n]; tl != nil {
				lines = append(lines, p.gap()...)
				lines = append(lines, render.TurnLines(st.Turn, tl.events, stderrTail(p.st, p.id, st.Turn))...)
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
			delete(p.pending, n)
			s := &render.Stream{}
			p.live[n] = s
			lines = append(lines, p.gap()...)
			lines = append(lines, render.TurnHeader(tl.turn))
			lines = append(lines, render.Prompt(tl.turn)...)
			for _, ev := range tl.events {
				lines = append(lines, s.Event(ev)...)
			}
		}
	}
	p.print(lines)
}

// finish prints what was read of turns that have not ended (a snapshot of
// a running session, without --follow), folded like show.
func (p *logPrinter) finish() {
	var lines []render.Line
	for _, n := range sortedTurns(p.pending) {
		tl := p.pending[n]
		lines = append(lines, p.gap()...)
		lines = append(lines, render.TurnLines(tl.turn, tl.events, "")...)
	}
	p.pending = nil
	p.print(lines)
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
