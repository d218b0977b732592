package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

func (w *workers) delegateTool() Tool {
	schema := object(map[string]prop{
		"task": str("What the worker must do: specific and self-contained (files, constraints, how to check the result). " +
			"The worker sees nothing of this conversation."),
		"adapter":     str("The agent to run: codex or claude. Omit for the configured default."),
		"model":       str("The worker's model. Omit for the adapter's configured default."),
		"working_dir": str("Directory the worker runs in, absolute or relative to the run's dir. Omit for the run's dir."),
		"isolation": enum("worktree: the worker works in a git worktree of its own (a separate checkout on branch zwarm/<id>), "+
			"so parallel workers never see each other's edits and nothing reaches the working dir until you land it; "+
			"needs a git repository. none: it works in place, in the working dir itself. "+
			"Omit for the default: a worktree inside a git repository, in place outside one.",
			config.IsolationWorktree, config.IsolationNone),
		"role": str("A role from config.toml: named settings (adapter, model, reasoning effort, sandbox, instructions, cost limit) " +
			"for a kind of worker" + w.roleList() + ". Parameters you pass yourself win over the role's."),
		"reasoning_effort": str("How hard the worker's model thinks: codex none, minimal, low, medium, high, xhigh; " +
			"claude low, medium, high, xhigh, max. Omit for the agent's default."),
		"sandbox": str("What the worker may do: read-only, workspace-write or danger-full-access " +
			"(claude also takes a permission mode: acceptEdits, plan, ...). Omit for the configured default."),
		"max_cost_usd": num("Stop the worker once it has spent more than this many dollars (it is killed, saying so). " +
			"Needs a known price for its model. Omit for no limit."),
		"slurm": resources("What the worker's jobs ask of the Slurm cluster it runs on, over the configured defaults and its role's: " +
			"partition, time (\"2h\", \"90m\", or as sbatch --time takes it), cpus, mem (\"16G\"), gres (\"gpu:1\"), account, qos, constraint. " +
			"Only for workers that run as Slurm jobs. Omit for the defaults."),
	}, "task")
	return Tool{
		Name: "delegate",
		Description: "Start a worker: a coding agent (Codex or Claude) that carries out one task in the background. " +
			"Returns its session id at once; call wait to block until it finishes, then check_session to read what it did.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				Task            string         `json:"task"`
				Adapter         string         `json:"adapter"`
				Model           string         `json:"model"`
				WorkingDir      string         `json:"working_dir"`
				Isolation       string         `json:"isolation"`
				Role            string         `json:"role"`
				ReasoningEffort string         `json:"reasoning_effort"`
				Sandbox         string         `json:"sandbox"`
				MaxCostUSD      float64        `json:"max_cost_usd"`
				Slurm           map[string]any `json:"slurm"`
			}
			if err := decode("delegate", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			for k := range a.Slurm {
				// Said before whether this worker's runner asks for
				// any: a misspelt key is the first thing to fix.
				if !slices.Contains(config.ResourceKeys, k) {
					return Errorf("bad arguments for delegate: slurm has no resource %q: ask for %s", k, strings.Join(config.ResourceKeys, ", "))
				}
			}
			return w.delegate(ctx, delegation{task: a.Task, adapter: a.Adapter, model: a.Model, dir: a.WorkingDir, isolation: a.Isolation,
				role: a.Role, effort: a.ReasoningEffort, sandbox: a.Sandbox, maxCost: a.MaxCostUSD, resources: stringValues(a.Slurm)})
		},
	}
}

// delegation is what delegate was asked to start.
type delegation struct {
	task, adapter, model, dir, isolation string
	role, effort, sandbox                string
	maxCost                              float64
	resources                            map[string]string
}

