package orchestrator

import (
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
)

// Settings are what one run uses: the config with the command line's
// flags applied (and, on resume, what the run recorded).
type Settings struct {
	Model string
	// Dir is the run's working dir: the default for workers and commands,
	// and the root of where they may run (with AllowedDirs).
	Dir         string
	Limits      runs.Limits
	AllowedDirs []string
	Adapter     string
	WorkerModel string
	// Isolation is delegate's default (Config.Isolation).
	Isolation string
	// Runner is where its workers' supervisors run (Config.Runner).
	Runner            string
	KillWorkersOnExit bool
	ReasoningEffort   string
	// ContextWindow of the model, in tokens; compaction starts past
	// CompactAt of it and brings the conversation under CompactTo.
	ContextWindow        int64
	CompactAt, CompactTo float64
	// StreamRetries bounds new calls after a stream broke off midway.
	StreamRetries int
	// Ask offers the model ask_user: a person can answer, on the run's
	// terminal (Options.Prompt) or with zwarm runs answer. AskTimeout, if
	// positive, bounds how long it waits for an answer.
	Ask        bool
	AskTimeout time.Duration
	// Pilot makes the run a conversation, turn by turn (pilot.go): a
	// turn ends when the model answers the person; it offers neither
	// finish nor ask_user. A resumed run keeps the mode it began with.
	Pilot bool
}

// Settings returns the config's settings for a run in dir.
func (c *Config) Settings(dir string) Settings {
	return Settings{Model: c.Model, Dir: dir, Limits: c.Limits(), AllowedDirs: c.AllowedDirs, Adapter: c.Adapter,
		WorkerModel: c.WorkerModel, Isolation: c.Isolation, Runner: c.Runner, KillWorkersOnExit: c.KillWorkersOnExit, ReasoningEffort: c.ReasoningEffort,
		ContextWindow: c.Window(c.Model), CompactAt: c.CompactAt, CompactTo: c.CompactTo, StreamRetries: c.StreamRetries,
		Ask: c.Ask, AskTimeout: c.AskTimeout.Duration}
}

func (s *Settings) defaults() {
	if s.Limits.MaxSteps <= 0 {
		s.Limits.MaxSteps = DefaultMaxSteps
	}
	if s.ContextWindow <= 0 {
		s.ContextWindow = DefaultContextWindow
	}
	if s.CompactAt <= 0 || s.CompactAt > 1 {
		s.CompactAt = DefaultCompactAt
	}
	if s.CompactTo <= 0 || s.CompactTo >= s.CompactAt {
		s.CompactTo = s.CompactAt * DefaultCompactTo / DefaultCompactAt
	}
	if s.Model == "" {
		s.Model = DefaultModel
	}
}
