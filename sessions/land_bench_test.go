package sessions_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// landerEnv makes the test binary a process that lands one session of
// the state dir it names (landerProcess): a landing measured as a whole
// process, as zwarm land is one, its git processes included.
const landerEnv = "ZWARM_SESSIONS_TEST_LANDER"

func landerProcess(stateDir string) int {
	st, err := state.NewStore(stateDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	res, err := m.Land(context.Background(), os.Getenv(landerEnv+"_ID"), sessions.LandOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if res.Stat.Files != 1 {
		fmt.Fprintf(os.Stderr, "landed %v, want the one file\n", res.Stat)
		return 1
	}
	return 0
}

// largeBinary is the file of the large-binary benchmarks: 150 MB of
// random bytes, which no compression shrinks (a model's weights, an
// archive).
const largeBinary = "head -c 157286400 /dev/urandom > model.bin"

// measured runs cmd to its end and returns its time and its peak resident
// memory, the largest of it and each of its processes (wait4's maxrss).
func measured(b *testing.B, cmd *exec.Cmd) (time.Duration, int64) {
	b.Helper()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	return took, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// BenchmarkLandLargeBinary: zwarm land (squash, the default) of a
// settled worker whose change is a 150 MB binary file, as a whole
// process (zwarm), beside git's own landing of the same change made on a
// branch of the repository: git merge --squash and git commit in the
// checkout (git). peak-MB is the largest resident memory of any process
// of the landing.
func BenchmarkLandLargeBinary(b *testing.B) {
	b.Run("zwarm", func(b *testing.B) {
		w := benchWorldOf(b, smallRepo)
		w.agent(largeBinary)
		var peak int64
		for range b.N {
			b.StopTimer()
			s := w.spawn("add the model")
			if s = w.waitFor(s.ID, 10*time.Minute); s.Status() != record.StatusCompleted {
				b.Fatalf("worker: %s %s", s.Status(), s.Error)
			}
			cmd := exec.Command(os.Args[0])
			cmd.Dir = w.Work
			cmd.Env = append(os.Environ(), landerEnv+"="+w.Store.Dir(), landerEnv+"_ID="+s.ID)
			b.StartTimer()
			_, rss := measured(b, cmd)
			peak = max(peak, rss)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	})
	b.Run("git", func(b *testing.B) {
		repo := filepath.Join(b.TempDir(), "api")
		os.MkdirAll(repo, 0o755)
		smallRepo(b, repo)
		gitIn := func(dir string, args ...string) *exec.Cmd {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			return cmd
		}
		var peak int64
		for i := range b.N {
			b.StopTimer()
			branch := fmt.Sprintf("worker-%d", i)
			tree := filepath.Join(b.TempDir(), branch)
			for _, cmd := range []*exec.Cmd{
				gitIn(repo, "worktree", "add", "-q", "-b", branch, tree, "main"),
				exec.Command("sh", "-c", "cd "+tree+" && "+largeBinary+" && git add model.bin && git commit -q -m model"),
			} {
				measured(b, cmd)
			}
			b.StartTimer()
			for _, cmd := range []*exec.Cmd{
				gitIn(repo, "merge", "--squash", "-q", branch),
				gitIn(repo, "commit", "-q", "-m", "add the model"),
			} {
				_, rss := measured(b, cmd)
				peak = max(peak, rss)
			}
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	})
}

// smallRepo makes a repository of a few files on main in dir.
func smallRepo(b *testing.B, dir string) {
	b.Helper()
	for name, body := range map[string]string{"README.md": "# api\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
