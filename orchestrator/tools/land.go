package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// landFiles bounds the files a landing lists.
const landFiles = 50

func (w *workers) landTool() Tool {
	schema := object(map[string]prop{
		"session_id": str("The worker's id (or a unique prefix)."),
		"strategy": enum("squash (the default): one commit of the whole change; merge: a merge commit of the worker's branch; "+
			"rebase: the worker's own commits, one per turn, replayed.", string(workspace.Squash), string(workspace.Merge), string(workspace.Rebase)),
		"verify": str("A shell command (the project's check: \"go test ./...\", \"npm test\") run on exactly what would land, in a " +
			"checkout of its own, before anything lands: if it fails, nothing lands and its output's end is returned."),
		"verify_timeout_seconds": integer("How long verify may run before it is stopped and nothing lands (default 1800)."),
		"into":                   str("The branch to land into (default: the one checked out in the run's dir)."),
	}, "session_id")
	return Tool{
		Name: "land_session",
		Description: "Land a finished worker's change: commit it onto the branch checked out in the run's dir, whose files it " +
			"updates, then remove the worker's worktree and branch. It refuses a worker still running and a change that " +
			"conflicts with the branch (nothing is changed then). Review diff_session first, and pass verify (the project's " +
			"tests) so that a change that breaks them never lands.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				SessionID     string `json:"session_id"`
				Strategy      string `json:"strategy"`
				Verify        string `json:"verify"`
				VerifyTimeout *int   `json:"verify_timeout_seconds"` // nil: the default
				Into          string `json:"into"`
			}
			if err := decode("land_session", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			strategy, err := workspace.ParseStrategy(a.Strategy)
			if err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, a.SessionID)
			if err != nil {
				return Errorf("%v", err)
			}
			var timeout time.Duration
			if a.VerifyTimeout != nil {
				if *a.VerifyTimeout <= 0 {
					return Errorf("verify_timeout_seconds must be more than 0 (it is %d); leave it out for the default", *a.VerifyTimeout)
				}
				timeout = time.Duration(*a.VerifyTimeout) * time.Second
			}
			res, err := w.opt.Sessions.Land(ctx, s.ID, sessions.LandOptions{Strategy: strategy, Dir: w.opt.Dir, Into: a.Into,
				Verify: strings.TrimSpace(a.Verify), VerifyTimeout: timeout})
			switch {
			case err != nil && res != nil && res.Commit != "":
				// It landed, and something after (recording it) failed:
				// the model must not land it again or think it did not.
				r := landResult(res, strategy, w.opt.Dir)
				r.Text, r.IsError = r.Text+"\nbut: "+cliFree(err), true
				return r
			case err != nil:
				return w.landError(ctx, s, err)
			}
			return landResult(res, strategy, w.opt.Dir)
		},
	}
}

// landResult says what the landing did and what to do next.
func landResult(res *sessions.LandResult, strategy workspace.Strategy, dir string) Result {
	s := res.Session
	out := map[string]any{"session_id": s.ID, "landed": false}
	switch {
	case res.Already:
		out["already"], out["into"], out["commit"] = true, res.Into, res.Commit
		out["note"] = fmt.Sprintf("it was landed into %s as %s before, and has changed nothing since: there is nothing new to land", res.Into, workspace.Abbrev(res.Commit))
	case res.Nothing:
		out["nothing"], out["into"] = true, res.Into
		out["note"] = fmt.Sprintf("nothing to land: the worker changed nothing, or %s has all of its change already", res.Into)
	default:
		if l := s.Workspace.Landed; l != nil {
			strategy = l.Strategy
		}
		out["landed"], out["into"], out["commit"], out["strategy"] = true, res.Into, res.Commit, strategy
		out["changes"], out["worktree_removed"], out["verified"] = res.Stat.String(), res.Removed, res.Verified
		files := res.Files
		if len(files) > landFiles {
			out["files_omitted"] = len(files) - landFiles
			files = files[:landFiles]
		}
		out["files"] = files
		if res.Verified {
			out["note"] = fmt.Sprintf("%s now has the change as commit %s, verified before it landed", res.Into, workspace.Abbrev(res.Commit))
		} else {
			out["note"] = fmt.Sprintf("%s now has the change as commit %s: it was not verified, so verify it in %s (build, run the tests)",
				res.Into, workspace.Abbrev(res.Commit), dir)
		}
	}
	return JSON(out)
}

