package orchestrator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// runHelperEnv makes the test binary a run's process (runHelper): it starts
// a run in the state dir the variable names, runs the command of
// ZWARM_ORCH_TEST_CMD with exec_command, prints the run's id and waits to
// be killed.
const runHelperEnv = "ZWARM_ORCH_TEST_RUN_HELPER"

func runHelper(stateDir string) int {
	st, err := state.NewStore(stateDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	ctx := context.Background()
	opt := Options{Sessions: m, StateDir: stateDir, Settings: Settings{Model: "gpt-5.1", Dir: os.Getenv("ZWARM_ORCH_TEST_DIR")},
		Client: model.NewOpenAI(model.OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-test"})}
	r, err := Start(ctx, opt, "escape")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	args, _ := json.Marshal(map[string]any{"cmd": os.Getenv("ZWARM_ORCH_TEST_CMD"), "yield_time_ms": 2000})
	res := r.Tools().Call(ctx, "exec_command", args)
	if res.IsError {
		return 1
	}
	fmt.Println(r.ID())
	time.Sleep(time.Hour)
	return 0
}

// escapeRunKill starts a run in a process of its own whose exec_command
// starts an escaper (env -i, nohup, setsid: out of the command's session
// and process group, immune to SIGHUP), SIGKILLs the run's process, lets
// sweep clean up, and reports whether the escaper survived.
func escapeRunKill(t testing.TB, w *testenv.World, try int, sweep func(id string) error) (bool, error) {
	t.Helper()
	pidfile := filepath.Join(w.Work, fmt.Sprintf("escaper-%d.pid", try))
	escaper := fmt.Sprintf(`trap "" HUP; nohup setsid env -i /bin/sh -c 'echo $$ > %[1]s.tmp && mv %[1]s.tmp %[1]s; exec sleep 300' >/dev/null 2>&1 &`, pidfile)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runHelperEnv+"="+w.State, "ZWARM_ORCH_TEST_DIR="+w.Work, "ZWARM_ORCH_TEST_CMD="+escaper)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	id := strings.TrimSpace(line)
	if err != nil || id == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the run's process did not start the command: %v", err)
	}
	var pid int
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(pidfile)
		if err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			KillRun(context.Background(), w.State, id, time.Second)
			t.Fatalf("the escaper should have written its pid to %s within a minute; it did not", pidfile)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	serr := sweep(id)
	if sessionstest.Alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		return true, fmt.Errorf("the escaper (pid %d) of run %s survived (sweep: %v)", pid, record.ShortID(id), serr)
	}
	if serr != nil {
		return false, serr
	}
	if _, err := os.Stat(filepath.Join(runs.RunDir(w.State, id), CgroupFile)); err == nil {
		return false, fmt.Errorf("run %s still records a cgroup after the sweep", record.ShortID(id))
	}
	return false, nil
}

// The three ways a dead run's leftovers are swept: resuming it, zwarm runs
// kill, zwarm doctor.
func runSweeps(t testing.TB, w *testenv.World) map[string]func(id string) error {
	ctx := context.Background()
	return map[string]func(string) error{
		"resume": func(id string) error {
			opt := Options{Sessions: w.Manager, StateDir: w.State, Settings: Settings{Model: "gpt-5.1"},
				Client: model.NewOpenAI(model.OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-test"})}
			r, err := Resume(ctx, opt, id)
			if err != nil {
				return err
			}
			r.release()
			return nil
		},
		"runs kill": func(id string) error {
			_, err := KillRun(ctx, w.State, id, time.Second)
			return err
		},
		"doctor": func(id string) error {
			swept, err := SweepDeadRuns(ctx, w.State)
			if err == nil && (len(swept) != 1 || swept[0].ID != id) {
				err = fmt.Errorf("doctor swept %+v, want run %s", swept, id)
			}
			return err
		},
	}
}

// A run's process SIGKILLed while a command it ran left an escaper behind:
// resuming the run, zwarm runs kill and zwarm doctor each stop it.
func TestDeadRunsEscaperIsSwept(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := testenv.New(t, bins, "")
	for i, how := range []string{"resume", "runs kill", "doctor"} {
		t.Run(how, func(t *testing.T) {
			if _, err := escapeRunKill(t, w, i, runSweeps(t, w)[how]); err != nil {
				t.Fatal(err)
			}
		})
	}
}
