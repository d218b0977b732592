package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

// fullMessageBound bounds check_session's last message: the whole message
// of any sensible worker, but not an unbounded one.
const fullMessageBound = 20000

func idSchema() json.RawMessage {
	return object(map[string]prop{"session_id": str("The worker's id (or a unique prefix).")}, "session_id")
}

func (w *workers) idArg(tool string, args json.RawMessage, schema json.RawMessage) (string, error) {
	var a struct {
		SessionID string `json:"session_id"`
	}
	if err := decode(tool, args, &a, schema); err != nil {
		return "", err
	}
	return a.SessionID, nil
}

func (w *workers) checkTool() Tool {
	schema := idSchema()
	return Tool{
		Name: "check_session",
		Description: "A worker in full: status, turns, token usage and cost, its last message in full, " +
			"the files it reported changing, the size of its change (and whether it is landed) and its error. " +
			"Read this before trusting a worker's work.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			id, err := w.idArg("check_session", args, schema)
			if err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, id)
			if err != nil {
				return Errorf("%v", err)
			}
			s, turns, err := w.opt.Sessions.Transcript(ctx, s.ID)
			if err != nil && s == nil {
				return Errorf("cannot read worker %s: %v", id, err)
			}
			w.seen.Mark(s)
			out := map[string]any{
				"session_id": s.ID, "status": s.Status(), "task": clip(s.Task, 2000), "adapter": s.Adapter, "model": s.Model,
				"working_dir": s.WorkingDir, "turns": s.Turn, "usage": s.Usage, "cost_usd": roundCost(s.CostUSD),
				"runtime_s": math.Round(s.Runtime(time.Now()).Seconds()), "last_message": clip(s.LastMessage, fullMessageBound),
				"pending_follow_ups": s.PendingInjects, "changes": s.ChangesText(),
			}
			files := filesChanged(turns)
			out["files_changed"] = files[:min(len(files), filesShown)]
			if len(files) > filesShown {
				out["files_changed_total"] = len(files)
				out["files_note"] = fmt.Sprintf("the first %d of %d files; diff shows the whole change, file by file", filesShown, len(files))
			}
			if ws := s.Workspace; ws != nil {
				out["branch"] = ws.Branch
				if ws.LandedNow() {
					out["landed_into"] = ws.Landed.Into
				}
			}
			if s.Error != "" {
				out["error"] = clip(s.Error, 4000)
			}
			if err != nil {
				out["note"] = fmt.Sprintf("its turns could not all be read: %v", err)
			}
			return JSON(out)
		},
	}
}

// countByStatus says how many of each status, in the order of
// record.Statuses: "3 completed, 1 failed".
func countByStatus(n map[record.Status]int) string {
	var parts []string
	for _, st := range record.Statuses {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	return strings.Join(parts, ", ")
}

// filesChanged is every file the worker reported changing, once each,
// with the last kind of change.
func filesChanged(turns []watch.TurnLog) []record.FileChange {
	out := []record.FileChange{}
	at := map[string]int{}
	for _, tl := range turns {
		for _, ev := range record.Steps(tl.Events) {
			for _, c := range ev.Changes {
				if i, ok := at[c.Path]; ok {
					out[i].Kind = c.Kind
					continue
				}
				at[c.Path] = len(out)
				out = append(out, c)
			}
		}
	}
	return out
}

func (w *workers) peekTool() Tool {
	schema := idSchema()
	return Tool{
		Name:        "peek_session",
		Description: "One line about a worker: status, turn, tokens, cost, runtime and the start of its last message. Cheap.",
		Schema:      schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			id, err := w.idArg("peek_session", args, schema)
			if err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, id)
			if err != nil {
				return Errorf("%v", err)
			}
			w.seen.Mark(s)
			return Result{Text: peekLine(s, time.Now())}
		},
	}
}

