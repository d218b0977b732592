package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// Bounds of diff_session's text, in bytes. A patch shows whole files
// while they fit (a file cut in the middle is hard to review) and lists
// the ones left out; git's output is read up to diffCapture only, so a
// huge generated file cannot fill the memory.
const (
	diffPatchBytes = 30000
	diffStatBytes  = 12000
	diffCapture    = 1 << 20
	diffLeftOut    = 40 // files named in the list of those left out
)

func (w *workers) diffTool() Tool {
	schema := object(map[string]prop{
		"session_id": str("The worker's id (or a unique prefix)."),
		"stat":       boolean("Only a diffstat: each file changed with its lines added and removed (default false: the patch)."),
	}, "session_id")
	return Tool{
		Name: "diff_session",
		Description: "What a worker changed in its git worktree, against the commit it started from: the patch " +
			"(whole files while they fit in one answer, the rest listed) or, with stat=true, a diffstat. " +
			"Review it before land_session: a worker's own account of its work is a claim, its diff is the change.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				SessionID string `json:"session_id"`
				Stat      bool   `json:"stat"`
			}
			if err := decode("diff_session", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, a.SessionID)
			if err != nil {
				return Errorf("%v", err)
			}
			format := workspace.Patch
			if a.Stat {
				format = workspace.StatOnly
			}
			out := &capped{limit: diffCapture}
			s, err = w.opt.Sessions.Diff(ctx, s.ID, out, sessions.DiffRequest{Options: workspace.DiffOptions{Format: format, Width: 120}})
			if err != nil {
				return diffError(s, a.SessionID, err)
			}
			head := diffHeader(s)
			if out.total == 0 {
				return Result{Text: head + "\n" + emptyDiff(s)}
			}
			if a.Stat {
				return Result{Text: head + "\n" + clip(out.String(), diffStatBytes)}
			}
			return Result{Text: head + "\n" + boundPatch(out, diffPatchBytes-len(head), readHint(s))}
		},
	}
}

// diffError says why there is no diff, and where the change is instead.
func diffError(s *sessions.Session, id string, err error) Result {
	if errors.Is(err, sessions.ErrInPlace) && s != nil {
		return Errorf("worker %s works in place, in %s: it has no branch of its own, so there is no diff against a base; "+
			"its changes are in that directory already (git status and git diff there show them)", sessions.ShortID(s.ID), s.WorkingDir)
	}
	return Errorf("cannot diff worker %s: %v", id, err)
}

// diffHeader is the first line: whose change, on which branch, from
// what, how big, and whether it is landed.
func diffHeader(s *sessions.Session) string {
	ws := s.Workspace
	h := fmt.Sprintf("worker %s · %s · branch %s from %s (%s) · %s", s.ID, s.Status, ws.Branch, ws.Base, workspace.Abbrev(ws.BaseCommit), s.ChangesText())
	switch {
	case !s.Settled():
		h += " · still running: this is its work so far"
	case ws.LandedNow():
		h += fmt.Sprintf(" · landed into %s as %s", ws.Landed.Into, workspace.Abbrev(ws.Landed.Commit))
	case ws.Landed != nil:
		h += fmt.Sprintf(" · landed into %s as %s before; shown is what it did since", ws.Landed.Into, workspace.Abbrev(ws.Landed.Commit))
	default:
		h += " · not landed"
	}
	return h
}

func emptyDiff(s *sessions.Session) string {
	ws := s.Workspace
	switch {
	case ws.Preparing():
		return "Its worktree is being prepared: nothing has changed yet."
	case ws.State == sessions.WorkspaceFailed:
		return "Its worktree could not be made, so it changed nothing: " + clip(ws.Error, 2000)
	}
	return "No changes against its base."
}

// readHint says how to read a file's whole change with git, where the
// change is: the worktree while it exists (its uncommitted work
// included), else the commits it left in the repository.
func readHint(s *sessions.Session) string {
	ws := s.Workspace
	if ws.State == sessions.WorkspaceReady {
		return fmt.Sprintf("git -C %s diff %s -- PATH", ws.Path, workspace.Abbrev(ws.DiffBase()))
	}
	return fmt.Sprintf("git -C %s diff %s %s -- PATH", ws.Repo, workspace.Abbrev(ws.DiffBase()), workspace.Abbrev(ws.Head))
}

