package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// JSONFlags are --json and --jq EXPR, which filters the JSON as gh does
// (strings print raw, other values as JSON).
type JSONFlags struct {
	JSON bool
	JQ   string
}

func (j *JSONFlags) Add(c *cobra.Command, what string) {
	c.Flags().BoolVar(&j.JSON, "json", false, "print "+what)
	c.Flags().StringVar(&j.JQ, "jq", "", "filter the JSON with a jq expression (implies --json)")
}

func (j *JSONFlags) On() bool { return j.JSON || j.JQ != "" }

// Check compiles --jq before anything runs, so a typo is a usage error.
func (j *JSONFlags) Check() (*gojq.Code, error) {
	if j.JQ == "" {
		return nil, nil
	}
	q, err := gojq.Parse(j.JQ)
	if err != nil {
		return nil, Usagef("--jq %q: %v", j.JQ, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, Usagef("--jq %q: %v", j.JQ, err)
	}
	return code, nil
}

// WriteJSONValue prints v as indented JSON.
func WriteJSONValue(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Write prints v as indented JSON, or what --jq makes of it.
func (j *JSONFlags) Write(w io.Writer, v any) error {
	code, err := j.Check()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	if code == nil {
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	// gojq works on plain values: go through JSON once.
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	iter := code.Run(doc)
	for {
		out, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := out.(error); ok {
			if h, ok := err.(*gojq.HaltError); ok && h.Value() == nil {
				return nil // halt
			}
			return fmt.Errorf("--jq %q: %w", j.JQ, err)
		}
		if s, ok := out.(string); ok {
			fmt.Fprintln(bw, s)
			continue
		}
		b, err := gojq.Marshal(out)
		if err != nil {
			return err
		}
		bw.Write(append(b, '\n'))
	}
}

// SessionJSON is a session as --json prints it: the documented fields
// (docs/output.md, "JSON"), none of the bookkeeping the record also holds
// (its owner and agent processes, inbox numbering, read offsets).
type SessionJSON struct {
	ID             string        `json:"id"`
	Task           string        `json:"task"`
	Status         record.Status `json:"status"`
	Settled        bool          `json:"settled"`
	Adapter        string        `json:"adapter"`
	Model          string        `json:"model"`
	Sandbox        string        `json:"sandbox,omitempty"`
	WorkingDir     string        `json:"working_dir"`
	Source         record.Source `json:"source"`
	CreatedAt      time.Time     `json:"created_at"`
	UpdatedAt      time.Time     `json:"updated_at"`
	EndedAt        *time.Time    `json:"ended_at"`
	LastEventAt    *time.Time    `json:"last_event_at"`
	PID            int           `json:"pid"`
	ExitCode       *int          `json:"exit_code"`
	Turn           int           `json:"turn"`
	ThreadID       string        `json:"thread_id"`
	Usage          record.Usage  `json:"usage"`
	CostUSD        *float64      `json:"cost_usd"`
	LastMessage    string        `json:"last_message"`
	Error          string        `json:"error"`
	PendingInjects int           `json:"pending_injects"`
	Denied         int           `json:"denied"`
	// Where the supervisor runs: "local", or a runner and its job id.
	Runner      string `json:"runner"`
	JobID       string `json:"job_id"`
	RunnerState string `json:"runner_state"`
	// What its jobs ask of the cluster over the runner's settings, and
	// what the cluster's accounting said of each of its ended jobs.
	JobResources map[string]string   `json:"job_resources"`
	Accounting   []record.JobAccount `json:"accounting"`
	// Where the agent works: a worktree of its own, or in place.
	Isolation   string          `json:"isolation"`
	Worktree    string          `json:"worktree"`
	Branch      string          `json:"branch"`
	Base        string          `json:"base"`
	BaseCommit  string          `json:"base_commit"`
	Changes     *workspace.Stat `json:"changes"`
	ChangesText string          `json:"changes_text"`
	Landed      *landedJSON     `json:"landed"`
	// Landings before a follow-up made the worktree again, oldest first.
	EarlierLandings []landedJSON `json:"earlier_landings"`
	Conflict        []string     `json:"conflict"`
	Turns           []turnJSON   `json:"turns"`
	// What it was started with: a role of config.toml and the settings
	// given to its agent on every turn; max_cost_usd is null for none.
	Role            string   `json:"role"`
	ReasoningEffort string   `json:"reasoning_effort"`
	Instructions    string   `json:"instructions"`
	MaxCostUSD      *float64 `json:"max_cost_usd"`
	// The times a person worked in the agent's CLI (zwarm attach).
	Attached []attachJSON `json:"attached"`
}

type attachJSON struct {
	Start    time.Time  `json:"start"`
	End      *time.Time `json:"end"`
	ExitCode *int       `json:"exit_code"`
	Note     string     `json:"note"`
	Commit   string     `json:"commit"`
	Files    []string   `json:"files"`
	// Usage and CostUSD are what the person's calls in the CLI used, as
	// the agent's own session log says (null: it says nothing).
	Usage   *record.Usage `json:"usage"`
	CostUSD *float64      `json:"cost_usd"`
	// Thread is the new conversation the person left the CLI in, which
	// the session continues ("": its own).
	Thread string `json:"thread"`
}

type landedJSON struct {
	Commit   string    `json:"commit"`
	Into     string    `json:"into"`
	Strategy string    `json:"strategy"`
	At       time.Time `json:"at"`
}

// landedOf is a landing as --json gives it, the current one and the
// earlier ones alike.
func landedOf(l record.Landing) landedJSON {
	return landedJSON{Commit: l.Commit, Into: l.Into, Strategy: string(l.Strategy), At: l.At}
}

type turnJSON struct {
	N           int           `json:"n"`
	Prompt      string        `json:"prompt"`
	StartedAt   time.Time     `json:"started_at"`
	EndedAt     *time.Time    `json:"ended_at"`
	ExitCode    *int          `json:"exit_code"`
	Status      record.Status `json:"status"`
	Usage       record.Usage  `json:"usage"`
	CostUSD     *float64      `json:"cost_usd"`
	Resumed     bool          `json:"resumed"`
	Live        bool          `json:"live"`
	LastMessage string        `json:"last_message"`
	Error       string        `json:"error"`
	Commit      string        `json:"commit"`
	Files       []string      `json:"files"`
	Denied      int           `json:"denied"`
	Undone      []string      `json:"undone"`
}

// noResources is the job_resources of a session that asks nothing of a
// cluster: {} rather than null, and one map for all, never written (a
// listing of 100,000 made as many).
var noResources = map[string]string{}

// noUndone is the undone of a turn zwarm undid nothing of: [] rather than
// null, one for all, never written.
var noUndone = []string{}

func ToJSON(s *record.Session) SessionJSON {
	out := SessionJSON{ID: s.ID, Task: s.Task, Status: s.Status(), Settled: s.Settled(), Adapter: s.Adapter, Model: s.Model,
		Sandbox: s.Sandbox, WorkingDir: s.WorkingDir, Source: s.Source, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		EndedAt: s.EndedAt, LastEventAt: s.LastEventAt, PID: s.PID, ExitCode: s.ExitCode, Turn: s.Turn, ThreadID: s.ThreadID,
		Usage: s.Usage, CostUSD: s.CostUSD, LastMessage: s.LastMessage, Error: s.Error, PendingInjects: s.PendingInjects,
		Denied: s.Denied, Isolation: config.IsolationNone, ChangesText: s.ChangesText(), Conflict: []string{}, EarlierLandings: []landedJSON{},
		Turns: make([]turnJSON, len(s.Turns)), Runner: s.RunnerName(), RunnerState: s.RunnerState,
		Attached: make([]attachJSON, len(s.Attaches))}
	for i, a := range s.Attaches {
		files := a.Files
		if files == nil {
			files = []string{}
		}
		out.Attached[i] = attachJSON{Start: a.Start, End: a.End, ExitCode: a.ExitCode, Note: a.Note, Commit: a.Commit, Files: files,
			Usage: a.Usage, CostUSD: a.CostUSD, Thread: a.Thread}
	}
	out.JobResources, out.Accounting = noResources, []record.JobAccount{}
	if s.Job != nil {
		out.JobID = s.Job.ID
		if len(s.Job.Resources) > 0 {
			out.JobResources = maps.Clone(s.Job.Resources)
		}
	}
	out.Accounting = append(out.Accounting, s.Accounting...)
	out.Role, out.ReasoningEffort, out.Instructions = s.Role, s.ReasoningEffort, s.Instructions
	if s.MaxCostUSD > 0 {
		out.MaxCostUSD = &s.MaxCostUSD
	}
	if ws := s.Workspace; ws != nil {
		out.Isolation, out.Worktree, out.Branch, out.Base, out.BaseCommit = config.IsolationWorktree, ws.Path, ws.Branch, ws.Base, ws.BaseCommit
		out.Changes = ws.Changes
		if ws.Conflict != nil {
			out.Conflict = ws.Conflict
		}
		if l := ws.Landed; l != nil {
			lj := landedOf(*l)
			out.Landed = &lj
		}
		for _, l := range ws.Earlier {
			out.EarlierLandings = append(out.EarlierLandings, landedOf(l))
		}
	}
	for i, t := range s.Turns {
		files := t.Files
		if files == nil {
			files = []string{}
		}
		out.Turns[i] = turnJSON{N: t.N, Prompt: t.Prompt, StartedAt: t.StartedAt, EndedAt: t.EndedAt, ExitCode: t.ExitCode,
			Status: t.Status(), Usage: t.Spent(), CostUSD: t.CostUSD, Resumed: t.Resumed, Live: t.Live,
			LastMessage: t.LastMessage, Error: t.Error, Commit: t.Commit, Files: files, Denied: t.Denied, Undone: t.Undone}
		if t.Undone == nil {
			out.Turns[i].Undone = noUndone
		}
	}
	return out
}

func ListJSON(list []*record.Session) []SessionJSON {
	out := make([]SessionJSON, len(list))
	for i, s := range list {
		out[i] = ToJSON(s)
	}
	return out
}
