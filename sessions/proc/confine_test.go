package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A confined command writes beneath its dirs and nowhere else: not a
// file its user owns, not by making, removing, renaming or truncating
// one, not through a symlink from inside; what it starts is confined as
// it is; and this process, and what it starts later, are not.
func TestStartWritingBeneath(t *testing.T) {
	if !LandlockAvailable() {
		t.Fatal("this kernel has no Landlock: zwarm's verify runs unconfined here")
	}
	inside, outside := t.TempDir(), t.TempDir()
	outsider := exec.Command("sleep", "60") // a process of yours, outside it
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outsider.Process.Kill(); outsider.Wait() }()
	victim := filepath.Join(outside, "yours.txt")
	if err := os.WriteFile(victim, []byte("yours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "one.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(inside, "link")); err != nil {
		t.Fatal(err)
	}
	script := `
try() { if sh -c "$1" 2>/dev/null; then echo "done: $1"; else echo "refused: $1"; fi; }
try "echo mine > ` + inside + `/mine.txt"
try "mkdir ` + inside + `/sub && echo deeper > ` + inside + `/sub/f"
try "echo x >> ` + victim + `"
try ": > ` + victim + `"
try "echo x > ` + outside + `/new.txt"
try "rm ` + victim + `"
try "mv ` + victim + ` ` + inside + `/taken"
try "echo x > ` + inside + `/link"
try "cat ` + victim + ` > /dev/null"
try "kill -0 ` + strconv.Itoa(outsider.Process.Pid) + `"
try "kill -0 $$"
try "echo ok >> ` + outside + `/one.txt"
try "echo x > ` + outside + `/two.txt"
sh -c 'echo child >> ` + victim + `' 2>/dev/null || echo "child refused"
`
	cmd := exec.Command("/bin/sh", "-c", script)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// A file alone may be written too: one.txt, not its neighbours.
	done, err := StartWritingBeneath(cmd, []string{inside, "/dev", filepath.Join(inside, "not-there"), filepath.Join(outside, "one.txt")})
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	done()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"done: echo mine", "done: mkdir", "refused: echo x >> ", "refused: : > ", "refused: echo x > " + outside,
		"refused: rm ", "refused: mv ", "refused: echo x > " + inside + "/link", "done: cat ", "child refused",
		"refused: kill -0 " + strconv.Itoa(outsider.Process.Pid), "done: kill -0 ",
		"done: echo ok >> " + outside + "/one.txt", "refused: echo x > " + outside + "/two.txt"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "yours\n" {
		t.Errorf("the file outside holds %q", b)
	}
	// This process, and what it starts unconfined, still write anywhere.
	if err := exec.Command("/bin/sh", "-c", "echo later >> "+victim).Run(); err != nil {
		t.Fatalf("a command started after the confined one: %v", err)
	}
	if err := os.WriteFile(filepath.Join(outside, "after.txt"), []byte("x"), 0o644); err != nil {
		t.Fatalf("this process after: %v", err)
	}
}

// The thread a confined command was started from lives until done: its
// death signal (Pdeathsig), tied to that thread, never comes early.
func TestAConfinedCommandOutlivesItsStart(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.5; echo still here")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout = &out
	done, err := StartWritingBeneath(cmd, []string{t.TempDir(), "/dev"})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	time.Sleep(100 * time.Millisecond)
	err = cmd.Wait()
	done()
	if err != nil || out.String() != "still here\n" {
		t.Fatalf("%v, %q", err, out.String())
	}
}