func (w *workers) delegate(ctx context.Context, d delegation) Result {
	task := d.task
	if strings.TrimSpace(task) == "" {
		return Errorf("task is empty: say what the worker must do")
	}
	if d.maxCost < 0 {
		return Errorf("max_cost_usd %v: want a number of dollars above 0, or omit it for no limit", d.maxCost)
	}
	wd, err := w.dirs.Resolve(d.dir)
	if err != nil {
		return Errorf("refused: %v", err)
	}
	req := sessions.SpawnRequest{Task: task, Adapter: d.adapter, Model: d.model, WorkingDir: wd, Source: w.opt.Source,
		Isolation: firstNonEmpty(d.isolation, w.opt.Isolation), Role: d.role, ReasoningEffort: d.effort, Sandbox: d.sandbox,
		MaxCostUSD: d.maxCost, Resources: d.resources,
		// Counting the running workers and starting this one are one step
		// in Spawn, so parallel delegate calls (and other processes on the
		// state dir) cannot together pass the limit.
		Limit: w.opt.MaxWorkers, Runner: w.opt.Runner}
	// The role's settings come before the tools' defaults: a reviewer
	// role's adapter and model are what a reviewer runs.
	if req, err = w.applyRole(req); err != nil {
		return Errorf("%v", err)
	}
	if req.Adapter == "" || req.Adapter == w.defaultAdapter() {
		req.Model = firstNonEmpty(req.Model, w.opt.DefaultModel)
	}
	req.Adapter = firstNonEmpty(req.Adapter, w.opt.DefaultAdapter)
	s, err := w.opt.Sessions.Spawn(ctx, req)
	var limit *sessions.LimitError
	switch {
	case errors.As(err, &limit):
		return Errorf("refused: %d workers are already running and the limit is %d (max_workers). "+
			"Wait for one to finish (wait) or stop one (end_session), then delegate again.", limit.Running, limit.Limit)
	case errors.Is(err, config.ErrInvalidRequest):
		return Errorf("refused: %v", err)
	case errors.Is(err, sessions.ErrCannotRun):
		return Errorf("cannot start the worker on this machine: %v", err)
	case err != nil:
		return Errorf("the worker could not be started: %v", err)
	}
	if w.opt.OnSpawn != nil {
		w.opt.OnSpawn(ctx, s)
	}
	out := map[string]any{"session_id": s.ID, "status": s.Status(), "adapter": s.Adapter, "model": s.Model,
		"working_dir": s.WorkingDir, "isolation": config.IsolationNone,
		"note": "running in the background; call wait to block until it finishes"}
	for k, v := range map[string]string{"role": s.Role, "reasoning_effort": s.ReasoningEffort, "sandbox": s.Sandbox} {
		if v != "" {
			out[k] = v
		}
	}
	if s.MaxCostUSD > 0 {
		out["max_cost_usd"] = s.MaxCostUSD
	}
	if ws := s.Workspace; ws != nil {
		out["isolation"], out["branch"], out["worktree"] = config.IsolationWorktree, ws.Branch, ws.State
		out["note"] = fmt.Sprintf("running in the background, in a git worktree of its own on branch %s (from %s): "+
			"its changes reach %s only when they are landed; call wait to block until it finishes", ws.Branch, ws.Base, wd)
	}
	return JSON(out)
}

func (w *workers) converseTool() Tool {
	schema := object(map[string]prop{
		"session_id": str("The worker's id (or a unique prefix)."),
		"message":    str("The follow-up: what the worker should do next, in its own thread."),
		"interrupt": boolean("Stop the worker's running turn and continue its thread with this message at once, " +
			"instead of queueing it until the turn ends (default false). Use it to redirect a worker that went the wrong way."),
	}, "session_id", "message")
	return Tool{
		Name: "converse",
		Description: "Send a follow-up to a worker. It continues its own thread (with its context). " +
			"A busy worker queues the message and takes it when its current turn ends, or with interrupt=true stops that turn " +
			"and takes it at once. Call wait for the answer.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				SessionID string `json:"session_id"`
				Message   string `json:"message"`
				Interrupt bool   `json:"interrupt"`
			}
			if err := decode("converse", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			if strings.TrimSpace(a.Message) == "" {
				return Errorf("message is empty: say what the worker should do next")
			}
			s, err := w.resolve(ctx, a.SessionID)
			if err != nil {
				return Errorf("%v", err)
			}
			send := w.opt.Sessions.Inject
			if a.Interrupt {
				send = w.opt.Sessions.Interrupt
			}
			res, err := send(ctx, s.ID, a.Message)
			if errors.Is(err, sessions.ErrStopping) {
				return Errorf("refused: worker %s is being stopped; delegate a new worker instead", record.ShortID(s.ID))
			}
			if err != nil && res == nil {
				return Errorf("the follow-up was not sent: %v", err)
			}
			out := map[string]any{"session_id": s.ID, "outcome": res.Outcome, "turn": res.Turn}
			switch res.Outcome {
			case sessions.InjectInterrupted:
				out["ahead"] = res.Ahead
				out["note"] = fmt.Sprintf("turn %d is being stopped (recorded as interrupted); the worker continues its thread with this message as its next turn", res.Turn)
			case sessions.InjectQueued:
				out["ahead"] = res.Ahead
				out["note"] = queuedNote(res, a.Interrupt)
				if res.Attached {
					out["note"] = fmt.Sprintf("a person is working in the worker's thread (zwarm attach); the message is queued (%d ahead of it) and runs when they leave", res.Ahead)
				}
			case sessions.InjectResumed:
				out["note"] = fmt.Sprintf("the worker had finished; it resumed its thread with this message as turn %d", res.Turn)
			case sessions.InjectRestarted:
				out["note"] = fmt.Sprintf("the worker had no thread to resume; a new agent run started with this message as turn %d, without its earlier context", res.Turn)
			}
			if err != nil {
				out["error"] = err.Error()
				r := JSON(out)
				r.IsError = true
				return r
			}
			return JSON(out)
		},
	}
}

