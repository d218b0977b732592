package record

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
)

// SchemaVersion is the version of meta.json this package writes. Records
// without a version were written by the Python zwarm and are read-only.
const SchemaVersion = 1

// Session is the record kept in sessions/<id>/meta.json. The fields above
// Turns are a summary the supervisor keeps current so that listings never
// parse the turn files of finished sessions.
type Session struct {
	Version     int        `json:"version"`
	ID          string     `json:"id"`
	Task        string     `json:"task"`
	statusField            // "status": read with Status
	Adapter     string     `json:"adapter"`
	Model       string     `json:"model"`
	Sandbox     string     `json:"sandbox,omitempty"`
	WorkingDir  string     `json:"working_dir"`
	Source      Source     `json:"source"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	EndedAt     *time.Time `json:"ended_at"`
	// PID is the agent process of the current or last turn.
	PID      int    `json:"pid"`
	ExitCode *int   `json:"exit_code"`
	Turn     int    `json:"turn"`
	ThreadID string `json:"thread_id"`
	// Usage and CostUSD are summed over all turns. CostUSD is nil when the
	// price of a turn's model is unknown.
	Usage          Usage    `json:"usage"`
	CostUSD        *float64 `json:"cost_usd"`
	LastMessage    string   `json:"last_message"`
	Error          string   `json:"error"`
	PendingInjects int      `json:"pending_injects"`
	// Denied counts the tool calls the agent's permissions refused, over
	// all turns: work it was asked to do and could not.
	Denied int `json:"denied,omitempty"`
	// LastEventAt is when the agent last printed an event: a worker whose
	// model went silent shows how long ago that was.
	LastEventAt *time.Time `json:"last_event_at,omitempty"`

	// Role is the [roles.NAME] table the session was started with;
	// ReasoningEffort and Instructions are given to the agent on every
	// turn; MaxCostUSD, above zero, is the cost past which it is stopped
	// (costlimit.go). What the role gave is recorded here, so that
	// follow-ups keep it whatever config.toml says later.
	Role            string  `json:"role,omitempty"`
	ReasoningEffort string  `json:"reasoning_effort,omitempty"`
	Instructions    string  `json:"instructions,omitempty"`
	MaxCostUSD      float64 `json:"max_cost_usd,omitempty"`

	// TraceParent is the W3C traceparent of what started the session (an
	// orchestrator's tool call), whose trace its spans join; "" for a
	// session that is a trace of its own.
	TraceParent string `json:"trace_parent,omitempty"`

	// Owner is the process responsible for the session right now: the
	// command that is spawning it, then its supervisor. Nil when nobody is.
	Owner *proc.Ref `json:"owner,omitempty"`
	// Job is where the supervisor runs when a runner other than this
	// host's runs it (a Slurm job); nil for the local runner. Only that
	// runner judges whether the session's supervisor lives: Owner's pid
	// means nothing on this host then.
	Job *Job `json:"job,omitempty"`
	// RunnerState is what the runner said of a live session's job when
	// the record was read ("queued · slurm 1234 (Resources)"); never
	// written.
	RunnerState string `json:"-"`
	// JobQueued says a reader found the job waiting in its engine's queue:
	// not yet started, or started and requeued (preempted); not recorded.
	JobQueued bool `json:"-"`
	// Agent is the agent process of the running turn. AgentLive says it
	// reads follow-ups on its stdin, so a queued one becomes its next turn.
	Agent     *proc.Ref `json:"agent,omitempty"`
	AgentLive bool      `json:"agent_live,omitempty"`
	// Stop is set while a kill is in progress: no turn may start and no
	// follow-up may be handed over until the kill is recorded.
	Stop *StopRequest `json:"stop,omitempty"`
	// Interrupt is set while the running turn is being stopped so that
	// something else takes over the thread at once: a follow-up (inject
	// --interrupt), or a person in the agent's CLI (attach --interrupt).
	Interrupt *InterruptRequest `json:"interrupt,omitempty"`
	// Attaches are the spans a person worked in the agent's own CLI (zwarm
	// attach), oldest first; while the session is attached, the last one
	// has no end and Owner is the attaching command.
	Attaches []AttachSpan `json:"attaches,omitempty"`
	// Killer is the command that recorded the kill, while it finishes (it
	// waits for the supervisor, then sweeps): a follow-up is refused until
	// it is done, so nothing a follow-up starts is swept as a leftover of
	// the kill, and the kill sees the session settle.
	Killer *proc.Ref `json:"killer,omitempty"`
	// Cgroup is the cgroup v2 directory the session's agents run in, when
	// the machine lets zwarm make one; "" means marker-only containment.
	Cgroup string `json:"cgroup,omitempty"`
	// NextInboxSeq numbers queued follow-ups so they are delivered in order.
	NextInboxSeq int `json:"next_inbox_seq"`
	// Workspace is the git worktree the agent works in; nil when it works
	// in place (outside a repository, asked to, or recorded before zwarm
	// made worktrees).
	Workspace *Workspace `json:"workspace,omitempty"`
	// Accounting is what the cluster's accounting said of each of the
	// session's jobs once it ended (runner Slurm with slurmdbd: sacct),
	// kept here because the scheduler forgets its jobs.
	Accounting []JobAccount `json:"accounting,omitempty"`
	Turns      []Turn       `json:"turns"`

	// Legacy marks a record written by the Python zwarm: shown, never changed.
	Legacy         bool            `json:"-"`
	LegacyMessages []LegacyMessage `json:"-"`
	// LegacyStatus is the status the Python zwarm last wrote, from which
	// a reader judges the legacy session.
	LegacyStatus Status `json:"-"`
}

// Turn is one run of the agent: the task, or one follow-up.
type Turn struct {
	N           int        `json:"n"`
	Prompt      string     `json:"prompt"`
	InboxID     string     `json:"inbox_id,omitempty"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
	ExitCode    *int       `json:"exit_code"`
	statusField            // "status": read with Status
	Usage       Usage      `json:"usage"`
	CostUSD     *float64   `json:"cost_usd"`
	// CostReported says the agent reported CostUSD itself (claude); otherwise
	// it is computed from Usage and the price table.
	CostReported bool `json:"cost_reported,omitempty"`
	// Resumed says the turn continued the agent's thread natively; Live
	// says it was delivered to an agent process that was already running
	// the previous turn.
	Resumed bool `json:"resumed,omitempty"`
	Live    bool `json:"live,omitempty"`
	// Job is the job of the session's runner the turn ran in (a follow-up
	// to a settled session runs in a job of its own; those queued while
	// one ran, in that one).
	Job string `json:"job,omitempty"`
	// ProcessCost is the agent process's own running cost total at the end
	// of this turn, for agents that report one (the next live turn's cost
	// is the difference).
	ProcessCost *float64 `json:"process_cost,omitempty"`
	// ProcessUsage is the same for tokens (see Event.ProcessUsage).
	ProcessUsage *Usage `json:"process_usage,omitempty"`
	LastMessage  string `json:"last_message,omitempty"`
	Error        string `json:"error,omitempty"`
	// Notes are what the supervisor had to do to keep recording the turn
	// (its turn file was removed while it ran, say), one line each.
	Notes []string `json:"notes,omitempty"`
	// Offset is how many bytes of the turn file are folded into this record;
	// readers parse only what comes after it.
	Offset int64 `json:"offset"`
	// ThreadUsage is the agent's own running total for the thread at the end
	// of this turn, for agents that report cumulative usage: the next turn's
	// usage is the difference.
	ThreadUsage *Usage `json:"thread_usage,omitempty"`
	// UsageSoFar is what the agent reported call by call (usage events)
	// since the turn's own last report of its usage: counted in the
	// session's usage and cost, and in the turn's cost unless the agent
	// prices it, until that report replaces it. A turn stopped before its
	// report keeps it.
	UsageSoFar *Usage `json:"usage_so_far,omitempty"`
	// AgentError is the last error the agent printed, kept as the reason in
	// case it exits without a final failure event.
	AgentError string `json:"agent_error,omitempty"`
	// AgentFailed says the agent itself reported failure (codex turn.failed,
	// claude is_error), whatever its exit code.
	AgentFailed bool `json:"agent_failed,omitempty"`
	// Commit is the worktree's commit after this turn, when the turn
	// changed it (zwarm commits what the worker left); Files are the files
	// the turn changed (at most MaxTurnFiles, FilesOmitted the rest).
	Commit       string   `json:"commit,omitempty"`
	From         string   `json:"from,omitempty"` // the worktree's commit before the turn
	Files        []string `json:"files,omitempty"`
	FilesOmitted int      `json:"files_omitted,omitempty"`
	// Denied counts the tool calls the agent's permissions refused in this
	// turn; Denials are the first few.
	Denied  int      `json:"denied,omitempty"`
	Denials []Denial `json:"denials,omitempty"`
	// Undone is what zwarm undid of the worker's doing before it committed
	// the turn, one line each: a FIFO removed from the worktree, a symlink
	// from the git dir, a deleted branch made again (at most MaxTurnUndone,
	// UndoneOmitted the rest).
	Undone        []string `json:"undone,omitempty"`
	UndoneOmitted int      `json:"undone_omitted,omitempty"`
}

