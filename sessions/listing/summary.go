package listing

import (
	"time"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
)

// How a settled record is kept in the listing cache and made into a
// Session again.

// SummaryOf is a record as listings carry it: without its turns.
func SummaryOf(s *record.Session) *record.Session {
	c := *s
	c.Turns, c.LegacyMessages = nil, nil
	return &c
}

func Summarize(key index.Key, s *record.Session) summary {
	sum := summary{Key: key, ID: s.ID, Task: s.Task, Status: string(s.Status()), Adapter: s.Adapter, Model: s.Model,
		Sandbox: s.Sandbox, WorkingDir: s.WorkingDir, Source: s.Source.String(), ThreadID: s.ThreadID,
		LastMessage: s.LastMessage, Error: s.Error, CreatedAt: s.CreatedAt.UnixNano(), UpdatedAt: s.UpdatedAt.UnixNano(),
		PID: s.PID, Turn: s.Turn, PendingInjects: s.PendingInjects, NextInboxSeq: s.NextInboxSeq,
		InputTokens: s.Usage.InputTokens, CachedInputTokens: s.Usage.CachedInputTokens, CacheWriteTokens: s.Usage.CacheWriteInputTokens,
		OutputTokens: s.Usage.OutputTokens, ReasoningTokens: s.Usage.ReasoningOutputTokens, TotalTokens: s.Usage.TotalTokens,
		Denied: s.Denied, Workspace: s.Workspace,
		Role: s.Role, ReasoningEffort: s.ReasoningEffort, Instructions: s.Instructions, MaxCostUSD: s.MaxCostUSD}
	if s.Job != nil {
		sum.JobRunner, sum.JobID = s.Job.Runner, s.Job.ID
	}
	if s.EndedAt != nil {
		sum.EndedAt = s.EndedAt.UnixNano()
	}
	if s.LastEventAt != nil {
		sum.LastEventAt = s.LastEventAt.UnixNano()
	}
	if s.ExitCode != nil {
		sum.ExitCode, sum.HasExit = *s.ExitCode, true
	}
	if s.CostUSD != nil {
		sum.Cost, sum.HasCost = *s.CostUSD, true
	}
	return sum
}

// slab makes the records of a listing from the cache in a few
// allocations instead of several per session. It grows by blocks, never
// by copying, so the records it made stay where they are.
type slab struct {
	sessions []record.Session
	times    []time.Time
	ints     []int
	floats   []float64
}

// slabBlock is the most records a slab allocates at once once it has to
// grow: a filtered listing of many sessions may keep few.
const slabBlock = 1024

func newSlab(n int) *slab {
	return &slab{sessions: make([]record.Session, 0, n), times: make([]time.Time, 0, 2*n), ints: make([]int, 0, n), floats: make([]float64, 0, n)}
}

// grow makes room for one more of each kind, in a new block if need be.
func (sl *slab) grow() {
	if len(sl.sessions) == cap(sl.sessions) {
		sl.sessions = make([]record.Session, 0, slabBlock)
	}
	if len(sl.times)+2 > cap(sl.times) {
		sl.times = make([]time.Time, 0, 2*slabBlock)
	}
	if len(sl.ints) == cap(sl.ints) {
		sl.ints = make([]int, 0, slabBlock)
	}
	if len(sl.floats) == cap(sl.floats) {
		sl.floats = make([]float64, 0, slabBlock)
	}
}

func (sl *slab) session(e *summary) *record.Session {
	sl.grow()
	src, _ := record.ParseSource(e.Source)
	sl.sessions = append(sl.sessions, record.Session{Version: record.SchemaVersion, ID: e.ID, Task: e.Task,
		Adapter: e.Adapter, Model: e.Model, Sandbox: e.Sandbox, WorkingDir: e.WorkingDir, Source: src, ThreadID: e.ThreadID,
		LastMessage: e.LastMessage, Error: e.Error, CreatedAt: time.Unix(0, e.CreatedAt).UTC(), UpdatedAt: time.Unix(0, e.UpdatedAt).UTC(),
		PID: e.PID, Turn: e.Turn, PendingInjects: e.PendingInjects, NextInboxSeq: e.NextInboxSeq,
		Usage: record.Usage{InputTokens: e.InputTokens, CachedInputTokens: e.CachedInputTokens, CacheWriteInputTokens: e.CacheWriteTokens,
			OutputTokens: e.OutputTokens, ReasoningOutputTokens: e.ReasoningTokens, TotalTokens: e.TotalTokens},
		Denied: e.Denied, Workspace: e.Workspace,
		Role: e.Role, ReasoningEffort: e.ReasoningEffort, Instructions: e.Instructions, MaxCostUSD: e.MaxCostUSD})
	s := &sl.sessions[len(sl.sessions)-1]
	statusfield.Set(s, record.Status(e.Status))
	if e.EndedAt != 0 {
		sl.times = append(sl.times, time.Unix(0, e.EndedAt).UTC())
		s.EndedAt = &sl.times[len(sl.times)-1]
	}
	if e.LastEventAt != 0 {
		sl.times = append(sl.times, time.Unix(0, e.LastEventAt).UTC())
		s.LastEventAt = &sl.times[len(sl.times)-1]
	}
	if e.HasExit {
		sl.ints = append(sl.ints, e.ExitCode)
		s.ExitCode = &sl.ints[len(sl.ints)-1]
	}
	if e.HasCost {
		sl.floats = append(sl.floats, e.Cost)
		s.CostUSD = &sl.floats[len(sl.floats)-1]
	}
	if e.JobRunner != "" {
		s.Job = &record.Job{Runner: e.JobRunner, ID: e.JobID}
	}
	return s
}

// slabMark is how far a slab was filled: a listing that made a record it
// does not keep takes the space back (undo).
type slabMark struct{ sessions, times, ints, floats int }

func (sl *slab) mark() slabMark {
	return slabMark{len(sl.sessions), len(sl.times), len(sl.ints), len(sl.floats)}
}

func (sl *slab) undo(m slabMark) {
	// Within the block it was made in; a record that began a block stays.
	if len(sl.sessions) > m.sessions {
		sl.sessions = sl.sessions[:m.sessions]
	}
	if len(sl.times) > m.times {
		sl.times = sl.times[:m.times]
	}
	if len(sl.ints) > m.ints {
		sl.ints = sl.ints[:m.ints]
	}
	if len(sl.floats) > m.floats {
		sl.floats = sl.floats[:m.floats]
	}
}
