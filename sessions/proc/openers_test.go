package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Users names the process that has a file open, by the file itself
// (reached through a symlinked directory, or by another hard link, it is
// the same file), and the processes of a name working within a
// directory; no process for a file nobody has open or one that is not
// there.
func TestUsersFindsWhoHoldsAFileAndWhoWorksInADir(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	held, free, linked := filepath.Join(dir, "index.lock"), filepath.Join(dir, "other.lock"), filepath.Join(dir, "HEAD.lock")
	f, err := os.Create(held)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(free, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(held, linked); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "60")
	holder.ExtraFiles = []*os.File{f}
	holder.Dir = filepath.Join(work, "sub")
	os.Mkdir(holder.Dir, 0o755)
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
	use, err := Users(context.Background(), []string{viaLink, free, linked, filepath.Join(dir, "missing.lock")}, []string{work}, "sleep")
	if err != nil {
		t.Fatal(err)
	}
	pid := holder.Process.Pid
	for _, p := range []string{viaLink, linked} {
		if o := use.Open[p]; len(o) != 1 || o[0].PID != pid || o[0].Command != "sleep 60" || o[0].Comm != "sleep" {
			t.Errorf("%s is open in %+v (sleep is pid %d)", p, o, pid)
		}
	}
	if len(use.Open) != 2 {
		t.Errorf("open: %+v", use.Open)
	}
	if len(use.Within) != 1 || use.Within[0].PID != pid {
		t.Errorf("within %s: %+v", work, use.Within)
	}
	holder.Process.Kill()
	holder.Wait()
	if use, err := Users(context.Background(), []string{held}, []string{work}, "sleep"); err != nil || len(use.Open) != 0 || len(use.Within) != 0 {
		t.Fatalf("once the holder is gone: %+v %v", use, err)
	}
}
