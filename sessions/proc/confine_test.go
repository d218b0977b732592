package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// confineEnv makes the test binary the confining helper (RunConfined).
const confineEnv = "ZWARM_TEST_CONFINE"

// confined runs script with sh, confined to paths through the test binary.
func confined(t *testing.T, paths []string, script string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], Confined(nil, paths, []string{"/bin/sh", "-c", script})...)
	cmd.Env = append(os.Environ(), confineEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// A confined command writes beneath its paths and nowhere else: not a
// file its user owns, not by making, removing, renaming or truncating
// one, not through a symlink from inside; not a file beside one it may
// write; what it starts is confined as it is; it may not signal a process
// outside it, nor the process that started it, nor trace it.
func TestAConfinedCommandWritesOnlyWhereItIsLet(t *testing.T) {
	if !CanConfine() {
		t.Fatal("this kernel cannot confine: zwarm's verify runs unconfined here")
	}
	inside, outside := t.TempDir(), t.TempDir()
	outsider := exec.Command("sleep", "60") // a process of yours, outside it
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outsider.Process.Kill(); outsider.Wait() }()
	victim := filepath.Join(outside, "yours.txt")
	for _, f := range []string{victim, filepath.Join(outside, "one.txt")} {
		if err := os.WriteFile(f, []byte("yours\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(victim, filepath.Join(inside, "link")); err != nil {
		t.Fatal(err)
	}
	got := confined(t, []string{inside, "/dev/null", filepath.Join(inside, "not-there"), filepath.Join(outside, "one.txt")}, `
try() { if sh -c "$1" 2>/dev/null; then echo "done: $1"; else echo "refused: $1"; fi; }
try "echo mine > `+inside+`/mine.txt"
try "mkdir `+inside+`/sub && echo deeper > `+inside+`/sub/f && mv `+inside+`/sub/f `+inside+`/moved"
try "echo x >> `+victim+`"
try "truncate -s 0 `+victim+`"
try "echo x > `+outside+`/new.txt"
try "rm `+victim+`"
try "mv `+victim+` `+inside+`/taken"
try "echo x > `+inside+`/link"
try "cat `+victim+` > /dev/null"
try "echo ok >> `+outside+`/one.txt"
try "echo x > `+outside+`/two.txt"
try "kill -0 `+strconv.Itoa(outsider.Process.Pid)+`"
try "kill -0 $PPID"
sh -c 'echo child >> `+victim+`' 2>/dev/null || echo "child refused"
`)
	for _, want := range []string{"done: echo mine", "done: mkdir", "refused: echo x >> ", "refused: truncate ", "refused: echo x > " + outside + "/new",
		"refused: rm ", "refused: mv " + victim, "refused: echo x > " + inside + "/link", "done: cat ", "done: echo ok >> ", "refused: echo x > " + outside + "/two",
		"refused: kill -0 " + strconv.Itoa(outsider.Process.Pid), "child refused"} {
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
}

// The confined command is a process of its own, whose parent is not in
// the confinement: it may not signal or trace the process that started
// it (a thread of it, confined, would let it take that process over).
func TestAConfinedCommandCannotReachItsParent(t *testing.T) {
	got := confined(t, []string{"/dev/null"}, `
parent=$(awk '/^PPid/ {print $2}' /proc/$$/status)
if kill -0 "$parent" 2>/dev/null; then echo "signalled the parent"; else echo "parent refused"; fi
if grep -q "NoNewPrivs:.1" /proc/$parent/status; then echo "the parent is confined"; fi
`)
	if !strings.Contains(got, "parent refused") || strings.Contains(got, "confined") {
		t.Errorf("%s", got)
	}
	if b, _ := os.ReadFile("/proc/self/status"); strings.Contains(string(b), "NoNewPrivs:\t1") {
		t.Error("the test process took the confinement")
	}
}
