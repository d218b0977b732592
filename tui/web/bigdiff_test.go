package web_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A change whose patch passes what the page reads (16 MiB) is answered
// with what fits and "cut", as the docs say: git, stopped by the full
// buffer, ends on a broken pipe, and that was taken for a failure (409,
// "exit status -1"), for the whole diff and for each file of it.
func TestADiffPastWhatThePageReadsIsCutNotRefused(t *testing.T) {
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "README"), []byte("hi\n"), 0o644)
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "init")
	base := gitIn(t, repo, "rev-parse", "HEAD")
	id := sessionstest.SessionID(1)
	gitIn(t, repo, "checkout", "-q", "-b", "zwarm/"+id)
	line := strings.Repeat("x", 99) + "\n"
	for _, f := range []string{"a.txt", "b.txt"} { // 2 × 9 MB of lines
		os.WriteFile(filepath.Join(repo, f), []byte(strings.Repeat(line, 90_000)), 0o644)
	}
	os.WriteFile(filepath.Join(repo, "small.txt"), []byte("small\n"), 0o644)
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "big")
	head := gitIn(t, repo, "rev-parse", "HEAD")

	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	sessionstest.WriteSettledRecord(t, st, 1)
	if _, err := st.Update(id, func(tx *state.Tx) error {
		s := tx.Session()
		s.Workspace = &record.Workspace{Repo: repo, GitDir: filepath.Join(repo, ".git"), Origin: repo, Path: filepath.Join(t.TempDir(), id),
			Branch: "zwarm/" + id, Base: "main", BaseCommit: base, Head: head, State: record.WorkspaceReady, Committed: len(s.Turns)}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sv := serveStore(t, st)
	code, body := request(t, sv, "GET", "/api/sessions/"+id+"/diff", sv.full, "", "")
	var d struct {
		Stat  string
		Cut   bool
		Files []struct {
			Path  string
			Patch string
			More  bool
		}
	}
	if code != 200 || json.Unmarshal([]byte(body), &d) != nil {
		t.Fatalf("%d %.300s", code, body)
	}
	if !d.Cut || !strings.Contains(d.Stat, "a.txt") || !strings.Contains(d.Stat, "small.txt") || len(d.Files) < 1 || d.Files[0].Path != "a.txt" {
		t.Fatalf("cut %v, stat %q, %d files", d.Cut, d.Stat, len(d.Files))
	}
	code, body = request(t, sv, "GET", "/api/sessions/"+id+"/diff?file=a.txt", sv.full, "", "")
	if code != 200 || !strings.Contains(body, `"path":"a.txt"`) {
		t.Fatalf("?file=a.txt: %d %.300s", code, body)
	}
	// The file the bound cut short says so; each file, past the cut too,
	// is there to ask for (small.txt was "no file" of the change).
	if last := d.Files[len(d.Files)-1]; last.Path != "b.txt" {
		t.Fatalf("the last file read: %s", last.Path)
	}
	if !strings.Contains(bodyOf(t, sv, id, ""), `"path":"b.txt","bytes":`) || !strings.Contains(bodyOf(t, sv, id, ""), `"cut":true}`) {
		t.Fatal("the file cut short is not marked cut")
	}
	for file, want := range map[string]string{"small.txt": "+small", "b.txt": strings.Repeat("x", 99)} {
		var f struct {
			Path, Patch string
			Cut         bool
		}
		code, body := request(t, sv, "GET", "/api/sessions/"+id+"/diff?file="+file, sv.full, "", "")
		if code != 200 || json.Unmarshal([]byte(body), &f) != nil || f.Path != file || f.Cut || !strings.Contains(f.Patch, want) {
			t.Fatalf("?file=%s: %d %.300s", file, code, body)
		}
		if file == "b.txt" && strings.Count(f.Patch, "\n+x") != 90_000 {
			t.Fatalf("b.txt's patch has %d added lines, want 90000", strings.Count(f.Patch, "\n+x"))
		}
	}
}

func bodyOf(t *testing.T, sv *serving, id, query string) string {
	t.Helper()
	_, body := request(t, sv, "GET", "/api/sessions/"+id+"/diff"+query, sv.full, "", "")
	return body
}