// Status is where the session is in its lifecycle. Only the lifecycle
// (sessions/state) changes it.
func (s *Session) Status() Status { return s.statusField.Status }

// Status is how the turn went, or "running" while it runs. Only the
// lifecycle (sessions/state) changes it.
func (t *Turn) Status() Status { return t.statusField.Status }

// Spent is what the turn used: its own report, and what its calls
// reported since (UsageSoFar), all of it for a turn stopped before its
// report. The session's usage and the turn's cost count the same.
func (t *Turn) Spent() Usage {
	if t.UsageSoFar != nil {
		return t.Usage.Add(*t.UsageSoFar)
	}
	return t.Usage
}

// MaxTurnFiles bounds the files a turn's record lists: the record is
// rewritten while a turn runs, and a generator may touch thousands.
const MaxTurnFiles = 200

// MaxTurnUndone bounds the lines of what zwarm undid that a turn's record
// keeps: a worker can leave a FIFO in every directory. The supervisor's
// log has them all.
const MaxTurnUndone = 20

const (
	RoleSpawn      = "spawn"
	RoleSupervisor = "supervisor"
	RoleAttach     = "attach"
)

// StopRequest records that `zwarm kill` (or an orchestrator, or a watcher)
// is stopping the session.
type StopRequest struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// InterruptRequest records that the running turn is to be stopped (as a
// kill stops it: the graceful signal, then force after kill_grace), not
// the session: the thread goes on at once with the follow-up InboxID, or
// is handed to Attacher, a person's zwarm attach.
type InterruptRequest struct {
	At       time.Time `json:"at"`
	Turn     int       `json:"turn"`
	InboxID  string    `json:"inbox_id,omitempty"`
	Attacher *proc.Ref `json:"attacher,omitempty"`
}

