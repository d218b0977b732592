package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

func (w *workers) updateTool() Tool {
	schema := idSchema()
	return Tool{
		Name: "update_session",
		Description: "Bring a finished worker's branch up to date with the branch checked out in the run's dir (what " +
			"land_session lands into), by merging that branch into it, so that its change lands without conflict. " +
			"If the merge conflicts, the worker is sent a follow-up to resolve the conflicts: wait for it, review " +
			"diff_session, then land_session.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			id, err := w.idArg("update_session", args, schema)
			if err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, id)
			if err != nil {
				return Errorf("%v", err)
			}
			res, err := w.opt.Sessions.Update(ctx, s.ID, w.landingBranch(ctx, s))
			sid := record.ShortID(s.ID)
			switch {
			case errors.Is(err, sessions.ErrRunning):
				return Errorf("refused: worker %s is still running: wait for it (wait) or stop it (end_session), then call update_session again", sid)
			case errors.Is(err, sessions.ErrInPlace):
				return Errorf("worker %s works in place, in %s: it has no branch of its own to update", sid, s.WorkingDir)
			case err != nil && res == nil:
				return Errorf("worker %s could not be updated: %s", sid, cliFree(err))
			}
			out := map[string]any{"session_id": s.ID, "from": res.From, "commit": res.Commit}
			switch {
			case len(res.Conflict) > 0:
				out["conflict"] = res.Conflict
				note := fmt.Sprintf("merging %s into its branch conflicts in %s; ", res.From, strings.Join(res.Conflict, ", "))
				if res.FollowUp != nil {
					note += fmt.Sprintf("the worker was asked to resolve them, as turn %d: wait for it, review its diff, then land it", res.FollowUp.Turn)
				} else {
					note += "the follow-up asking the worker to resolve them was not sent"
				}
				out["note"] = note
			case res.UpToDate:
				out["up_to_date"] = true
				out["note"] = fmt.Sprintf("its branch has all of %s already", res.From)
			default:
				out["changes"] = res.Session.ChangesText()
				out["note"] = fmt.Sprintf("merged %s (%s) into its branch without conflict; it can be landed now", res.From, workspace.Abbrev(res.Commit))
			}
			if err != nil {
				out["error"] = cliFree(err)
				r := JSON(out)
				r.IsError = true
				return r
			}
			return JSON(out)
		},
	}
}

// landingBranch is the branch checked out in the run's dir when it is in
// the worker's repository: the branch land_session lands into, which is
// what has to be merged for the landing to succeed. "" (the worker's
// base branch) otherwise.
func (w *workers) landingBranch(ctx context.Context, s *record.Session) string {
	if s.Workspace == nil {
		return ""
	}
	repo, err := workspace.Find(ctx, w.opt.Dir)
	if err != nil || repo.CommonDir != s.Workspace.GitDir {
		return ""
	}
	b, err := repo.CurrentBranch(ctx)
	if err != nil {
		return ""
	}
	return b
}
