package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
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
		"offset": integer("Files to skip, in git's order (default 0): an answer that cannot hold every file says which offset " +
			"shows the next ones."),
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
				Offset    int    `json:"offset"`
			}
			if err := decode("diff_session", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			if a.Offset < 0 {
				return Errorf("offset must be 0 or more (it is %d)", a.Offset)
			}
			s, err := w.resolve(ctx, a.SessionID)
			if err != nil {
				return Errorf("%v", err)
			}
			format := workspace.Patch
			if a.Stat {
				format = workspace.StatOnly
			}
			// A patch is read from the offset-th file on: a page is never
			// out of reach behind the capture of those before it.
			stat, patch := &capped{limit: diffCapture}, &pagedPatch{skip: a.Offset, capped: capped{limit: diffCapture}}
			var out io.Writer = patch
			if a.Stat {
				out = stat
			}
			s, err = w.opt.Sessions.Diff(ctx, s.ID, out, sessions.DiffRequest{Options: workspace.DiffOptions{Format: format, Width: 120}})
			if err != nil {
				return diffError(s, a.SessionID, err)
			}
			head := diffHeader(s)
			if stat.total == 0 && patch.files == 0 {
				return Result{Text: head + "\n" + emptyDiff(s)}
			}
			if a.Stat {
				return Result{Text: head + "\n" + pageStat(stat, a.Offset, diffStatBytes-len(head)-1)}
			}
			return Result{Text: head + "\n" + boundPatch(patch, diffPatchBytes-len(head)-1, readHint(s))}
		},
	}
}

// diffError says why there is no diff, and where the change is instead.
func diffError(s *record.Session, id string, err error) Result {
	if errors.Is(err, sessions.ErrInPlace) && s != nil {
		return Errorf("worker %s works in place, in %s: it has no branch of its own, so there is no diff against a base; "+
			"its changes are in that directory already (git status and git diff there show them)", record.ShortID(s.ID), s.WorkingDir)
	}
	return Errorf("cannot diff worker %s: %v", id, err)
}