// AttachSpan is a time a person worked in the agent's own CLI, in the
// session's thread and dir.
type AttachSpan struct {
	Start time.Time  `json:"start"`
	End   *time.Time `json:"end,omitempty"`
	// PID is the attaching zwarm's; CLI is the agent's interactive CLI it
	// ran, once started.
	PID int       `json:"pid"`
	CLI *proc.Ref `json:"cli,omitempty"`
	// Was and WasError are the session's status and error before the
	// attach: what it settles as again when the person leaves.
	Was      Status `json:"was"`
	WasError string `json:"was_error,omitempty"`
	// ExitCode is the CLI's; Note says how the span ended when it was not
	// the person leaving the CLI (its zwarm died, say).
	ExitCode *int   `json:"exit_code,omitempty"`
	Note     string `json:"note,omitempty"`
	// Commit is the worktree's commit of what the person left there, when
	// they changed it; Files are the files it changed (at most
	// MaxTurnFiles).
	Commit string   `json:"commit,omitempty"`
	Files  []string `json:"files,omitempty"`
	// Usage is what the person's model calls in the CLI used, read from
	// the agent's own session log when they left (AttachAccountant), and
	// CostUSD its price; ThreadUsage, for an agent that counts the whole
	// thread (codex), its running total then, from which the next turn's
	// own usage is counted. Counted in the session's usage and cost.
	Usage       *Usage   `json:"usage,omitempty"`
	CostUSD     *float64 `json:"cost_usd,omitempty"`
	ThreadUsage *Usage   `json:"thread_usage,omitempty"`
	// Thread is the new conversation the person started in the CLI
	// (claude's /clear, codex's /new) and left it in, which the session
	// continues from then on ("": they stayed in the session's thread).
	Thread string `json:"thread,omitempty"`
}

// LegacyMessage is a message stored in a Python zwarm meta.json.
type LegacyMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Timestamp string `json:"timestamp"`
}

// Runtime is how long the session has run: until EndedAt once finished, so
// it never keeps growing after the end.
func (s *Session) Runtime(now time.Time) time.Duration {
	end := now
	switch {
	case s.EndedAt != nil && s.Settled():
		end = *s.EndedAt
	case s.Legacy && s.Settled():
		// The Python zwarm kept no end time; its last update is the best
		// bound there is, and it never moves.
		end = s.UpdatedAt
	}
	if end.Before(s.CreatedAt) {
		return 0
	}
	return end.Sub(s.CreatedAt)
}

