package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// lastMessageBound is how much of a worker's last message wait returns;
// check_session returns more.
const lastMessageBound = 4000

func (w *workers) waitTool() Tool {
	schema := object(map[string]prop{
		"session_ids": strArray("Workers to wait for (ids or unique prefixes). Omit for all your unfinished workers " +
			"and those that finished since you last looked."),
		"timeout_s": num(fmt.Sprintf("Longest wait in seconds (default %d, clamped to %g..%d).", DefaultWaitSeconds, w.minWait(), MaxWaitSeconds)),
		"mode":      enum(`"any" (default) returns when one has finished, "all" when all have.`, "any", "all"),
	})
	return Tool{
		Name: "wait",
		Description: "Block until workers finish, without polling: until one of them (mode any) or all of them (mode all) " +
			"has finished, or the timeout. A worker already finished counts at once. Returns each finished worker's status " +
			"and last message, which are still running, and timed_out. Prefer this to sleep.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				SessionIDs []string `json:"session_ids"`
				TimeoutS   *float64 `json:"timeout_s"`
				Mode       string   `json:"mode"`
			}
			if err := decode("wait", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			if a.Mode != "" && a.Mode != "any" && a.Mode != "all" {
				return Errorf("mode must be \"any\" or \"all\", not %q", a.Mode)
			}
			return w.wait(ctx, a.SessionIDs, a.TimeoutS, a.Mode != "all")
		},
	}
}

// minWait is wait's shortest timeout, in seconds.
func (w *workers) minWait() float64 {
	if w.opt.MinWait > 0 {
		return w.opt.MinWait.Seconds()
	}
	return MinWaitSeconds
}

// waitTimeout applies the default and the clamp; note says what changed.
func (w *workers) waitTimeout(req *float64) (time.Duration, string) {
	lo, hi := w.minWait(), float64(MaxWaitSeconds)
	if c := w.opt.WaitCap; c > 0 && c.Seconds() < hi {
		hi = math.Max(c.Seconds(), lo)
	}
	v := float64(DefaultWaitSeconds)
	if req != nil {
		v = *req
	}
	note := ""
	switch {
	case math.IsNaN(v) || v < lo:
		note = fmt.Sprintf("timeout_s %g raised to the minimum, %g", v, lo)
		v = lo
	case v > hi:
		note = fmt.Sprintf("timeout_s %g lowered to the maximum, %g", v, hi)
		v = hi
	}
	v = math.Min(v, hi)
	return time.Duration(v * float64(time.Second)), note
}

func (w *workers) wait(ctx context.Context, ids []string, timeoutS *float64, anyOne bool) Result {
	timeout, note := w.waitTimeout(timeoutS)
	targets, err := w.waitTargets(ctx, ids)
	if err != nil {
		return Errorf("%v", err)
	}
	if len(targets) == 0 {
		return JSON(map[string]any{"finished": []any{}, "running": []any{}, "timed_out": false,
			"note": "you have no unfinished workers and none finished unread: nothing to wait for"})
	}
	began := time.Now()
	latest, timedOut, err := w.block(ctx, targets, timeout, anyOne)
	if err != nil {
		return Errorf("%v", err)
	}
	shown := w.fitting(targets, latest)
	finished, running, unread := []map[string]any{}, []map[string]any{}, 0
	for _, t := range targets {
		s := latest[t.ID]
		switch {
		case s == nil:
			finished = append(finished, map[string]any{"session_id": t.ID, "status": "removed", "note": "its record was deleted"})
		case s.Settled() && shown[s.ID] != nil:
			w.seen.Mark(s)
			finished = append(finished, shown[s.ID])
		case s.Settled():
			unread++ // still news to the next wait
		default:
			running = append(running, map[string]any{"session_id": s.ID, "status": s.Status(), "turn": s.Turn})
		}
	}
	out := map[string]any{"finished": finished, "running": running, "timed_out": timedOut,
		"waited_s": math.Round(time.Since(began).Seconds()*10) / 10}
	if unread > 0 {
		out["finished_left_out"] = unread
		note = strings.TrimPrefix(note+fmt.Sprintf("; %d more workers finished than this answer holds: wait again to read them (they come first)", unread), "; ")
	}
	if note != "" {
		out["note"] = note
	}
	return JSON(out)
}

