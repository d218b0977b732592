package sessions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// turnLines is valid codex output: commands with output, messages,
// reasoning, usage. The parsers' own benchmarks (adapters/codex,
// adapters/claude) measure parsing.
func turnLines(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}` + "\n")
	b.WriteString(`{"type":"turn.started"}` + "\n")
	out := strings.Repeat(`ok  \tgithub.com/x/y\t0.01s\n`, 40) // JSON escapes, as codex prints them
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":"item_%d","type":"reasoning","text":"**Thinking** about step %d of the change"}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"item.started","item":{"id":"item_%d","type":"command_execution","command":"/bin/bash -lc 'go test ./...'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":"item_%d","type":"command_execution","command":"/bin/bash -lc 'go test ./...'","aggregated_output":"%s","exit_code":0,"status":"completed"}}`+"\n", i, out)
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":"item_%d","type":"agent_message","text":"Step %d done; the tests pass."}}`+"\n", i, i)
	}
	b.WriteString(`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122,"reasoning_output_tokens":64}}` + "\n")
	return []byte(b.String())
}

var fixture struct {
	once sync.Once
	dir  string
	err  error
}

// finishedStateDir builds 1,000 finished sessions, each with two 1 MB turn
// files, once per benchmark run.
func finishedStateDir(b *testing.B) string {
	fixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "zwarm-bench")
		if err != nil {
			fixture.err = err
			return
		}
		fixture.dir = dir
		turn := turnLines(1 << 20)
		now := time.Now().UTC()
		for i := range 1000 {
			id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
			sdir := filepath.Join(dir, "sessions", id)
			os.MkdirAll(filepath.Join(sdir, "turns"), 0o700)
			code := 0
			s := statusfield.With(record.Session{Version: record.SchemaVersion, ID: id, Task: "task",
				Adapter: "codex", Model: "gpt-5.1-codex", WorkingDir: "/w", Source: record.UserSource, CreatedAt: now, UpdatedAt: now,
				EndedAt: &now, ExitCode: &code, Turn: 2}, record.StatusCompleted)
			for n := 1; n <= 2; n++ {
				s.Turns = append(s.Turns, statusfield.With(record.Turn{N: n, Prompt: "p", StartedAt: now, EndedAt: &now, ExitCode: &code,
					Offset: int64(len(turn))}, record.StatusCompleted))
				if err := os.WriteFile(filepath.Join(sdir, "turns", fmt.Sprintf("turn_%d.jsonl", n)), turn, 0o600); err != nil {
					fixture.err = err
					return
				}
			}
			data, _ := json.Marshal(s)
			if err := os.WriteFile(filepath.Join(sdir, "meta.json"), data, 0o600); err != nil {
				fixture.err = err
				return
			}
		}
	})
	if fixture.err != nil {
		b.Fatal(fixture.err)
	}
	return fixture.dir
}

func init() {
	AfterTests = append(AfterTests, func() {
		if fixture.dir != "" {
			os.RemoveAll(fixture.dir)
		}
	})
}

// BenchmarkList1000Finished is `zwarm ls` over 1,000 finished sessions with
// two 1 MB turn files each: it must read meta.json only.
func BenchmarkList1000Finished(b *testing.B) {
	st, err := state.NewStore(finishedStateDir(b))
	if err != nil {
		b.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		list, err := m.List(context.Background(), listing.Options{})
		if err != nil || len(list) != 1000 {
			b.Fatalf("%d sessions, %v", len(list), err)
		}
	}
}

// BenchmarkSelectHugeTurn is what the dashboard does when a session whose
// turn file is 100 MB is selected: read the last 8 MiB window of it.
func BenchmarkSelectHugeTurn(b *testing.B) {
	dir := b.TempDir()
	id := "3f2a0000-0000-4000-8000-00000000000b"
	writeSession(b, dir, id, string(turnLines(100<<20)))
	m := manager(b, dir)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr := m.NewTrajectory(id, watch.TrajectoryOptions{Window: 8 << 20})
		_, batches, err := tr.Read(context.Background())
		if err != nil || len(batches) != 1 || batches[0].Skipped == 0 {
			b.Fatalf("%v %d", err, len(batches))
		}
		tr.Close()
	}
}

// stateDir builds, once per run, a state dir of n settled sessions of two
// turns each with sessions/internal/mkstate (as the whole-process figures
// of docs/performance.md do).
func stateDir(b *testing.B, n int) string {
	b.Helper()
	stateDirs.Lock()
	defer stateDirs.Unlock()
	if d, ok := stateDirs.m[n]; ok {
		return d
	}
	dir, err := os.MkdirTemp("", "zwarm-bench-state")
	if err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "run", "./internal/mkstate", "-dir", dir, "-n", fmt.Sprint(n)).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		b.Fatalf("mkstate: %v\n%s", err, out)
	}
	// As in a state dir in use, the last session was not created within
	// the last few seconds (see racyWindow in index.go).
	old := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "sessions"), old, old)
	stateDirs.m[n] = dir
	return dir
}

var stateDirs = struct {
	sync.Mutex
	m map[int]string
}{m: map[int]string{}}

func init() {
	AfterTests = append(AfterTests, func() {
		for _, d := range stateDirs.m {
			os.RemoveAll(d)
		}
	})
}

func benchList(b *testing.B, n int) {
	st, err := state.NewStore(stateDir(b, n))
	if err != nil {
		b.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	list, err := m.List(context.Background(), listing.Options{}) // builds the listing cache
	if err != nil || len(list) != n {
		b.Fatalf("%d sessions, %v", len(list), err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.List(context.Background(), listing.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList1000 and BenchmarkList10000 are the listing behind `zwarm
// ls`, with the cache warm: the second must grow slower than the number of
// sessions.
func BenchmarkList1000(b *testing.B)  { benchList(b, 1000) }
func BenchmarkList10000(b *testing.B) { benchList(b, 10000) }

// benchListing is the dashboard's first load: a subscription to every
// session with a Listing, from Subscribe until its first state is
// delivered, with the cache warm (the check of every record that follows
// is not in it).
func benchListing(b *testing.B, n int) {
	st, err := state.NewStore(stateDir(b, n))
	if err != nil {
		b.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	if _, err := m.List(context.Background(), listing.Options{}); err != nil { // builds the listing cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sub, err := m.Subscribe(context.Background(), watch.SubscribeOptions{Listing: true})
		if err != nil {
			b.Fatal(err)
		}
		if u := <-sub.C(); u.Listing.Len() != n || !u.Synced {
			b.Fatalf("listing of %d", u.Listing.Len())
		}
		// Not timed: closing an inotify instance waits for the kernel
		// (10 to 25 ms here), which no user waits for.
		b.StopTimer()
		sub.Close()
		b.StartTimer()
	}
}

// BenchmarkListing1000 and BenchmarkListing10000 are the dashboard's first
// load of 1,000 and 10,000 settled sessions.
func BenchmarkListing1000(b *testing.B)  { benchListing(b, 1000) }
func BenchmarkListing10000(b *testing.B) { benchListing(b, 10000) }
