package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// JobPoll is how long what a runner said of its jobs is taken as true: a
// reader asks the engine at most once per JobPoll, for every job asked
// about of late together, however many sessions it looks at.
var JobPoll = time.Second

// PollOf is how long a runner's answer holds: its own poll interval if
// it has one, else JobPoll.
func PollOf(r Runner) time.Duration {
	if p, ok := r.(interface{ Poll() time.Duration }); ok && p.Poll() > 0 {
		return p.Poll()
	}
	return JobPoll
}

// jobAskLimit bounds one question to an engine: a controller that is
// down can keep its client retrying for many seconds, and a listing must
// not wait for that to say it is unreachable.
const jobAskLimit = 3 * time.Second

// unreachableHold is how long an engine that did not answer is taken as
// unreachable before it is asked again: a reader does not spend a bounded
// wait on each of its sessions in turn, nor on each poll.
const unreachableHold = 10 * time.Second

// jobAskedFor is how long a job stays in the set asked about together
// after a reader last asked for it.
const jobAskedFor = 30 * time.Second

// Cache is what runners said of jobs, by runner.
type Cache struct {
	// StateDir, if set, is where the cache keeps what each engine last
	// said for the next reader (Seen).
	StateDir string

	mu       sync.Mutex
	byRunner map[string]*runnerJobs
}

type runnerJobs struct {
	name    string
	at      time.Time
	seen    Seen // as last noted in the state dir
	states  map[string]JobState
	err     error
	queried map[string]bool      // the ids the last answer was about
	asked   map[string]time.Time // ids asked about of late, and when
}

// State is what the runner says of job id: ok is false when the engine no
// longer knows it.
func (c *Cache) State(ctx context.Context, name string, r Runner, id string, now time.Time) (JobState, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rj := c.ask(ctx, name, r, []string{id}, now)
	if rj.err != nil {
		return JobState{}, false, rj.err
	}
	st, ok := rj.states[id]
	return st, ok, nil
}

// ask makes what the cache holds of a runner's jobs fresh enough for ids:
// the engine is asked again, about every job asked about of late, when
// its last answer is older than the poll interval or did not cover ids.
// Callers hold mu.
func (c *Cache) ask(ctx context.Context, name string, r Runner, ids []string, now time.Time) *runnerJobs {
	rj := c.of(name)
	hold := PollOf(r)
	if errors.Is(rj.err, ErrUnreachable) {
		hold = max(hold, unreachableHold)
	}
	fresh := now.Sub(rj.at) < hold
	for _, id := range ids {
		fresh = fresh && rj.queried[id]
		rj.asked[id] = now
	}
	if !fresh {
		rj.refresh(ctx, r, now, c.StateDir)
	}
	return rj
}

// of is a runner's entry, made on first use. Callers hold mu.
func (c *Cache) of(name string) *runnerJobs {
	if c.byRunner == nil {
		c.byRunner = map[string]*runnerJobs{}
	}
	rj := c.byRunner[name]
	if rj == nil {
		rj = &runnerJobs{name: name, asked: map[string]time.Time{}}
		c.byRunner[name] = rj
	}
	return rj
}

// refresh asks the engine once about every job asked about of late.
func (rj *runnerJobs) refresh(ctx context.Context, r Runner, now time.Time, stateDir string) {
	maps.DeleteFunc(rj.asked, func(_ string, at time.Time) bool { return now.Sub(at) > jobAskedFor })
	ids := slices.Sorted(maps.Keys(rj.asked))
	ctx, cancel := context.WithTimeout(ctx, jobAskLimit)
	defer cancel()
	began := time.Now()
	rj.states, rj.err = r.Jobs(ctx, ids)
	if rj.err != nil && ctx.Err() != nil && !errors.Is(rj.err, ErrUnreachable) {
		rj.err = fmt.Errorf("%w: no answer within %s", ErrUnreachable, jobAskLimit)
	}
	// The answer is as old as its end: an engine slow to answer is not
	// asked again at once because the question took longer than a poll.
	rj.at = now.Add(time.Since(began))
	if failed := rj.err != nil; (!failed || errors.Is(rj.err, ErrUnreachable)) && rj.seen.stale(rj.states, failed, rj.at) {
		rj.seen = note(stateDir, rj.name, rj.states, failed, rj.at)
	}
	rj.queried = make(map[string]bool, len(ids))
	for _, id := range ids {
		rj.queried[id] = true
	}
}

// LastSeen is what the engine last said, to any reader of the state dir,
// and since when it has not answered: for a reader that cannot reach it.
func (c *Cache) LastSeen(name string) Seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.of(name).seen
}

// Prefetch asks about ids together, before a listing looks at their
// sessions one by one.
func (c *Cache) Prefetch(ctx context.Context, name string, r Runner, ids []string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ask(ctx, name, r, ids, now)
}

// Forget drops what a runner said: a job was just submitted or stopped.
func (c *Cache) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rj := c.byRunner[name]; rj != nil {
		rj.at = time.Time{}
	}
}