func (w *workers) endTool() Tool {
	schema := object(map[string]prop{
		"session_id": str("The worker's id (or a unique prefix)."),
		"reason":     str("Why it is ended, for the record."),
		"delete":     boolean("Also delete its record and transcript (default false)."),
	}, "session_id")
	return Tool{
		Name:        "end_session",
		Description: "Stop a running worker (it and every process it started), and with delete=true remove its record.",
		Schema:      schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				SessionID string `json:"session_id"`
				Reason    string `json:"reason"`
				Delete    bool   `json:"delete"`
			}
			if err := decode("end_session", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, a.SessionID)
			if err != nil {
				return Errorf("%v", err)
			}
			out := map[string]any{"session_id": s.ID}
			if a.Reason != "" {
				out["reason"] = a.Reason
			}
			if !s.Settled() {
				why := "ended by the orchestrator"
				if a.Reason != "" {
					why += ": " + a.Reason
				}
				k, err := w.opt.Sessions.KillReport(ctx, s.ID, why)
				if err != nil && !errors.Is(err, sessions.ErrNotRunning) {
					return Errorf("could not stop worker %s: %v", record.ShortID(s.ID), err)
				}
				if k.Session != nil {
					s = k.Session
				}
				if n := len(k.Dropped); n > 0 {
					// The model's follow-ups it never delivered: said, not
					// left for it to find in the worker's inbox.
					out["dropped_follow_ups"] = n
				}
				out["stopped"] = true
			} else {
				out["stopped"] = false
				out["note"] = fmt.Sprintf("it had already finished (%s)", s.Status())
			}
			out["status"] = s.Status()
			if a.Delete {
				if _, err := w.opt.Sessions.Remove(ctx, s.ID, false); err != nil {
					out["error"] = fmt.Sprintf("its record was not deleted: %v", err)
					var un *workspace.Unlanded
					if errors.As(err, &un) {
						// The tools never drop a worker's work: the
						// model lands it, or leaves it to a person.
						out["error"] = fmt.Sprintf("its record was not deleted: %s. Land it (land_session) or look at it (diff_session) first; "+
							"work never landed is not deleted by a tool (a person can, with zwarm rm --force)", un.What())
					}
					r := JSON(out)
					r.IsError = true
					return r
				}
				out["deleted"] = true
			}
			w.seen.Mark(s)
			return JSON(out)
		},
	}
}

// defaultAdapter is the adapter of a delegation that names none: the
// tools', else config.toml's. A delegation naming it gets the default
// model as one naming none does.
func (w *workers) defaultAdapter() string {
	if w.opt.DefaultAdapter != "" {
		return w.opt.DefaultAdapter
	}
	if cfg, err := w.opt.Sessions.Config(); err == nil {
		return cfg.SpawnAdapter()
	}
	return ""
}

// applyRole fills what a delegation leaves empty from its role; an
// unknown role is an error that lists the configured ones.
func (w *workers) applyRole(req sessions.SpawnRequest) (sessions.SpawnRequest, error) {
	if req.Role == "" {
		return req, nil
	}
	cfg, err := w.opt.Sessions.Config()
	if err != nil {
		return req, fmt.Errorf("cannot read the roles: %v", err)
	}
	return sessions.ApplyRole(cfg, req)
}

// roleList names the configured roles for delegate's description ("" if
// there are none or they cannot be read).
func (w *workers) roleList() string {
	if w.opt.Sessions == nil {
		return ""
	}
	cfg, err := w.opt.Sessions.Config()
	if err != nil || len(cfg.Roles) == 0 {
		return ""
	}
	return " (configured: " + strings.Join(cfg.RoleNames(), ", ") + ")"
}

// stringValues is m with its values as text: a model may send cpus as
// the number it is.
func stringValues(m map[string]any) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// queuedNote says when a queued message runs: after the running turn, or,
// when the worker is resuming its thread with a message sent before
// (no turn runs yet), after that one, or with interrupt before it.
func queuedNote(res *sessions.InjectResult, interrupt bool) string {
	if s := res.Session; s != nil && len(s.Turns) > 0 && !s.TurnRunning() {
		if interrupt {
			return fmt.Sprintf("the worker is resuming its thread with an earlier message; no turn is running to stop, so this message is queued to run next (%d ahead of it), before the messages sent without interrupt", res.Ahead)
		}
		return fmt.Sprintf("the worker is resuming its thread with an earlier message; this one is queued (%d ahead of it) and runs after them", res.Ahead)
	}
	if res.Turn == 0 {
		// Its first turn has not started: it waits in a cluster's queue,
		// or its worktree is being made.
		return fmt.Sprintf("the worker has not started its task yet; the message is queued (%d ahead of it) and runs once the task's turn ends", res.Ahead)
	}
	return fmt.Sprintf("the worker is busy with turn %d; the message is queued (%d ahead of it) and runs when that turn ends", res.Turn, res.Ahead)
}
