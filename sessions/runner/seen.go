package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Seen is what a state dir's readers last heard from a runner's engine,
// kept in runners/NAME.json in the state dir, so that any reader (a fresh
// ls as much as the dashboard) that cannot reach the engine shows the
// last answer and how long the engine has been silent, rather than
// nothing. It is a reader's note, not a record: losing it loses nothing.
type Seen struct {
	// AnsweredAt is the engine's last answer; Jobs what it said then of
	// the jobs it was asked about.
	AnsweredAt time.Time          `json:"answered_at"`
	Jobs       map[string]SeenJob `json:"jobs,omitempty"`
	// UnreachableSince is the first failed question after that answer.
	UnreachableSince *time.Time `json:"unreachable_since,omitempty"`
}

// SeenJob is a job as the engine last described it, and when.
type SeenJob struct {
	JobState
	At time.Time `json:"at"`
}

// seenFor is how long a job's last state is kept unasked about.
const seenFor = 24 * time.Hour

// SeenDir is where the notes are, under a state dir.
const SeenDir = "runners"

func seenPath(stateDir, name string) string {
	return filepath.Join(stateDir, SeenDir, name+".json")
}

// LoadSeen reads a runner's note; ok is false when there is none.
func LoadSeen(stateDir, name string) (Seen, bool) {
	var s Seen
	b, err := os.ReadFile(seenPath(stateDir, name))
	if err != nil || json.Unmarshal(b, &s) != nil {
		return Seen{}, false
	}
	return s, true
}

// noteEvery is how often a reader that polls notes an answer that says
// nothing new: the note's age is read in seconds.
const noteEvery = 10 * time.Second

// stale says whether what this process last noted (s) no longer says what
// the engine just said (states, or failed) at now: a reader that polls
// (the dashboard, wait) writes the note when something changed, and every
// noteEvery, not at each poll.
func (s Seen) stale(states map[string]JobState, failed bool, now time.Time) bool {
	if failed {
		return s.UnreachableSince == nil
	}
	if s.UnreachableSince != nil || now.Sub(s.AnsweredAt) >= noteEvery {
		return true
	}
	for id, st := range states {
		if j, ok := s.Jobs[id]; !ok || j.JobState != st {
			return true
		}
	}
	return false
}

// note records an answer (states) or a failure to get one, at now.
func note(stateDir, name string, states map[string]JobState, failed bool, now time.Time) Seen {
	s, _ := LoadSeen(stateDir, name)
	if failed {
		if s.UnreachableSince == nil {
			s.UnreachableSince = &now
		}
	} else {
		// Jobs asked about by other readers stay known a while.
		if s.Jobs == nil {
			s.Jobs = map[string]SeenJob{}
		}
		for id, st := range states {
			s.Jobs[id] = SeenJob{JobState: st, At: now}
		}
		for id, j := range s.Jobs {
			if now.Sub(j.At) > seenFor || j.Phase == Ended {
				delete(s.Jobs, id)
			}
		}
		s.AnsweredAt, s.UnreachableSince = now, nil
	}
	if stateDir == "" {
		return s
	}
	b, err := json.Marshal(s)
	if err != nil {
		return s
	}
	path := seenPath(stateDir, name)
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return s
	}
	f, err := os.CreateTemp(filepath.Dir(path), name+".*.tmp")
	if err != nil {
		return s
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
	return s
}

// Describe says, for a job of an engine that does not answer, for how
// long it has not, and what it last said of the job and when: "slurm
// unreachable for 40s; slurm 1234 on node7 as of 52s ago".
func (s Seen) Describe(runner, jobID string, now time.Time) string {
	msg := runner + " unreachable"
	if s.UnreachableSince != nil {
		msg += " for " + now.Sub(*s.UnreachableSince).Round(time.Second).String()
	}
	if j, ok := s.Jobs[jobID]; ok {
		what := j.Detail
		if j.Phase == Queued {
			what = "queued · " + what
		}
		msg += fmt.Sprintf("; %s as of %s ago", what, now.Sub(j.At).Round(time.Second))
	}
	return msg
}