func peekLine(s *record.Session, now time.Time) string {
	line := fmt.Sprintf("%s · %s · turn %d · %s tokens · %s · %s", s.ID, s.Status(), s.Turn,
		render.Tokens(s.Usage.TotalTokens), render.Cost(s.CostUSD), render.Runtime(s.Runtime(now)))
	if s.Queued() && s.RunnerState != "" {
		// In its cluster's queue: not running, not stuck.
		line += " · " + render.Clip(s.RunnerState, 80)
	}
	if s.PendingInjects > 0 {
		line += fmt.Sprintf(" · %d follow-ups queued", s.PendingInjects)
	}
	switch {
	case s.Error != "" && s.Status() != record.StatusCompleted:
		line += " · error: " + render.Clip(s.Error, 200)
	case s.LastMessage != "":
		line += " · “" + render.Clip(s.LastMessage, 200) + "”"
	}
	return line
}

func (w *workers) listTool() Tool {
	statuses := make([]string, len(record.Statuses))
	for i, st := range record.Statuses {
		statuses[i] = string(st) // every status list takes, attached too
	}
	schema := object(map[string]prop{
		"status": enum("Only workers with this status.", statuses...),
	})
	return Tool{
		Name: "list_sessions",
		Description: "Your workers, newest first, with needs_attention set for those that failed, have follow-ups " +
			"waiting, or finished since you last looked at them.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				Status string `json:"status"`
			}
			if err := decode("list_sessions", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			var st record.Status
			if a.Status != "" {
				var err error
				if st, err = record.ParseStatus(a.Status); err != nil {
					return Errorf("%v", err)
				}
			}
			list, err := w.mine(ctx, st)
			if err != nil {
				return Errorf("cannot list your workers: %v", err)
			}
			now := time.Now()
			out := make([]map[string]any, 0, len(list))
			room := budget{left: listAnswerBytes}
			left := map[record.Status]int{}
			for _, s := range list {
				e := map[string]any{"session_id": s.ID, "status": s.Status(), "adapter": s.Adapter, "model": s.Model,
					"turn": s.Turn, "tokens": s.Usage.TotalTokens, "cost_usd": roundCost(s.CostUSD),
					"age_s": math.Round(now.Sub(s.CreatedAt).Seconds()), "task": render.Clip(s.Task, 120), "changes": s.ChangesText()}
				if s.Queued() && s.RunnerState != "" {
					e["queued"] = render.Clip(s.RunnerState, 80) // waiting in its cluster's queue, not stuck
				}
				if why := w.attention(s); why != "" {
					e["needs_attention"], e["attention"] = true, why
				} else {
					e["needs_attention"] = false
				}
				if !room.take(e) {
					left[s.Status()]++
					continue
				}
				out = append(out, e)
			}
			answer := map[string]any{"workers": out}
			if n := len(list) - len(out); n > 0 {
				answer["left_out"] = n
				answer["note"] = fmt.Sprintf("%d older workers are left out (%s): list_sessions with a status shows fewer; end_session with delete removes finished ones", n, countByStatus(left))
			}
			return JSON(answer)
		},
	}
}

// attention says why a worker needs the model's attention, or "".
func (w *workers) attention(s *record.Session) string {
	var why []string
	if s.Status() == record.StatusFailed {
		why = append(why, "failed")
	}
	if s.PendingInjects > 0 {
		why = append(why, fmt.Sprintf("%d follow-ups waiting", s.PendingInjects))
	}
	if w.seen.Unread(s) {
		why = append(why, "finished since you last looked")
	}
	return strings.Join(why, "; ")
}

// clip keeps the first n bytes of s (on a rune boundary) and says how much
// was left out.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := prefix(s, n)
	return h + fmt.Sprintf("… [%d more bytes]", len(s)-len(h))
}

// prefix is the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// roundCost keeps a cost readable: nil stays nil (the price is unknown).
func roundCost(c *float64) *float64 {
	if c == nil {
		return nil
	}
	v := math.Round(*c*1e6) / 1e6
	return &v
}
