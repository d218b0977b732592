package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Batcher is a runner that submits many sessions' supervisors with one
// call to its engine (Slurm: one job array), rather than one call each.
type Batcher interface {
	// StartBatch submits specs, which ask the same resources, together
	// as the batch named batch (each of its jobs bears that name, as a
	// lone job bears its session's) and returns their job ids in specs'
	// order. An engine refusing them is an error carrying its words;
	// nothing then runs.
	StartBatch(ctx context.Context, batch string, specs []Spec) ([]string, error)
	// FindBatch is Find for a batch of n jobs whose submission got no
	// answer: their ids in the order submitted, or none.
	FindBatch(ctx context.Context, batch string, n int) ([]string, error)
}

// Submitted is where a submission put a session's supervisor.
type Submitted struct {
	ID      string // the job's id in the engine
	Cluster string // the cluster it was submitted to ("" when not known)
	Batch   string // the batch it was submitted in; "" for a job of its own
}

// A Batch gathers the submissions of workers started together (spawn -n,
// an orchestrator's delegate calls of one reply), so that a Batcher makes
// them with one call to its engine. Each worker starts with one of its
// slots in its context (WithSlot), and either submits through it (Submit
// does), which waits until every slot has submitted or let go, or lets
// go (Leave) when it will not submit: refused before it came to that,
// or run on this host. A slot that does neither within gatherLimit of a
// submission does not hold the others: they go without it, and it goes
// alone.
type Batch struct {
	mu      sync.Mutex
	open    int      // slots that have neither submitted nor let go
	waiting []*entry // submissions gathered and not made yet
	gone    bool     // the gathered ones were made: any later goes alone
}

// gatherLimit is how long a submission waits for the rest of its batch.
var gatherLimit = 10 * time.Second

// Slot is one worker's place in a Batch.
type Slot struct {
	b    *Batch
	used bool // submitted or let go, under b.mu
}

type entry struct {
	ctx      context.Context
	r        Runner
	spec     Spec
	previous string
	warn     func(error)
	done     chan struct{}
	got      Submitted
	err      error
}

// NewBatch is a batch of n workers' submissions, and their n slots.
func NewBatch(n int) []*Slot {
	b := &Batch{open: n}
	slots := make([]*Slot, n)
	for i := range slots {
		slots[i] = &Slot{b: b}
	}
	return slots
}

type slotKey struct{}

// WithSlot is ctx carrying slot: a submission made with it joins its
// batch.
func WithSlot(ctx context.Context, slot *Slot) context.Context {
	return context.WithValue(ctx, slotKey{}, slot)
}

// Leave lets go of ctx's slot, if it has one that has not submitted: the
// rest of its batch no longer waits for it. Whoever starts a worker with
// a slot calls it once the worker is started or refused.
func Leave(ctx context.Context) {
	slot, _ := ctx.Value(slotKey{}).(*Slot)
	if slot == nil {
		return
	}
	b := slot.b
	b.mu.Lock()
	if slot.used {
		b.mu.Unlock()
		return
	}
	slot.used = true
	b.open--
	b.flushIfComplete() // unlocks
}

// join adds e to its slot's batch and makes the batch's submissions once
// e completes it, or waits for whoever does; alone is false when e went
// with its batch (its results are in e).
func (slot *Slot) join(e *entry) (alone bool) {
	b := slot.b
	b.mu.Lock()
	if slot.used || b.gone {
		b.mu.Unlock()
		return true
	}
	slot.used = true
	b.open--
	b.waiting = append(b.waiting, e)
	b.flushIfComplete() // unlocks
	t := time.NewTimer(gatherLimit)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
		b.mu.Lock()
		b.open = 0 // the slots still open go alone
		b.flushIfComplete()
		<-e.done
	}
	return false
}

// flushIfComplete makes the gathered submissions when no slot is open;
// called with b.mu held, it releases it.
func (b *Batch) flushIfComplete() {
	if b.open > 0 || b.gone {
		b.mu.Unlock()
		return
	}
	b.gone = true
	todo := b.waiting
	b.waiting = nil
	b.mu.Unlock()
	for _, group := range groups(todo) {
		submitGroup(group)
	}
}

// groups splits entries into those one call can submit: the same kind of
// runner (one Manager's runners of a kind have its one config), asking
// the same resources.
func groups(entries []*entry) [][]*entry {
	index := map[string]int{}
	var out [][]*entry
	for _, e := range entries {
		key := fmt.Sprintf("%T|%v", e.r, resourceKey(e.spec.Resources))
		if _, ok := e.r.(Batcher); !ok {
			key += "|" + e.spec.SessionID // one call each
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	return out
}

func resourceKey(res map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(res)) {
		fmt.Fprintf(&b, "%s=%s;", k, res[k])
	}
	return b.String()
}

// submitGroup submits entries (one runner, one ask) with one call when
// there are several, and tells each its result.
func submitGroup(entries []*entry) {
	defer func() {
		for _, e := range entries {
			close(e.done)
		}
	}()
	first := entries[0]
	if len(entries) == 1 {
		first.got, first.err = submitAlone(first.ctx, first.r, first.spec, first.previous, first.warn)
		return
	}
	specs := make([]Spec, len(entries))
	for i, e := range entries {
		specs[i] = e.spec
	}
	got, err := submitBatch(first.ctx, first.r, first.r.(Batcher), specs, first.warn)
	for i, e := range entries {
		if err != nil {
			e.err = err
			continue
		}
		e.got = got[i]
	}
}

// submitBatch submits specs as one batch, bounded as Submit is: a
// submission that got no answer is resolved by looking for the batch.
func submitBatch(ctx context.Context, r Runner, b Batcher, specs []Spec, warn func(error)) ([]Submitted, error) {
	name, err := batchName()
	if err != nil {
		return nil, err
	}
	limit := limitOf(r)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	cluster := r.Cluster(sctx)
	ids, err := b.StartBatch(sctx, name, specs)
	if err != nil && (sctx.Err() != nil || errors.Is(err, ErrUnreachable)) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), findLimit)
		defer cancel()
		found, ferr := b.FindBatch(fctx, name, len(specs))
		switch {
		case ferr != nil:
			err = fmt.Errorf("%w; nor could zwarm ask whether they were queued all the same (%v): if they were, they will find no session to run", err, ferr)
		case len(found) == len(specs):
			ids, err = found, nil
			warn(fmt.Errorf("the scheduler did not answer within %s; it had queued the %d jobs of batch %s all the same, which zwarm follows", limit, len(ids), name))
		}
	}
	if err != nil {
		return nil, err
	}
	if len(ids) != len(specs) {
		return nil, fmt.Errorf("submitting %d workers as one batch gave %d job ids", len(specs), len(ids))
	}
	out := make([]Submitted, len(ids))
	for i, id := range ids {
		out[i] = Submitted{ID: id, Cluster: cluster, Batch: name}
	}
	return out, nil
}

// batchName is a new batch's name: random, so that no two batches, on
// any cluster, share one.
func batchName() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("name a batch: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
