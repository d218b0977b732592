package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reaperEnv makes the test binary a reaper of the script it names: the
// reaper is a process of its own, as a job's main process is (it makes
// itself a subreaper, which the test process must not become).
const reaperEnv = "ZWARM_TEST_REAPER_SCRIPT"

// guardEnv makes the test binary a Guard of the script it names.
const guardEnv = "ZWARM_TEST_GUARD_SCRIPT"

func TestMain(m *testing.M) {
	if os.Getenv(confineEnv) != "" {
		os.Exit(RunConfined(os.Args[1:]))
	}
	if script := os.Getenv(guardEnv); script != "" {
		code, err := Guard{Argv: []string{"/bin/sh", "-c", script}, Orphaned: GuardOrphaned}.Run()
		if err != nil {
			fmt.Fprintln(os.Stderr, "guard:", err)
			os.Exit(99)
		}
		os.Exit(code)
	}
	if script := os.Getenv(reaperEnv); script != "" {
		code, err := Reaped{Argv: []string{"/bin/sh", "-c", script}, Env: os.Environ(),
			Forward: []os.Signal{syscall.SIGTERM, syscall.SIGUSR1}, Ignore: []os.Signal{syscall.SIGUSR1}}.Run(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "reaper:", err)
			os.Exit(99)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// reaper runs script under Reaped.Run in a process of its own and returns
// it started, with the directory the script may write in ($D).
func reaper(t *testing.T, script string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	// As a batch job's command starts: SIGUSR1, Slurm's warning, ignored.
	cmd := exec.Command("/bin/sh", "-c", `trap '' USR1; exec "$0" -test.run='^$'`, os.Args[0])
	cmd.Env = append(os.Environ(), reaperEnv+"="+script, "D="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, dir
}

func waitForFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A child killed outright (a supervisor's kill -9) leaves a daemon of
// its making (setsid, double fork) and a plain child: the reaper kills
// both, reaps them, and exits as its child did.
func TestReapedLeavesNothingOfADeadChild(t *testing.T) {
	t.Parallel()
	cmd, dir := reaper(t, `(setsid sleep 300 & echo $! > "$D/daemon") ; sleep 300 & echo $! > "$D/child"; sleep 0.2; kill -9 $$`)
	daemon, _ := strconv.Atoi(waitForFile(t, filepath.Join(dir, "daemon")))
	child, _ := strconv.Atoi(waitForFile(t, filepath.Join(dir, "child")))
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+9 {
		t.Fatalf("the reaper exited %v, want 137 (its child's death by SIGKILL)", err)
	}
	for name, pid := range map[string]int{"daemon": daemon, "child": child} {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.HasPrefix(string(b), "sleep\x00300") {
			t.Errorf("the %s (pid %d) outlived the reaper", name, pid)
		}
	}
}

// A signal to the reaper reaches its child, which decides what to do
// with it: here, to exit 0.
func TestReapedForwardsSignals(t *testing.T) {
	t.Parallel()
	cmd, dir := reaper(t, `trap 'echo got TERM > "$D/term"; exit 0' TERM; echo ready > "$D/ready"; while :; do sleep 0.05; done`)
	waitForFile(t, filepath.Join(dir, "ready"))
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the reaper exited %v, want 0 as its child did", err)
	}
	if got := waitForFile(t, filepath.Join(dir, "term")); got != "got TERM" {
		t.Fatalf("the child's note: %q", got)
	}
}

// A signal the reaper started with ignored (Slurm's warning, ignored from
// the batch script's first line) is ignored in its child from the start,
// as it would be in the job's command run directly: the child takes it up
// when it listens, and is not ended by it before.
func TestReapedKeepsWhatItStartedWithIgnored(t *testing.T) {
	t.Parallel()
	cmd, dir := reaper(t, `grep SigIgn /proc/$$/status > "$D/ign"; echo >> "$D/ign"; sleep 0.3`)
	got := waitForFile(t, filepath.Join(dir, "ign"))
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(got, "SigIgn:")), 16, 64)
	if err != nil || mask&(1<<(syscall.SIGUSR1-1)) == 0 {
		t.Fatalf("the child's ignored signals: %q (%v), want SIGUSR1 among them", got, err)
	}
	cmd.Process.Signal(syscall.SIGUSR1) // forwarded, and ignored by the child
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the reaper exited %v after a SIGUSR1", err)
	}
}

// zombies are the children of pid that have exited and wait to be reaped.
func zombies(pid int) []int {
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			kid, _ := strconv.Atoi(field)
			if st, err := ReadStat(kid); err == nil && st.State == 'Z' {
				out = append(out, kid)
			}
		}
	}
	return out
}

// The orphans a child leaves become the subreaper's children; each that
// ends is reaped as it ends, not left a zombie for as long as the child
// runs (a whole turn of an agent, a whole batch job), the guard's and the
// reaper's alike.
func TestOrphansThatEndAreReapedWhileTheChildRuns(t *testing.T) {
	t.Parallel()
	script := `for i in 1 2 3; do (sleep 0.1 &); done; sleep 0.5; echo ready > "$D/ready"; sleep 300`
	guardDir := t.TempDir()
	guard := exec.Command(os.Args[0], "-test.run=^$")
	guard.Env = append(os.Environ(), guardEnv+"="+script, "D="+guardDir)
	if err := guard.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { guard.Process.Kill(); guard.Wait() })
	reaped, reapedDir := reaper(t, script)
	for name, c := range map[string]struct {
		pid int
		dir string
	}{"guard": {guard.Process.Pid, guardDir}, "reaper": {reaped.Process.Pid, reapedDir}} {
		waitForFile(t, filepath.Join(c.dir, "ready"))
		deadline := time.Now().Add(10 * time.Second)
		for len(zombies(c.pid)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if z := zombies(c.pid); len(z) > 0 {
			t.Errorf("the %s holds zombies %v while its child runs", name, z)
		}
	}
}