// landError turns a refused landing into what the model can do about it.
func (w *workers) landError(ctx context.Context, s *record.Session, err error) Result {
	id := record.ShortID(s.ID)
	var conflict *sessions.LandConflictError
	var dirty *sessions.DirtyError
	var verify *workspace.VerifyError
	switch {
	case errors.As(err, &verify):
		return Errorf("refused: verify %q failed with exit code %d on exactly what worker %s's change would make; nothing was landed. "+
			"Ask the worker to fix it (converse, with what failed), wait for it, then call land_session again with the same verify. Its output ends:\n%s",
			verify.Command, verify.Code, id, verify.Tail)
	case errors.Is(err, sessions.ErrRunning):
		return Errorf("refused: worker %s is still running, and only a finished worker's change can be landed: "+
			"wait for it (wait) or stop it (end_session), then call land_session again", id)
	case errors.As(err, &conflict):
		return Errorf("refused: worker %s's change conflicts with %s in %s; nothing was changed. "+
			"update_session merges %s into the worker's branch and asks the worker to resolve the conflicts; "+
			"wait for it, review diff_session, then call land_session again. Or delegate the change anew, from %s as it is now.",
			id, conflict.Into, strings.Join(conflict.Files, ", "), conflict.Into, conflict.Into)
	case errors.As(err, &dirty):
		return Errorf("refused: %s has uncommitted changes to %s, which landing worker %s would overwrite; nothing was changed "+
			"and they are intact. They are not worker %s's: do not discard them. If this run made them (a worker that worked "+
			"in place), commit them, then call land_session again; otherwise leave the change unlanded and say so in your summary.",
			dirty.Checkout, strings.Join(dirty.Files, ", "), id, id)
	case errors.Is(err, sessions.ErrInPlace):
		return Errorf("worker %s worked in place, in %s: its changes are in that directory already, so there is nothing to land; "+
			"git status and git diff there show them", id, s.WorkingDir)
	case errors.Is(err, sessions.ErrUnresolved):
		files := "its files"
		if now, gerr := w.opt.Sessions.Get(ctx, s.ID); gerr == nil && now.Workspace != nil && len(now.Workspace.Conflict) > 0 {
			files = strings.Join(now.Workspace.Conflict, ", ")
		}
		return Errorf("refused: worker %s's branch still holds conflict markers from update_session in %s; nothing was changed. "+
			"Ask the worker to resolve them (converse), wait for it, then call land_session again", id, files)
	case errors.Is(err, config.ErrInvalidRequest):
		return Errorf("refused: %s. land_session lands into the branch checked out in the run's dir (%s)", cliFree(err), w.opt.Dir)
	}
	return Errorf("worker %s could not be landed: %s", id, cliFree(err))
}

// cliFree drops the hints of the session core's errors that name the
// command line's flags, which a model calling a tool cannot pass.
func cliFree(err error) string {
	return cliHints.Replace(err.Error())
}

var cliHints = strings.NewReplacer(
	", or name the branch with --into", ", or name the branch with into",
	", or name it with --into", ", or name it with into",
	" (check that one out, or use --into)", " (check that one out, or pass into)",
	" (--verify-timeout sets the limit)", " (verify_timeout_seconds sets the limit)",
	"land it with --squash or --merge", "land it with strategy squash or merge",
	"name the branch to merge with --from", "check out the branch to merge in the run's dir",
)
