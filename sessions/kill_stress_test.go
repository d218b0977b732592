//go:build stress

package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// stressN is how many tries a stress test makes: ZWARM_STRESS_N, else def.
func stressN(t *testing.T, def int) int {
	if v, err := strconv.Atoi(os.Getenv("ZWARM_STRESS_N")); err == nil && v > 0 {
		return v
	}
	return def
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// Kill racing a follow-up: a turn runs; the kill comes in, and a follow-up
// at a random moment around it (queued behind the turn, refused while the
// kill works, or sent once it is done). Right: the kill stops the session
// and returns a killed record with nothing of it alive, without having to
// take over from a supervisor that did not answer; a follow-up is
// refused, undelivered, or runs only after the kill returned.
func TestStressKillRacingInject(t *testing.T) {
	n := stressN(t, 200)
	w := newWorld(t)
	dir := t.TempDir()
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		{"spawn": "sleep 300", "setsid": true},
		{"wait_file": filepath.Join(dir, "never")},
	}})
	var lat []time.Duration
	var wrong []string
	for i := range n {
		bad := func(format string, a ...any) {
			wrong = append(wrong, fmt.Sprintf("try %d: ", i)+fmt.Sprintf(format, a...))
		}
		s := w.spawn("run")
		sessionstest.Eventually(t, "the turn to run", func() bool { g, _ := w.Manager.Get(context.Background(), s.ID); return g.ThreadID != "" })
		var wg sync.WaitGroup
		var injErr, killErr error
		var res *sessions.InjectResult
		var killed *record.Session
		var took time.Duration
		var killDone, injDone time.Time
		var left []proc.Stat
		wg.Add(2)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(rand.IntN(150000)) * time.Microsecond)
			res, injErr = w.Manager.Inject(context.Background(), s.ID, fmt.Sprintf("follow-up %d", i))
			injDone = time.Now()
		}()
		go func() {
			defer wg.Done()
			start := time.Now()
			killed, killErr = w.Manager.Kill(context.Background(), s.ID)
			took = time.Since(start)
			killDone = time.Now()
			if killErr == nil {
				if now, err := w.Store.Load(s.ID); err == nil && now.Status() == record.StatusKilled && now.Settled() {
					left = w.Manager.Containment(s.ID).Procs()
				}
			}
		}()
		wg.Wait()
		if injErr != nil && !errors.Is(injErr, sessions.ErrStopping) {
			bad("inject: %v", injErr)
		}
		if killErr != nil {
			bad("kill: %v", killErr)
		} else {
			lat = append(lat, took)
			if killed.Status() != record.StatusKilled {
				bad("kill returned a %s session", killed.Status())
			}
			if strings.Contains(killed.Error, "did not stop") || strings.Contains(killed.Error, "did not hand over") {
				bad("the kill had to take over: %s (after %s)", killed.Error, took.Round(time.Millisecond))
			}
			if len(left) > 0 {
				bad("processes alive after the kill returned: %v", left)
			}
		}
		resumed := injErr == nil && res.Outcome != sessions.InjectQueued
		if resumed && injDone.Before(killDone) {
			// Inject returns after starting the supervisor; it must not
			// have reopened the session before the kill was done.
			if g, _ := w.Store.Load(s.ID); g != nil && len(g.Turns) > 1 && g.Turns[1].StartedAt.Before(killDone.Add(-time.Millisecond)) && killErr == nil && killed.Status() == record.StatusKilled {
				bad("the follow-up started turn 2 before the kill returned")
			}
		}
		if resumed {
			if _, err := w.Manager.Kill(context.Background(), s.ID); err != nil && !errors.Is(err, sessions.ErrNotRunning) {
				bad("the kill of the follow-up: %v", err)
			}
		}
		final := w.wait(s.ID)
		if final.TurnRunning() {
			bad("a turn is left running")
		}
		if left := w.Manager.Containment(s.ID).Procs(); len(left) > 0 {
			bad("processes alive after the session settled: %v", left)
			w.Manager.SweepOut(context.Background(), s.ID)
		}
		inbox, _ := w.Store.Inbox(s.ID)
		for _, e := range inbox {
			if e.State == record.InboxQueued {
				bad("follow-up %d still queued", e.Seq)
			}
		}
	}
	for _, m := range wrong {
		t.Error(m)
	}
	t.Logf("kill racing inject: %d tries, %d wrong outcomes (kill p50 %s, p99 %s)",
		n, len(wrong), percentile(lat, 0.5).Round(time.Millisecond), percentile(lat, 0.99).Round(time.Millisecond))
}
