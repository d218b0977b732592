package watch

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// jobSource is a Source whose runner says what the test says of a job.
type jobSource struct {
	st *state.Store
	mu sync.Mutex
	// said is the runner's words of the job now.
	said string
}

func (j *jobSource) Store() *state.Store                                  { return j.st }
func (j *jobSource) Listings() *listing.Cache                             { return nil }
func (j *jobSource) Adapters() agent.Adapters                             { return nil }
func (j *jobSource) Get(context.Context, string) (*record.Session, error) { return nil, nil }
func (j *jobSource) Judge([]string) func(*record.Session) *record.Session {
	j.mu.Lock()
	said := j.said
	j.mu.Unlock()
	return func(s *record.Session) *record.Session { s.RunnerState = said; return s }
}

func (j *jobSource) say(s string) { j.mu.Lock(); j.said = s; j.mu.Unlock() }

// A job's state in its runner's words changes with no write to its
// session's record (requeued, its controller gone silent): each change is
// an update. A dashboard kept showing "running on vm" for minutes of a
// job queued again, until a key reloaded it.
func TestWhatTheRunnerSaysOfAJobIsNews(t *testing.T) {
	t.Parallel()
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewID()
	s := &record.Session{ID: id, Task: "held", Adapter: "codex", CreatedAt: time.Now().UTC(), Turn: 1,
		Job: &record.Job{Runner: "slurm", ID: "13"}}
	statusfield.Set(s, record.StatusRunning)
	if err := st.Create(s); err != nil {
		t.Fatal(err)
	}
	src := &jobSource{st: st, said: "slurm 13 on vm"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := Subscribe(ctx, src, SubscribeOptions{IDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	next := func(want string) {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case u := <-sub.C():
				if u.Session != nil && u.Session.RunnerState == want {
					return
				}
			case <-deadline:
				t.Fatalf("no update saying %q within a minute", want)
			}
		}
	}
	next("slurm 13 on vm")
	src.say("queued · slurm 13 (BeginTime)")
	next("queued · slurm 13 (BeginTime)")
}
