package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Openers names the process that has a file open, by the file itself
// (reached through a symlinked directory, it is the same file), and no
// process for a file nobody has open or one that is not there.
func TestOpenersFindsTheProcessThatHoldsAFile(t *testing.T) {
	dir := t.TempDir()
	held, free := filepath.Join(dir, "index.lock"), filepath.Join(dir, "other.lock")
	f, err := os.Create(held)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(free, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "60")
	holder.ExtraFiles = []*os.File{f}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer func() { holder.Process.Kill(); holder.Wait() }()
	link := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	viaLink := filepath.Join(link, "index.lock")
	got := Openers([]string{viaLink, free, filepath.Join(dir, "missing.lock")})
	if len(got) != 1 || len(got[viaLink]) != 1 || got[viaLink][0].PID != holder.Process.Pid || got[viaLink][0].Command != "sleep 60" {
		t.Fatalf("openers: %+v (sleep is pid %d)", got, holder.Process.Pid)
	}
	holder.Process.Kill()
	holder.Wait()
	if got := Openers([]string{held}); len(got) != 0 {
		t.Fatalf("openers once the holder is gone: %+v", got)
	}
}