// threadBase is the cumulative thread usage before the current turn.
func (s *Session) threadBase() Usage {
	base, at := Usage{}, time.Time{}
	for i := len(s.Turns) - 2; i >= 0; i-- {
		if u := s.Turns[i].ThreadUsage; u != nil {
			base = *u
			if e := s.Turns[i].EndedAt; e != nil {
				at = *e
			}
			break
		}
	}
	// A person's attached span after that turn spent in the same thread:
	// its total is the base (else the next turn would be charged for it).
	for i := len(s.Attaches) - 1; i >= 0; i-- {
		if a := s.Attaches[i]; a.ThreadUsage != nil && a.End != nil && a.End.After(at) {
			return *a.ThreadUsage
		}
	}
	return base
}

// Current returns the running or last turn, or nil before the first.
func (s *Session) Current() *Turn {
	if len(s.Turns) == 0 {
		return nil
	}
	return &s.Turns[len(s.Turns)-1]
}

// Refresh recomputes the summary fields from the turns.
func (s *Session) Refresh(prices Prices) {
	var u Usage
	var cost float64
	known := true
	s.Denied = 0
	for i := range s.Turns {
		t := &s.Turns[i]
		s.Denied += t.Denied
		tu := t.Spent()
		switch {
		case !t.CostReported:
			t.CostUSD = prices.Cost(s.Model, tu)
		case t.CostUSD != nil:
			c := RoundCost(*t.CostUSD)
			t.CostUSD = &c
		}
		u = u.Add(tu)
		if t.CostUSD == nil {
			known = false
		} else {
			cost += *t.CostUSD
		}
		if t.LastMessage != "" {
			s.LastMessage = t.LastMessage
		}
	}
	for i := range s.Attaches {
		a := &s.Attaches[i]
		if a.Usage == nil {
			continue
		}
		a.CostUSD = prices.Cost(s.Model, *a.Usage)
		u = u.Add(*a.Usage)
		if a.CostUSD == nil {
			known = false
		} else {
			cost += *a.CostUSD
		}
	}
	s.Usage = u
	s.CostUSD = nil
	if s.Job != nil && len(s.Accounting) > 0 {
		for _, a := range s.Accounting {
			cost += a.CoreHours() * prices[s.Job.Runner].CoreHour
		}
	}
	if known && len(s.Turns) > 0 {
		cost = RoundCost(cost)
		s.CostUSD = &cost
	}
	s.Turn = len(s.Turns)
}

// Clone returns a deep copy, so a caller may change it freely.
func (s *Session) Clone() *Session {
	c := *s
	c.Turns = append([]Turn(nil), s.Turns...)
	c.Accounting = append([]JobAccount(nil), s.Accounting...)
	c.LegacyMessages = append([]LegacyMessage(nil), s.LegacyMessages...)
	if s.Owner != nil {
		o := *s.Owner
		c.Owner = &o
	}
	c.Killer = ClonePtr(s.Killer)
	c.Agent, c.Stop, c.EndedAt, c.ExitCode, c.CostUSD, c.LastEventAt = ClonePtr(s.Agent), ClonePtr(s.Stop), ClonePtr(s.EndedAt), ClonePtr(s.ExitCode), ClonePtr(s.CostUSD), ClonePtr(s.LastEventAt)
	c.Workspace = CloneWorkspace(s.Workspace)
	if r := s.Interrupt; r != nil {
		v := *r
		v.Attacher = ClonePtr(r.Attacher)
		c.Interrupt = &v
	}
	c.Attaches = append([]AttachSpan(nil), s.Attaches...)
	for i := range c.Attaches {
		a := &c.Attaches[i]
		a.End, a.CLI, a.ExitCode = ClonePtr(a.End), ClonePtr(a.CLI), ClonePtr(a.ExitCode)
		a.Files = append([]string(nil), a.Files...)
	}
	for i := range c.Turns {
		t := &c.Turns[i]
		if u := t.ThreadUsage; u != nil {
			v := *u
			t.ThreadUsage = &v
		}
		t.EndedAt, t.ExitCode, t.CostUSD, t.ProcessCost = ClonePtr(t.EndedAt), ClonePtr(t.ExitCode), ClonePtr(t.CostUSD), ClonePtr(t.ProcessCost)
		t.ProcessUsage = ClonePtr(t.ProcessUsage)
		t.Files = append([]string(nil), t.Files...)
		t.Denials = append([]Denial(nil), t.Denials...)
	}
	return &c
}

func ClonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// SortNewestFirst orders sessions by creation, newest first.
func SortNewestFirst(list []*Session) {
	slices.SortFunc(list, func(a, b *Session) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
}