// boundPatch keeps the files of a patch that fit in bound bytes, in
// git's order, and lists the others with how to read them. If not even
// the first file fits, its beginning is shown.
func boundPatch(out *capped, bound int, hint string) string {
	files := splitPatch(out.String())
	overflow := out.total > out.limit
	if overflow && len(files) > 0 {
		files[len(files)-1].partial = true // git went on past what was read
	}
	var b strings.Builder
	var left []patchFile
	for _, f := range files {
		if !f.partial && b.Len()+len(f.text) <= bound {
			b.WriteString(f.text)
		} else {
			left = append(left, f)
		}
	}
	var notes []string
	if b.Len() == 0 && len(left) > 0 {
		first := left[0]
		shown := prefix(first.text, lineStart(first.text, bound-500))
		b.WriteString(shown)
		notes = append(notes, fmt.Sprintf("the diff of %s is cut above (%d of its %d bytes shown)", first.path, len(shown), len(first.text)))
		left = left[1:]
	}
	if len(left) > 0 {
		var l strings.Builder
		fmt.Fprintf(&l, "%s left out to keep this answer under %d bytes:", render.Plural(len(left), "file"), diffPatchBytes)
		for i, f := range left {
			if i == diffLeftOut {
				fmt.Fprintf(&l, " and %d more", len(left)-i)
				break
			}
			if i > 0 {
				l.WriteString(",")
			}
			if f.partial {
				fmt.Fprintf(&l, " %s", f.path)
			} else {
				fmt.Fprintf(&l, " %s (+%d -%d)", f.path, f.added, f.deleted)
			}
		}
		notes = append(notes, l.String())
	}
	if overflow {
		notes = append(notes, fmt.Sprintf("git's diff is %d bytes: only its first %d were read, so files after those are not named here", out.total, out.limit))
	}
	if len(notes) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\n… %s.\nstat=true lists every file changed; read one file's whole change with: %s", strings.Join(notes, "; "), hint)
	return b.String()
}

// patchFile is one file's part of a patch.
type patchFile struct {
	path           string
	text           string
	added, deleted int
	// partial: git's output was cut inside this file.
	partial bool
}

// splitPatch cuts git's patch at each "diff --git" line.
func splitPatch(p string) []patchFile {
	var out []patchFile
	for len(p) > 0 {
		end := strings.Index(p[1:], "\ndiff --git ")
		text := p
		if end >= 0 {
			text = p[:end+2]
		}
		p = p[len(text):]
		out = append(out, parseFile(text))
	}
	return out
}

func parseFile(text string) patchFile {
	f := patchFile{text: text}
	var from, to string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git ") && f.path == "":
			if i := strings.LastIndex(line, " b/"); i >= 0 {
				f.path = line[i+3:]
			}
		case strings.HasPrefix(line, "--- ") && from == "" && to == "":
			from = strings.TrimPrefix(line, "--- ")
		case strings.HasPrefix(line, "+++ ") && to == "":
			to = strings.TrimPrefix(line, "+++ ")
		case strings.HasPrefix(line, "+") && to != "":
			f.added++
		case strings.HasPrefix(line, "-") && to != "":
			f.deleted++
		}
	}
	// The ---/+++ names are exact where the header is ambiguous (a path
	// with " b/" in it); /dev/null stands for an added or deleted file.
	name := to
	if name == "/dev/null" || name == "" {
		name = from
	}
	if name != "" && name != "/dev/null" {
		f.path = strings.TrimPrefix(strings.TrimPrefix(name, "b/"), "a/")
	}
	return f
}

// lineStart is the start of the line holding byte n (n if it is one).
func lineStart(s string, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(s) {
		return len(s)
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= 0 {
		return i + 1
	}
	return n
}

// capped keeps the first limit bytes written to it and counts the rest.
// It never fails a write, so git is never cut off mid-diff by a broken
// pipe and its exit status stays the answer.
type capped struct {
	buf   []byte
	limit int
	total int
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += len(p)
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) String() string { return string(c.buf) }
