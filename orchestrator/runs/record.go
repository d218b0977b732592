package runs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

// Status is where a run is.
type Status string

const (
	// StatusRunning: a process is running the run (its owner).
	StatusRunning Status = "running"
	// StatusCompleted: the model called finish.
	StatusCompleted Status = "completed"
	// StatusFailed: the model API failed for good, a watcher aborted the
	// run, or zwarm could not go on (its state could not be written).
	StatusFailed Status = "failed"
	// StatusLimited: a limit was reached (steps, cost, tokens, time).
	StatusLimited Status = "limited"
	// StatusInterrupted: the run was stopped (Ctrl+C, a watcher paused
	// it) or its process died; --resume continues it.
	StatusInterrupted Status = "interrupted"
	// StatusWaiting: the run's process waits for the person to answer
	// the question the model asked (Record.Question).
	StatusWaiting Status = "waiting"
)

// Live says a process owns a run in this status: it is running, or
// waiting for an answer.
func (s Status) Live() bool { return s == StatusRunning || s == StatusWaiting }

// RecordVersion is the version of run.json this package writes.
const RecordVersion = 1

// Record is run.json: the run's summary, replaced atomically at every step.
type Record struct {
	Version    int        `json:"version"`
	ID         string     `json:"id"`
	Task       string     `json:"task"`
	Model      string     `json:"model"`
	Dir        string     `json:"dir"`
	Status     Status     `json:"status"`
	StopReason string     `json:"stop_reason,omitempty"`
	Summary    string     `json:"summary,omitempty"`
	Steps      int        `json:"steps"`
	Limits     Limits     `json:"limits"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	EndedAt    *time.Time `json:"ended_at"`

	// Usage and CostUSD are the orchestrating model's; CostUSD is nil
	// when its price is unknown.
	Usage   record.Usage `json:"usage"`
	CostUSD *float64     `json:"cost_usd"`
	// WorkerUsage and WorkerCostUSD are the workers' (nil: a price is
	// unknown), as last seen; a deleted worker's stay counted.
	WorkerUsage   record.Usage `json:"worker_usage"`
	WorkerCostUSD *float64     `json:"worker_cost_usd"`
	// Workers are the ids of the run's workers, in the order started.
	Workers []string `json:"workers"`
	// Accounts is each worker's usage and cost as last seen.
	Accounts map[string]Account `json:"worker_accounts,omitempty"`

	Adapter           string `json:"adapter,omitempty"`
	WorkerModel       string `json:"worker_model,omitempty"`
	Isolation         string `json:"isolation,omitempty"`
	Runner            string `json:"runner,omitempty"`
	KillWorkersOnExit bool   `json:"kill_workers_on_exit,omitempty"`
	Compactions       int    `json:"compactions,omitempty"`
	// Pilot: the run is a conversation with a person, turn by turn (zwarm
	// pilot), not a task run to its finish.
	Pilot bool `json:"pilot,omitempty"`

	// Changes is what became of the workers' changes when the run ended:
	// landed, left on the worker's branch, or made in place. The summary
	// ends with the same, in words.
	Changes []WorkerChange `json:"changes,omitempty"`

	// Owner is the process running the run, by pid and start time, so a
	// run whose process died is never shown running.
	Owner *proc.Ref `json:"owner,omitempty"`
	// Seen is, per worker, the end the model has read (wait, check...);
	// Reported the end an observation has announced.
	Seen     map[string]time.Time `json:"seen,omitempty"`
	Reported map[string]time.Time `json:"reported,omitempty"`
	// Question is what the model asked the person, while the run waits
	// for the answer (StatusWaiting); nil otherwise.
	Question *Question `json:"question,omitempty"`
}

// Question is a question of the model to the person (ask_user).
type Question struct {
	// ID names the question: an answer sent with zwarm runs answer
	// carries it, so an answer meant for one question never answers
	// another.
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Options []string  `json:"options,omitempty"`
	AskedAt time.Time `json:"asked_at"`
}

// Pick is an answer to q as a person gives it: an option's own text, or
// its number ("2": the second), picks that option (n is its number, from
// 1); anything else is the answer itself (n 0). A whole number that is no
// option's (4 of three) is refused rather than sent as text: it was meant
// as a pick. A question without options takes any number as text.
func (q Question) Pick(answer string) (text string, n int, err error) {
	a := strings.TrimSpace(answer)
	for i, o := range q.Options {
		if a == strings.TrimSpace(o) {
			return o, i + 1, nil
		}
	}
	k, cerr := strconv.Atoi(a)
	// A number too large for an int is a number all the same, and none
	// of the options'.
	var ne *strconv.NumError
	switch {
	case len(q.Options) == 0, cerr != nil && !(errors.As(cerr, &ne) && ne.Err == strconv.ErrRange):
		return answer, 0, nil
	case cerr == nil && k >= 1 && k <= len(q.Options):
		return q.Options[k-1], k, nil
	}
	return "", 0, &PickError{N: a, Options: len(q.Options)}
}

// PickError is a number given as the answer to a question with options
// that is none of theirs.
type PickError struct {
	N       string
	Options int
}

func (e *PickError) Error() string {
	return fmt.Sprintf("%s is not one of the question's options (1-%d): give the number of one, or write the answer in words", e.N, e.Options)
}

// Account is one worker's usage and cost.
type Account struct {
	Usage   record.Usage  `json:"usage"`
	CostUSD *float64      `json:"cost_usd"`
	Status  record.Status `json:"status"`
}

// Current returns the record as it truly is: a run whose owner is gone is
// interrupted, never running or waiting (nobody is left to take an
// answer).
func (r *Record) Current() *Record {
	if !r.Status.Live() || r.Owner.Alive() {
		return r
	}
	c := *r
	c.Status, c.Question = StatusInterrupted, nil
	pid := 0
	if r.Owner != nil {
		pid = r.Owner.PID
	}
	c.StopReason = fmt.Sprintf("its process (pid %d) ended without saving an outcome; zwarm orchestrate --resume %s continues it", pid, record.ShortID(r.ID))
	return &c
}

// TotalTokens is the tokens of the model and its workers.
func (r *Record) TotalTokens() int64 { return r.Usage.TotalTokens + r.WorkerUsage.TotalTokens }

// TotalCost is the cost of the model and its workers, and whether every
// price was known.
func (r *Record) TotalCost() (float64, bool) {
	c, known := 0.0, true
	for _, p := range []*float64{r.CostUSD, r.WorkerCostUSD} {
		if p == nil {
			known = false
		} else {
			c += *p
		}
	}
	return record.RoundCost(c), known
}

// CostNotYet says a live run has reported no usage yet (its first model
// call has not ended): its cost is not known yet, which is not unpriced.
func (r *Record) CostNotYet() bool { return r.Status.Live() && r.TotalTokens() == 0 }

// LimitReached names the limit that stopped a run, as the run judges it before each step
// ("max_steps", "max_cost", "max_tokens"), "timeout" for the wall clock,
// or "" for a run no limit stopped.
func (rec *Record) LimitReached() string {
	if rec.Status != StatusLimited {
		return ""
	}
	if name := rec.Spent(rec.Limits); name != "" {
		return name
	}
	return "timeout"
}

// Spent names the first of the limits the record has used up, "" if none.
func (rec *Record) Spent(lim Limits) string {
	cost, _ := rec.TotalCost()
	switch {
	case rec.Steps >= lim.MaxSteps:
		return "max_steps"
	case lim.MaxCostUSD > 0 && cost >= lim.MaxCostUSD:
		return "max_cost"
	case lim.MaxTokens > 0 && rec.TotalTokens() >= lim.MaxTokens:
		return "max_tokens"
	}
	return ""
}

// Clone is a copy of the record that shares nothing changeable with it.
func (r *Record) Clone() *Record {
	c := *r
	c.Workers = append([]string(nil), r.Workers...)
	c.Changes = append([]WorkerChange(nil), r.Changes...)
	c.Accounts = make(map[string]Account, len(r.Accounts))
	for k, v := range r.Accounts {
		c.Accounts[k] = v
	}
	c.Seen, c.Reported = cloneTimes(r.Seen), cloneTimes(r.Reported)
	if r.Question != nil {
		q := *r.Question
		q.Options = append([]string(nil), q.Options...)
		c.Question = &q
	}
	return &c
}

func cloneTimes(m map[string]time.Time) map[string]time.Time {
	if m == nil {
		return nil
	}
	out := make(map[string]time.Time, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Limits bound a run. Zero values mean no limit, except MaxSteps.
type Limits struct {
	MaxSteps   int             `json:"max_steps"`
	MaxCostUSD float64         `json:"max_cost_usd,omitempty"`
	MaxTokens  int64           `json:"max_tokens,omitempty"`
	MaxWorkers int             `json:"max_workers,omitempty"`
	Timeout    config.Duration `json:"timeout,omitempty"`
}

// Outcomes of a worker's change when the run ended.
const (
	ChangeLanded   = "landed"
	ChangeUnlanded = "unlanded"
	ChangeInPlace  = "in_place"
)

// WorkerChange is what became of one worker's change when the run ended.
type WorkerChange struct {
	Session string `json:"session"`
	Outcome string `json:"outcome"`
	// Changes is its size ("+12 -3 in 2 files"); Branch holds it.
	Changes string `json:"changes,omitempty"`
	Branch  string `json:"branch,omitempty"`
	// Into and Commit say where it was landed (for an unlanded change,
	// where an earlier part of it was), as which commit.
	Into   string `json:"into,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Running: the worker had not finished, so its change may grow.
	Running bool   `json:"running,omitempty"`
	Task    string `json:"task"`
}
