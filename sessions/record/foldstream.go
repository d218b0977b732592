package record

import (
	"hash/maphash"
	"math/bits"
)

// StepFolder is Steps for a stream: it takes a turn's events one at a time
// and emits each step once it is complete (or, for an item that never
// completes, when the turn ends), in the order the items began, so a turn
// of any size is rendered without holding it. A step waits only behind an
// earlier item that is still unfinished; should more than the limit of
// finished steps pile up behind one (an agent's plan, updated all through
// a long turn), they go out ahead of it, and it follows when it completes.
// With no such pile-up, what it emits is exactly what Steps returns.
type StepFolder struct {
	// MaxSteps and MaxBytes bound what waits; zero means 1,000 steps and
	// 16 MiB of text.
	MaxSteps, MaxBytes int

	buf  []*foldEntry
	free []*foldEntry
	at   map[string]*foldEntry // item → its pending step
	// sent and older hold digests of the finished steps emitted: the last
	// sentLimit to 2×sentLimit of them, so memory stays bounded in a turn
	// of any length, and every plan, which an agent restates at the end.
	sent, older map[sentKey]uint64
	bytes       int
}

// sentKey is an item's step: an item id names one step of each type.
type sentKey struct {
	item string
	typ  EventType
}

const sentLimit = 4096

type foldEntry struct {
	ev   Event
	key  string
	done bool
	out  bool // emitted
}

func (f *StepFolder) limits() (int, int) {
	steps, bytes := f.MaxSteps, f.MaxBytes
	if steps <= 0 {
		steps = 1000
	}
	if bytes <= 0 {
		bytes = 16 << 20
	}
	return steps, bytes
}

func eventBytes(ev *Event) int {
	return len(ev.Text) + len(ev.Output) + len(ev.Command) + len(ev.Input)
}

// Add takes the next event of the turn; emit receives the steps that are
// ready, in order.
func (f *StepFolder) Add(ev Event, emit func(Event)) {
	switch ev.Type {
	case EventThreadStarted, EventTurnStarted, EventUnknown:
		return
	}
	done := ev.Phase == "" || ev.Phase == PhaseCompleted
	if ev.ItemID != "" && ev.Phase != "" {
		// An agent may report a finished item again (codex repeats its plan
		// at the turn's end): the same again is nothing new.
		if d, ok := f.sentDigest(sentKey{ev.ItemID, ev.Type}); ok && d == digest(&ev) {
			return
		}
		if e, ok := f.at[ev.ItemID]; ok && e.ev.Type == ev.Type {
			f.bytes += eventBytes(&ev) - eventBytes(&e.ev)
			e.ev, e.done = ev, done
			f.drain(emit)
			return
		}
	}
	if done && len(f.buf) == 0 {
		// Nothing waits ahead of it: out at once, with no entry to make.
		f.finish(&ev, true, emit)
		return
	}
	e := f.entry()
	e.ev, e.done = ev, done
	if ev.ItemID != "" && ev.Phase != "" {
		if f.at == nil {
			f.at = map[string]*foldEntry{}
		}
		f.at[ev.ItemID] = e // a new item with an old id ends the old one's updates
	}
	f.buf = append(f.buf, e)
	f.bytes += eventBytes(&ev)
	f.drain(emit)
}

// Flush emits everything still waiting, unfinished items in their latest
// state: the turn has ended.
func (f *StepFolder) Flush(emit func(Event)) {
	for _, e := range f.buf {
		if !e.out {
			emit(e.ev)
		}
	}
	f.buf, f.at, f.sent, f.older, f.free, f.bytes = nil, nil, nil, nil, nil, 0
}