// fitting is the answers of the finished targets that fit one wait's
// answer, by id: what the model has not read comes first, so that when not
// all fits, the next wait, for the same workers or any, goes on from there.
func (w *workers) fitting(targets []*record.Session, latest map[string]*record.Session) map[string]map[string]any {
	shown := map[string]map[string]any{}
	room := budget{left: waitAnswerBytes}
	for _, unread := range []bool{true, false} {
		for _, t := range targets {
			s := latest[t.ID]
			if s == nil || !s.Settled() || w.seen.Unread(s) != unread {
				continue
			}
			e := map[string]any{"session_id": s.ID, "status": s.Status(), "turn": s.Turn, "last_message": clip(s.LastMessage, lastMessageBound)}
			if s.Error != "" {
				e["error"] = clip(s.Error, 1000)
			}
			if room.take(e) {
				shown[s.ID] = e
			}
		}
	}
	return shown
}

// waitTargets resolves the named workers, or picks the default set: the
// unfinished ones and those finished but not yet read.
func (w *workers) waitTargets(ctx context.Context, ids []string) ([]*record.Session, error) {
	var out []*record.Session
	seen := map[string]bool{}
	if len(ids) == 0 {
		list, err := w.mine(ctx, "")
		if err != nil {
			return nil, fmt.Errorf("cannot list your workers: %v", err)
		}
		for _, s := range list {
			if !s.Settled() || w.seen.Unread(s) {
				out = append(out, s)
			}
		}
		return out, nil
	}
	for _, id := range ids {
		s, err := w.resolve(ctx, id)
		if err != nil {
			return nil, err
		}
		if !seen[s.ID] {
			seen[s.ID] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// block follows the targets' records until the condition holds or the
// timeout passes. It is driven by the subscription (file events and
// supervisors' exits), never by polling. A removed session is nil in the
// result.
func (w *workers) block(ctx context.Context, targets []*record.Session, timeout time.Duration, anyOne bool) (map[string]*record.Session, bool, error) {
	latest := map[string]*record.Session{}
	ids := make([]string, len(targets))
	for i, t := range targets {
		ids[i], latest[t.ID] = t.ID, t
	}
	done := func() bool {
		settled := 0
		for _, id := range ids {
			if s := latest[id]; s == nil || s.Settled() {
				settled++
			}
		}
		return settled == len(ids) || anyOne && settled > 0
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sub, err := w.opt.Sessions.Subscribe(wctx, watch.SubscribeOptions{IDs: ids})
	if err != nil {
		return nil, false, fmt.Errorf("cannot follow the workers: %v", err)
	}
	defer sub.Close()
	for synced := false; !synced || !done(); {
		select {
		case u, ok := <-sub.C():
			if !ok {
				if err := sub.Err(); err != nil && wctx.Err() == nil {
					return nil, false, fmt.Errorf("following the workers failed: %v", err)
				}
				return w.expired(ctx, latest)
			}
			w.apply(latest, u)
			synced = synced || u.Synced
		case <-wctx.Done():
			return w.expired(ctx, latest)
		}
	}
	return latest, false, nil
}

// expired is the end of a wait whose context ended: the run's own end is
// an error, the wait's timeout is a result.
func (w *workers) expired(ctx context.Context, latest map[string]*record.Session) (map[string]*record.Session, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("the wait was interrupted: %v", context.Cause(ctx))
	}
	return latest, true, nil
}

func (w *workers) apply(latest map[string]*record.Session, u watch.Update) {
	if u.ID == "" {
		return
	}
	if u.Removed {
		latest[u.ID] = nil
		return
	}
	if u.Session == nil {
		return
	}
	prev := latest[u.ID]
	latest[u.ID] = u.Session
	if w.opt.Progress != nil && u.Session.Settled() && (prev == nil || !prev.Settled()) {
		w.opt.Progress(Progress{Tool: "wait", Session: u.Session,
			Text: fmt.Sprintf("worker %s %s", record.ShortID(u.ID), u.Session.Status())})
	}
}
