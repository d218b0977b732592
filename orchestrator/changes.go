package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// What became of the workers' changes, for the model (the observation's
// line on them) and for the user (the run's closing account of what was
// landed and what was left on the workers' branches).

// worktrees reports whether the run's workers get git worktrees of their
// own by default: isolation is not "none" and the run's dir is in a git
// repository. The system prompt says how their changes are landed then.
func (r *Run) worktrees(ctx context.Context) bool {
	iso := r.set.Isolation
	if iso == "" {
		if cfg, err := r.opt.Sessions.Config(); err == nil {
			iso = cfg.Worktrees.Isolation
		}
	}
	if iso == config.IsolationNone {
		return false
	}
	_, err := workspace.Find(ctx, r.set.Dir)
	return err == nil
}

// workerChanges is what became of each worker's change, in the order the
// workers started; workers with a worktree and no change are left out.
// It is nil when no worker had a worktree: then every change is in
// place and there is nothing to tell apart.
func workerChanges(workers []*record.Session, order []string) []runs.WorkerChange {
	rank := map[string]int{}
	for i, id := range order {
		rank[id] = i
	}
	sorted := append([]*record.Session(nil), workers...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank[sorted[i].ID] < rank[sorted[j].ID] })
	var out []runs.WorkerChange
	isolated := false
	for _, s := range sorted {
		c := runs.WorkerChange{Session: s.ID, Task: render.Clip(s.Task, 120), Running: !s.Settled()}
		ws := s.Workspace
		switch {
		case ws == nil:
			c.Outcome = runs.ChangeInPlace
		case ws.LandedNow():
			isolated = true
			c.Outcome, c.Into, c.Commit = runs.ChangeLanded, ws.Landed.Into, ws.Landed.Commit
			if ws.Changes != nil {
				c.Changes = ws.Changes.String()
			}
		default:
			isolated = true
			if ws.State == record.WorkspaceFailed || (!c.Running && (ws.Changes == nil || ws.Changes.Empty()) && len(ws.Conflict) == 0) {
				continue // nothing to land
			}
			c.Outcome, c.Branch, c.Changes = runs.ChangeUnlanded, ws.Branch, s.ChangesText()
			if ws.Changes != nil && !ws.Changes.Empty() {
				c.Changes = ws.Changes.String()
			}
			if ws.Landed != nil {
				c.Into, c.Commit = ws.Landed.Into, ws.Landed.Commit
			}
		}
		out = append(out, c)
	}
	if !isolated {
		return nil
	}
	return out
}

// ChangesText is the closing account of the workers' changes, for the
// run's summary and its outcome ("" when there is none to give).
func ChangesText(changes []runs.WorkerChange) string {
	if len(changes) == 0 {
		return ""
	}
	var landed, unlanded, inPlace []string
	for _, c := range changes {
		id := record.ShortID(c.Session)
		switch c.Outcome {
		case runs.ChangeLanded:
			line := fmt.Sprintf("%s into %s as %s", id, c.Into, workspace.Abbrev(c.Commit))
			if c.Changes != "" {
				line += " (" + c.Changes + ")"
			}
			landed = append(landed, line+": "+c.Task)
		case runs.ChangeUnlanded:
			line := fmt.Sprintf("%s %s on branch %s", id, c.Changes, c.Branch)
			if c.Running {
				line += " (still running)"
			}
			if c.Into != "" {
				line += fmt.Sprintf(" (an earlier part landed into %s as %s)", c.Into, workspace.Abbrev(c.Commit))
			}
			unlanded = append(unlanded, line+": "+c.Task)
		case runs.ChangeInPlace:
			inPlace = append(inPlace, id+": "+c.Task)
		}
	}
	var b strings.Builder
	list := func(head string, lines []string) {
		if len(lines) == 0 {
			return
		}
		b.WriteString("\n" + head)
		for _, l := range lines {
			b.WriteString("\n- " + l)
		}
	}
	if len(landed) == 0 {
		b.WriteString("\nLanded: none.")
	}
	list("Landed:", landed)
	list("Not landed (the change is still on the worker's branch):", unlanded)
	list("Worked in place (what they changed is in their directories already):", inPlace)
	return strings.TrimPrefix(b.String(), "\n")
}

// Bounds of the observation's line on changes.
const (
	observedWorkers = 12
	observedFiles   = 5
)

// changesLine is the observation's line on the workers' changes: for each
// worker with a worktree, the size of its change, the files of one not
// landed yet, and whether it is landed. "" when no worker has one.
func changesLine(workers []*record.Session, files map[string]changedFiles) string {
	var items []string
	more := 0
	for _, s := range workers {
		ws := s.Workspace
		if ws == nil {
			continue
		}
		if len(items) == observedWorkers {
			more++
			continue
		}
		item := record.ShortID(s.ID) + " " + s.ChangesText()
		switch {
		case !s.Settled():
			item += " (running)"
		case ws.LandedNow():
			item += " into " + ws.Landed.Into
		case len(ws.Conflict) > 0:
			item += " in " + listFiles(ws.Conflict)
		case ws.Changes != nil && !ws.Changes.Empty():
			if f, ok := files[s.ID]; ok && f.key == filesKey(ws) && len(f.names) > 0 {
				item += ": " + listFiles(f.names)
			}
			item += ", not landed"
		}
		items = append(items, item)
	}
	if len(items) == 0 {
		return ""
	}
	line := "Worktrees (diff_session reviews a change, land_session brings it into the run's dir): " + strings.Join(items, "; ")
	if more > 0 {
		line += fmt.Sprintf("; and %d more (list_sessions)", more)
	}
	return line + "."
}

func listFiles(names []string) string {
	if len(names) <= observedFiles {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:observedFiles], ", "), len(names)-observedFiles)
}

// changedFiles are the files of a worker's change as of key.
type changedFiles struct {
	key   string
	names []string
}

// filesKey changes whenever the worker's change can have: a new turn's
// commit, a landing.
func filesKey(ws *record.Workspace) string { return ws.DiffBase() + ".." + ws.Head }

// readChangedFiles brings the files of the settled workers' unlanded
// changes up to date, asking git only about those whose change moved.
func (r *Run) readChangedFiles(ctx context.Context) {
	if r.files == nil {
		r.files = map[string]changedFiles{}
	}
	for _, s := range r.workers {
		ws := s.Workspace
		if ws == nil || !s.Settled() || ws.LandedNow() || ws.Changes == nil || ws.Changes.Empty() {
			continue
		}
		key := filesKey(ws)
		if f, ok := r.files[s.ID]; ok && f.key == key {
			continue
		}
		var out bytes.Buffer
		if _, err := r.opt.Sessions.Diff(ctx, s.ID, &out, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}); err != nil {
			// Said once per change: the observation shows its size alone.
			r.opt.Log.Warn("list a worker's changed files", "session", s.ID, "err", err)
			r.files[s.ID] = changedFiles{key: key}
			continue
		}
		r.files[s.ID] = changedFiles{key: key, names: lines(out.String())}
	}
}

// lines are the non-empty lines of git's answer.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