// drain emits the finished steps at the front, then, over the limits, the
// finished ones behind unfinished ones, then (never, in practice)
// unfinished ones.
func (f *StepFolder) drain(emit func(Event)) {
	i := 0
	for i < len(f.buf) && (f.buf[i].done || f.buf[i].out) {
		if !f.buf[i].out {
			f.send(f.buf[i], emit)
		}
		f.recycle(f.buf[i])
		i++
	}
	f.buf = f.buf[i:]
	maxSteps, maxBytes := f.limits()
	if len(f.buf) <= maxSteps && f.bytes <= maxBytes {
		return
	}
	// Over the limits: everything finished goes out, and unfinished steps
	// too down to half the limits, so the next pile-up is as far away.
	for _, e := range f.buf {
		if e.done && !e.out {
			f.send(e, emit)
		}
	}
	kept := f.buf[:0]
	for _, e := range f.buf {
		if !e.out {
			kept = append(kept, e)
		} else {
			f.recycle(e)
		}
	}
	f.buf = kept
	for len(f.buf) > 0 && (len(f.buf) > maxSteps/2 || f.bytes > maxBytes/2) {
		e := f.buf[0]
		f.buf = f.buf[1:]
		f.send(e, emit)
	}
}

func (f *StepFolder) send(e *foldEntry, emit func(Event)) {
	e.out = true
	f.bytes -= eventBytes(&e.ev)
	if f.at[e.ev.ItemID] == e {
		delete(f.at, e.ev.ItemID)
	}
	f.finish(&e.ev, e.done, emit)
}

// finish emits a step, remembering it if it is a finished item's.
func (f *StepFolder) finish(ev *Event, done bool, emit func(Event)) {
	if done && ev.ItemID != "" && ev.Phase != "" {
		f.remember(sentKey{ev.ItemID, ev.Type}, digest(ev))
	}
	emit(*ev)
}

// entry and recycle reuse the entries of emitted steps: one per step of a
// long turn was most of what folding allocated.
func (f *StepFolder) entry() *foldEntry {
	if n := len(f.free); n > 0 {
		e := f.free[n-1]
		f.free = f.free[:n-1]
		return e
	}
	return new(foldEntry)
}

// recycle takes back an entry that is out and no longer in f.at. The free
// list holds up to a pile-up's worth: behind an item that stays open all
// turn (an agent's plan), steps wait in piles of the step limit, again and
// again.
func (f *StepFolder) recycle(e *foldEntry) {
	if maxSteps, _ := f.limits(); len(f.free) < maxSteps {
		*e = foldEntry{}
		f.free = append(f.free, e)
	}
}

func (f *StepFolder) sentDigest(k sentKey) (uint64, bool) {
	if d, ok := f.sent[k]; ok {
		return d, true
	}
	d, ok := f.older[k]
	return d, ok
}

func (f *StepFolder) remember(k sentKey, d uint64) {
	if len(f.sent) >= sentLimit {
		f.older, f.sent = f.sent, f.older // the oldest are forgotten
		if f.sent == nil {
			f.sent = make(map[sentKey]uint64, sentLimit)
		}
		clear(f.sent)
		for k, d := range f.older {
			if k.typ == EventTodoList {
				f.sent[k] = d
			}
		}
	}
	if f.sent == nil {
		f.sent = make(map[sentKey]uint64)
	}
	f.sent[k] = d
}

// digestSeed keys the digests of one process; they are never stored.
var digestSeed = maphash.MakeSeed()

// digest sums up what a step shows, to recognise the same step reported
// twice without keeping it. Each field is hashed whole (one call for a
// command's megabytes of output) and the hashes are mixed in order.
func digest(ev *Event) uint64 {
	var d uint64
	mix := func(x uint64) { d = (bits.RotateLeft64(d, 23) ^ x) * 0x9e3779b97f4a7c15 }
	str := func(s string) { mix(maphash.String(digestSeed, s)) }
	str(ev.Text)
	str(ev.Command)
	str(ev.Output)
	str(ev.Status)
	str(ev.Tool)
	str(ev.Input)
	if ev.ExitCode != nil {
		mix(1<<32 | uint64(uint32(*ev.ExitCode)))
	} else {
		mix(0)
	}
	mix(uint64(len(ev.Changes)))
	for _, c := range ev.Changes {
		str(c.Path)
		str(c.Kind)
	}
	mix(uint64(len(ev.Todos)))
	for _, t := range ev.Todos {
		str(t.Text)
		if t.Completed {
			mix(1)
		} else {
			mix(2)
		}
	}
	return d
}
