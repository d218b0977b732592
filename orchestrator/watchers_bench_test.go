package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/watchers"
)

// BenchmarkWatcherGuard is the guard before one step of a run with 1,000
// steps of history and 100 workers: every run watcher asked (llm aside: it waits for a model), each
// meeting the history for the first time, as after a resume.
func BenchmarkWatcherGuard(b *testing.B) {
	t0 := time.Now().Add(-time.Hour)
	v := &watchers.RunView{RunID: "run", Task: "refactor the storage layer", Model: "gpt-5.1", Step: 1001,
		Limits: watchers.Limits{MaxSteps: 2000, MaxTokens: 50_000_000, MaxCostUSD: 100, MaxWorkers: 200}}
	out := strings.Repeat("ok 1.23s github.com/example/pkg\n", 60)
	for i := 0; i < 1000; i++ {
		name, args := "check_session", fmt.Sprintf(`{"session_id":"w%03d"}`, i%100)
		if i%3 == 0 {
			name, args = "exec_command", fmt.Sprintf(`{"cmd":"go test ./pkg/p%d/..."}`, i%100)
		}
		v.Calls = append(v.Calls, watchers.Call{Step: i + 1, ID: fmt.Sprint(i), Name: name, Args: json.RawMessage(args), Output: out, At: t0.Add(time.Duration(i) * time.Second)})
		v.Messages = append(v.Messages, watchers.Message{Step: i + 1, Kind: "message", Text: "checking the workers next"})
	}
	for i := 0; i < 100; i++ {
		s := new(sessionstest.WithStatus(record.Session{ID: fmt.Sprintf("w%03d", i), CreatedAt: t0}, record.StatusCompleted))
		if i%2 == 0 {
			sessionstest.SetStatus(s, record.StatusRunning)
			s.Owner = &proc.Ref{PID: 1}
		}
		v.Workers = append(v.Workers, s)
	}
	cfg := watchers.DefaultConfig()
	cfg.Scope.Keywords = []string{"kubernetes"}
	b.ReportAllocs()
	for b.Loop() {
		g := WatcherGuard(watchers.New(cfg, watchers.Options{}))
		g.Check(context.Background(), v)
	}
}
