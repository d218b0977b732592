package watchers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Killer stops a session with a reason; *sessions.Manager implements it.
type Killer interface {
	KillBecause(ctx context.Context, idOrPrefix, reason string) (*record.Session, error)
}

// Subscriber is what Watch needs of the session core; *sessions.Manager
// implements it.
type Subscriber interface {
	Subscribe(ctx context.Context, opt watch.SubscribeOptions) (*watch.Subscription, error)
}

// WorkerOptions configure a Workers engine.
type WorkerOptions struct {
	// Killer lets cost_guard stop a worker; without one it only alerts.
	Killer Killer
	// OnUpdate sees every update before the watchers do, on the engine's
	// goroutine, so a front end can follow the same subscription.
	OnUpdate func(watch.Update)
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Notify, if set, sees every update and every alert too, on the
	// engine's goroutine: what tells a person (package watchers/notify).
	Notify WorkerNotifier
}

// WorkerNotifier is told what the worker watchers see. It must not block.
type WorkerNotifier interface {
	Update(watch.Update)
	Alert(Alert)
}

// eventWindow bounds how much of a turn file a subscription reads when it
// first sees a turn: the watchers need a turn's recent events, not all of
// a long one.
const eventWindow = 1 << 20

// Workers runs the worker watchers (stall, failure, hollow, cost_guard,
// overlap) on a subscription's updates and emits Alerts. Run it once.
type Workers struct {
	cfg  *Config
	opt  WorkerOptions
	out  chan Alert
	once sync.Once
	wg   sync.WaitGroup // stops in flight

	mu      sync.Mutex
	workers map[string]*worker
	synced  bool // the subscription's initial state is over
	// standing holds, by session id, the alerts that still hold, by
	// watcher (overlap: by watcher, other worker and file).
	standing map[string]map[string]Alert
	ov       overlaps
}

// NewWorkers returns an engine for the worker watchers of cfg (nil: the
// defaults).
func NewWorkers(cfg *Config, opt WorkerOptions) *Workers {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Workers{cfg: cfg, opt: opt, out: make(chan Alert, 64), workers: map[string]*worker{}, standing: map[string]map[string]Alert{},
		ov: newOverlaps()}
}

// Alerts delivers the alerts in the order they were made. It is closed
// when Run (or Watch) returns; until then it must be read, or the engine
// waits (the subscription behind it waits too: nothing is lost).
func (w *Workers) Alerts() <-chan Alert { return w.out }

// Watch subscribes to the sessions filter selects (and ids, if any), with
// their events, and runs the watchers on them until ctx ends (nil is
// returned then) or the subscription fails.
func (w *Workers) Watch(ctx context.Context, m Subscriber, filter listing.Options, ids ...string) error {
	sub, err := m.Subscribe(ctx, watch.SubscribeOptions{IDs: ids, Filter: filter, Events: true, Window: eventWindow})
	if err != nil {
		w.finish()
		return fmt.Errorf("watch sessions: %w", err)
	}
	defer sub.Close()
	err = w.Run(ctx, sub.C())
	if ctx.Err() != nil {
		return nil
	}
	if err == nil && sub.Err() != nil {
		err = fmt.Errorf("watch sessions: %w", sub.Err())
	}
	return err
}

// Run applies the watchers to updates until the channel closes (nil) or
// ctx ends (its error). Stalls are timers that each event of a session
// resets; nothing polls. Stops in flight are waited for, then Alerts is
// closed.
func (w *Workers) Run(ctx context.Context, updates <-chan watch.Update) error {
	defer w.finish()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if due := w.next(); !due.IsZero() {
			timer.Reset(max(0, time.Until(due)))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u, ok := <-updates:
			if !ok {
				return nil
			}
			if w.opt.OnUpdate != nil {
				w.opt.OnUpdate(u)
			}
			if w.opt.Notify != nil {
				w.opt.Notify.Update(u)
			}
			if !w.send(ctx, w.handle(ctx, u, time.Now())) {
				return ctx.Err()
			}
		case now := <-timer.C:
			if !w.send(ctx, w.tick(now)) {
				return ctx.Err()
			}
		}
	}
}

func (w *Workers) finish() {
	w.wg.Wait()
	w.once.Do(func() { close(w.out) })
}

func (w *Workers) send(ctx context.Context, alerts []Alert) bool {
	for _, a := range alerts {
		if w.opt.Notify != nil {
			w.opt.Notify.Alert(a)
		}
		select {
		case w.out <- a:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Changes returns the files each session changed, from the file_change
// events seen, in the order first changed (a later change of a file
// updates its kind).
func (w *Workers) Changes() map[string][]record.FileChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string][]record.FileChange, len(w.workers))
	for id, st := range w.workers {
		if len(st.changes) > 0 {
			out[id] = append([]record.FileChange(nil), st.changes...)
		}
	}
	return out
}

// Standing returns, by session id, the alerts that still hold: a stall
// until the worker prints again or settles, a failure or a hollow
// completion until a new turn starts, an overlap until one of its two
// workers settles, a stop for good. A front end marks these sessions.
func (w *Workers) Standing() map[string][]Alert {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string][]Alert, len(w.standing))
	for id, by := range w.standing {
		for _, a := range by {
			out[id] = append(out[id], a)
		}
	}
	return out
}

func (w *Workers) stand(a Alert) { w.standAs(a.Watcher, a) }

// standAs keeps a standing alert under key: its watcher's name, unless
// the watcher may have several standing for one session.
func (w *Workers) standAs(key string, a Alert) {
	by := w.standing[a.SessionID]
	if by == nil {
		by = map[string]Alert{}
		w.standing[a.SessionID] = by
	}
	by[key] = a
}

// clear drops the standing alerts of id under keys.
func (w *Workers) clear(id string, keys ...string) {
	for _, key := range keys {
		delete(w.standing[id], key)
	}
	if len(w.standing[id]) == 0 {
		delete(w.standing, id)
	}
}
