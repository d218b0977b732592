package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The text of a session's worktree and of what its turns changed, one way
// for show, logs, the dashboard and the orchestrator.

// Field is one labelled line of a session's description.
type Field struct{ Name, Text string }

// WorkspaceFields describe where a session's agent works and what became
// of its change: the worktree, its branch and base, and the change
// (landed, conflicting, or how big and how to review and land it).
func WorkspaceFields(s *record.Session, now time.Time) []Field {
	ws := s.Workspace
	if ws == nil {
		return []Field{{"worktree", "none: it works in place, in " + SafeLine(s.WorkingDir)}}
	}
	id := record.ShortID(s.ID)
	base := SafeLine(ws.Base)
	if ws.BaseCommit != "" && !strings.HasPrefix(ws.BaseCommit, ws.Base) {
		base += " at " + workspace.Short(ws.BaseCommit)
	}
	if ws.WithChanges {
		base += " with the uncommitted changes of " + SafeLine(ws.Origin)
	}
	out := []Field{{"worktree", SafeLine(ws.Path)}, {"branch", SafeLine(ws.Branch) + ", from " + base}}
	var change string
	switch {
	case s.WorktreeAwaitsJob():
		change = "none yet: the worktree is made once its job runs"
	case ws.Preparing():
		change = "none yet: the worktree is being made"
	case ws.State == record.WorkspaceFailed && ws.Error == record.NeverMade:
		change = "none: " + record.NeverMade
	case ws.State == record.WorkspaceFailed:
		change = "none: the worktree could not be made"
	case len(ws.Conflict) > 0:
		change = fmt.Sprintf("conflict in %s: zwarm update %s merges the base in and has the worker resolve it",
			SafeLine(strings.Join(ws.Conflict, ", ")), id)
	case ws.LandedNow():
		l := ws.Landed
		change = fmt.Sprintf("landed into %s as %s (%s, %s)", SafeLine(l.Into), workspace.Short(l.Commit), l.Strategy, Ago(now.Sub(l.At)))
	case ws.Changes == nil && ws.Error != "":
		change = "not committed: zwarm could not commit the worker's work (below)"
	case ws.Changes == nil && s.LeftUncommitted():
		change = fmt.Sprintf("not committed: the turn ended without its commit (its supervisor ended first); zwarm diff %s shows what the worktree holds, zwarm land %s commits and lands it", id, id)
	case ws.Changes == nil:
		change = "not measured yet (the first turn has not ended)"
	case ws.Changes.Empty():
		change = "none: the worker changed no file"
	default:
		change = ws.Changes.String() + fmt.Sprintf(", not landed: zwarm diff %s shows it, zwarm land %s lands it", id, id)
	}
	out = append(out, Field{"changes", change})
	if n := len(ws.Earlier); n > 0 {
		var was []string
		for _, l := range ws.Earlier[max(0, n-3):] {
			was = append(was, fmt.Sprintf("into %s as %s (%s)", SafeLine(l.Into), workspace.Short(l.Commit), Ago(now.Sub(l.At))))
		}
		text := "earlier: " + strings.Join(was, "; ")
		if n > 3 {
			text = fmt.Sprintf("earlier, %d times; the last three %s", n, strings.Join(was, "; "))
		}
		out = append(out, Field{"landed", text + "; the changes above came after"})
	}
	if ws.State == record.WorkspaceRemoved {
		out[0].Text += " (removed after landing; a follow-up makes it again)"
	}
	if ws.Error != "" && ws.Error != record.NeverMade { // said on the changes line
		out = append(out, Field{"", ErrorText(ws.Error)})
	}
	return out
}

// DenialsText says how many tool calls a session's agent was refused and
// how to allow them, "" when none was.
func DenialsText(s *record.Session) string {
	if s.Denied == 0 {
		return ""
	}
	var first []string
	for _, t := range s.Turns {
		for _, d := range t.Denials {
			if len(first) < 3 {
				first = append(first, denial(d))
			}
		}
	}
	msg := fmt.Sprintf("%s refused by the agent's permissions", Plural(s.Denied, "tool call"))
	if len(first) > 0 {
		msg += ": " + strings.Join(first, "; ")
	}
	how := "allow them with --sandbox danger-full-access, or name the tools in claude.toml (args = [\"--allowedTools\", \"Bash(go test *)\"])"
	if s.Adapter != "claude" {
		how = "allow them with a wider --sandbox"
	}
	return msg + ". The agent could not do that work; " + how
}

func denial(d record.Denial) string {
	if d.Input == "" {
		return SafeLine(d.Tool)
	}
	return SafeLine(d.Tool) + " " + clipRunes(SafeLine(d.Input), 80)
}

// turnWork is what a turn changed (its commit and files), what zwarm
// undid of the worker's doing before committing it, and what its agent
// was refused, under its end line.
func turnWork(t record.Turn) []Line {
	var out []Line
	if t.Commit != "" {
		files := strings.Join(t.Files, ", ")
		if t.FilesOmitted > 0 {
			files += fmt.Sprintf(" and %d more", t.FilesOmitted)
		}
		out = append(out, Line{Kind: Done, Indent: 1, Text: "── committed " + workspace.Short(t.Commit) + ": " + clipRunes(SafeLine(files), 300)})
	}
	for _, u := range t.Undone {
		out = append(out, Line{Kind: Error, Indent: 1, Text: "── zwarm " + clipRunes(SafeLine(u), 300)})
	}
	if t.UndoneOmitted > 0 {
		out = append(out, Line{Kind: Error, Indent: 1, Text: fmt.Sprintf("── and undid %d more: the session's supervisor.log names them", t.UndoneOmitted)})
	}
	if t.Denied > 0 {
		var what []string
		for _, d := range t.Denials {
			what = append(what, denial(d))
		}
		text := fmt.Sprintf("── %s denied by the agent's permissions", Plural(t.Denied, "tool call"))
		if len(what) > 0 {
			text += ": " + clipRunes(strings.Join(what, "; "), 300)
		}
		out = append(out, Line{Kind: Error, Indent: 1, Text: text})
	}
	return out
}