// diffHeader is the first line: whose change, on which branch, from
// what, how big, and whether it is landed.
func diffHeader(s *record.Session) string {
	ws := s.Workspace
	h := fmt.Sprintf("worker %s · %s · branch %s from %s (%s) · %s", s.ID, s.Status(), ws.Branch, ws.Base, workspace.Abbrev(ws.BaseCommit), s.ChangesText())
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

func emptyDiff(s *record.Session) string {
	ws := s.Workspace
	switch {
	case ws.Preparing():
		return "Its worktree is being prepared: nothing has changed yet."
	case ws.State == record.WorkspaceFailed:
		return "Its worktree could not be made, so it changed nothing: " + clip(ws.Error, 2000)
	}
	return "No changes against its base."
}

// readHint says how to read a file's whole change with git, where the
// change is: the worktree while it exists (its uncommitted work
// included), else the commits it left in the repository.
func readHint(s *record.Session) string {
	ws := s.Workspace
	if ws.State == record.WorkspaceReady {
		return fmt.Sprintf("git -C %s diff %s -- PATH", ws.Path, workspace.Abbrev(ws.DiffBase()))
	}
	return fmt.Sprintf("git -C %s diff %s %s -- PATH", ws.Repo, workspace.Abbrev(ws.DiffBase()), workspace.Abbrev(ws.Head))
}

// noteRoom is what an answer keeps for its closing notes (the files left
// out, named, and how to read one whole): a quarter of it at most.
func noteRoom(bound int) int { return min(2000, bound/4) }

// boundPatch keeps the files of a patch read from its out.skip-th file on,
// in git's order, whole, while they fit in bound bytes (its notes
// included). A file too big for any answer is left out and named, with
// how to read it, and the files after it still shown; the first file that
// would not fit in what is left, or that the capture cut, ends the
// answer, which says the offset that shows it and those after. If
// nothing fits, the beginning of the first file is shown, on whole lines.
func boundPatch(out *pagedPatch, bound int, hint string) string {
	offset := out.skip
	if offset > 0 && offset >= out.files {
		return fmt.Sprintf("offset %d is past the last file: the change has %s.", offset, render.Plural(out.files, "file"))
	}
	files := splitPatch(out.String())
	readTo := offset + len(files) // the files read, whole or in part
	if out.total > out.limit && len(files) > 0 {
		if len(files) > 1 {
			files, readTo = files[:len(files)-1], readTo-1 // the next page reads it whole
		} else {
			files[0].partial = true // larger than any read: left out
		}
	}
	room := bound - noteRoom(bound)
	var b strings.Builder
	var tooBig []patchFile
	next := readTo
	for i, f := range files {
		switch {
		case f.partial || len(f.text) > room:
			tooBig = append(tooBig, f)
			continue
		case b.Len()+len(f.text) > room:
			next = offset + i
		default:
			b.WriteString(f.text)
			continue
		}
		break
	}
	var notes []string
	if b.Len() == 0 && len(tooBig) > 0 && next == out.files {
		first := tooBig[0]
		cut := prefix(first.text, lineStart(first.text, room))
		b.WriteString(cut)
		notes = append(notes, fmt.Sprintf("the diff of %s is cut above (%d of its %d bytes shown)", first.path, len(cut), len(first.text)))
		tooBig = tooBig[1:]
	}
	if len(tooBig) > 0 {
		notes = append(notes, fmt.Sprintf("%s left out to keep this answer under %d bytes:%s", render.Plural(len(tooBig), "file"), diffPatchBytes, nameFiles(tooBig, noteRoom(bound)/3)))
	}
	if next < out.files {
		names := nameFiles(files[next-offset:], noteRoom(bound)/3) // those read
		if names != "" {
			names = ":" + names
		}
		notes = append(notes, fmt.Sprintf("%s more after these: call again with offset=%d for them%s", render.Plural(out.files-next, "file"), next, names))
	}
	if len(notes) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\n… %s.\nstat=true lists every file changed; read one file's whole change with: %s", strings.Join(notes, "; "), clip(hint, 300))
	return b.String()
}

// nameFiles names files, with their counts, in about room bytes.
func nameFiles(files []patchFile, room int) string {
	var l strings.Builder
	for i, f := range files {
		if i == diffLeftOut || l.Len() > room {
			fmt.Fprintf(&l, " and %d more", len(files)-i)
			break
		}
		if i > 0 {
			l.WriteString(",")
		}
		if f.partial {
			fmt.Fprintf(&l, " %s", clip(f.path, 100))
		} else {
			fmt.Fprintf(&l, " %s (+%d -%d)", clip(f.path, 100), f.added, f.deleted)
		}
	}
	return l.String()
}

// pageStat keeps the lines of a diffstat from the offset-th file on while
// they fit in bound bytes, then git's summary line, and says which offset
// shows the next files. (The --summary lines git adds after, one per file
// created or deleted, are left out: the file lines name them all.)
func pageStat(out *capped, offset, bound int) string {
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	var files []string
	summary := ""
	for _, l := range lines {
		if statSummary().MatchString(l) {
			summary = l
			break
		}
		files = append(files, l)
	}
	if offset > 0 && offset >= len(files) {
		return fmt.Sprintf("offset %d is past the last file: the change has %s.", offset, render.Plural(len(files), "file"))
	}
	room := bound - len(summary) - noteRoom(bound)
	var b strings.Builder
	shown := 0
	for _, l := range files[offset:] {
		if b.Len()+len(l)+1 > room {
			break
		}
		b.WriteString(l + "\n")
		shown++
	}
	b.WriteString(summary)
	if next := offset + shown; next < len(files) || offset > 0 {
		fmt.Fprintf(&b, "\n… files %d-%d of %d shown", offset+1, next, len(files))
		if next < len(files) {
			fmt.Fprintf(&b, "; call again with stat=true and offset=%d for the next", next)
		}
		b.WriteString(".")
	}
	if out.total > out.limit {
		fmt.Fprintf(&b, "\n… git's diffstat is %d bytes: only its first %d were read.", out.total, out.limit)
	}
	return b.String()
}

// statSummary is git's last diffstat line: " 3 files changed, ...".
var statSummary = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ \d+ files? changed`) })

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

// pagedPatch keeps git's patch from its skip-th file on (a file begins at
// a "diff --git " line) up to limit bytes, and counts every file: a page
// of a patch larger than what is read is read from its own first file,
// not from the patch's. Like capped, it never fails a write.
type pagedPatch struct {
	skip  int
	files int // the files begun
	// capped holds the bytes from the skip-th file on: at most its limit,
	// and its total counts them all.
	capped
	head []byte // the current line's first bytes, while they may begin a file
	mid  bool   // within a line, past its head
}

const fileHeader = "diff --git "

func (p *pagedPatch) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if p.mid {
			k := len(b)
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				k, p.mid = i+1, false
			}
			p.keep(b[:k])
			b = b[k:]
			continue
		}
		// A line's beginning, gathered until it tells a file's header.
		k := min(len(fileHeader)-len(p.head), len(b))
		if i := bytes.IndexByte(b[:k], '\n'); i >= 0 {
			k = i + 1
		}
		p.head, b = append(p.head, b[:k]...), b[k:]
		ended := p.head[len(p.head)-1] == '\n'
		if len(p.head) < len(fileHeader) && !ended {
			continue // b is spent: the rest comes with the next write
		}
		if string(p.head) == fileHeader {
			p.files++
		}
		p.keep(p.head)
		p.head, p.mid = p.head[:0], !ended
	}
	return n, nil
}

// keep takes b if it is of a file from the skip-th on.
func (p *pagedPatch) keep(b []byte) {
	if p.files > p.skip {
		p.capped.Write(b)
	}
}
