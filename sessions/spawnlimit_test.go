package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// spawnerEnv makes the test binary a process that spawns sessions with a
// limit into the state dir it names (spawnerProcess).
const spawnerEnv = "ZWARM_SESSIONS_TEST_SPAWNER"

// limitedSpawns starts n spawns with the given limit at once, each a task
// named after its caller, and says how many were started and how many
// refused for the limit; any other error fails.
func limitedSpawns(m *sessions.Manager, work, who string, n, limit int) (started, refused int, err error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for i := range n {
		wg.Go(func() {
			_, e := m.Spawn(context.Background(), sessions.SpawnRequest{Task: fmt.Sprintf("%s %d", who, i), Adapter: "fake",
				WorkingDir: work, Source: record.Source{Kind: record.SourceMCP}, Limit: limit})
			var le *sessions.LimitError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case e == nil:
				started++
			case errors.As(e, &le):
				refused++
			default:
				errs = append(errs, e)
			}
		})
	}
	wg.Wait()
	return started, refused, errors.Join(errs...)
}

// spawnerProcess waits for the gate file beside the state dir, then makes
// its spawns and prints "started refused".
func spawnerProcess(stateDir string) int {
	st, err := state.NewStore(stateDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	os.Unsetenv(spawnerEnv)
	os.Setenv(helperEnv, "1") // the supervisors are this binary too
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	n, _ := strconv.Atoi(os.Getenv(spawnerEnv + "_N"))
	limit, _ := strconv.Atoi(os.Getenv(spawnerEnv + "_LIMIT"))
	for {
		if _, err := os.Stat(stateDir + ".go"); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	started, refused, err := limitedSpawns(m, os.Getenv(spawnerEnv+"_WORK"), "process "+strconv.Itoa(os.Getpid()), n, limit)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(started, refused)
	return 0
}

// Spawns with a limit of 4 made at once, 3 in this process and 3 in each of
// two others sharing the state dir: exactly 4 run, the others are refused
// saying why, and the refused leave nothing behind.
func TestSpawnLimitHoldsAcrossCallsAndProcesses(t *testing.T) {
	w := newWorld(t)
	// Running until the test's cleanup kills them, however long the test.
	w.SetScript(fakeagent.Script{Default: []map[string]any{fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`), {"wait_file": filepath.Join(t.TempDir(), "never")}}})
	const limit, each = 4, 3
	gate := w.Store.Dir() + ".go"
	var procs []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), spawnerEnv+"="+w.Store.Dir(), spawnerEnv+"_WORK="+w.Work,
			spawnerEnv+"_N="+strconv.Itoa(each), spawnerEnv+"_LIMIT="+strconv.Itoa(limit))
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, &out)
		t.Cleanup(func() {
			if errb.Len() > 0 {
				t.Logf("spawner %d: %s", cmd.Process.Pid, errb.String())
			}
		})
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	started, refused, err := limitedSpawns(w.Manager, w.Work, "here", each, limit)
	if err != nil {
		t.Fatal(err)
	}
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("spawner %d: %v", i, err)
		}
		var s, r int
		if _, err := fmt.Sscan(outs[i].String(), &s, &r); err != nil {
			t.Fatalf("spawner %d said %q", i, outs[i].String())
		}
		started, refused = started+s, refused+r
	}
	if started != limit || refused != 3*each-limit {
		t.Fatalf("%d started and %d refused, want %d and %d", started, refused, limit, 3*each-limit)
	}
	list, err := w.Manager.List(context.Background(), listing.Options{Active: true})
	if err != nil || len(list) != limit {
		t.Fatalf("%d sessions running, want %d: %v", len(list), limit, err)
	}
	ents, _ := os.ReadDir(w.Store.SessionsDir())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".new-") {
			t.Fatalf("a refused spawn left %s", filepath.Join(w.Store.SessionsDir(), e.Name()))
		}
	}

	// Another source has a limit of its own.
	s, err := w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: "a person's", Adapter: "fake", WorkingDir: w.Work, Limit: 1})
	if err != nil {
		t.Fatalf("a person's spawn under its own limit: %v", err)
	}
	w.Manager.Kill(context.Background(), s.ID)
	_, err = w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: "one more", Adapter: "fake", WorkingDir: w.Work,
		Source: record.Source{Kind: record.SourceMCP}, Limit: limit})
	var le *sessions.LimitError
	if !errors.As(err, &le) || le.Running != limit || !strings.Contains(err.Error(), "already running and the limit is 4") {
		t.Fatalf("a spawn past the limit: %v", err)
	}
}
