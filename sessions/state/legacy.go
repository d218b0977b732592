package state

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// DecodeSession reads meta.json, in this package's schema or in the one the
// Python zwarm wrote (no "version" key). A native record is decoded once.
// Errors name the file and say what is wrong with it.
func DecodeSession(path, id string, data []byte) (*record.Session, error) {
	bad := func(format string, a ...any) error {
		return &RecordError{ID: id, Err: fmt.Errorf("%s: "+format, append([]any{path}, a...)...)}
	}
	LearnRecords()
	var s record.Session
	err := json.Unmarshal(data, &s)
	if s.Version > record.SchemaVersion {
		return nil, bad("schema version %d is newer than this zwarm understands (%d); upgrade zwarm", s.Version, record.SchemaVersion)
	}
	if err == nil && s.Version > 0 {
		if s.ID != id {
			return nil, bad("names id %q, not the directory's; zwarm rm --force %s removes the session", s.ID, store.ShortID(id))
		}
		if _, err := record.ParseStatus(string(s.Status())); err != nil {
			// Taken for a live session, it would read as one whose
			// supervisor is gone, and be settled failed.
			return nil, bad("its status %q is not one zwarm knows; zwarm rm --force %s removes the session", s.Status(), store.ShortID(id))
		}
		if why := foreignWorktree(&s); why != "" {
			return nil, bad("%s; zwarm rm --force %s removes the session and leaves what it names", why, store.ShortID(id))
		}
		return &s, nil
	}
	var probe struct {
		Version *int `json:"version"`
	}
	if perr := json.Unmarshal(data, &probe); perr != nil {
		if _, ok := perr.(*json.UnmarshalTypeError); ok {
			return nil, bad("not a session record: %s; zwarm rm --force %s removes the session", wrongField(perr), store.ShortID(id))
		}
		return nil, bad("not valid JSON (%v); zwarm rm --force %s removes the session", perr, store.ShortID(id))
	}
	if probe.Version != nil {
		return nil, bad("not a session record: %s; zwarm rm --force %s removes the session", wrongField(err), store.ShortID(id))
	}
	ls, lerr := decodeLegacy(id, data)
	if lerr != nil {
		return nil, bad("%v", lerr)
	}
	return ls, nil
}

type legacyRecord struct {
	ID         string          `json:"id"`
	Task       string          `json:"task"`
	Status     string          `json:"status"`
	WorkingDir string          `json:"working_dir"`
	CreatedAt  json.RawMessage `json:"created_at"`
	UpdatedAt  json.RawMessage `json:"updated_at"`
	PID        int             `json:"pid"`
	ExitCode   *int            `json:"exit_code"`
	Model      string          `json:"model"`
	Turn       int             `json:"turn"`
	Messages   []struct {
		Role      string          `json:"role"`
		Content   string          `json:"content"`
		Timestamp json.RawMessage `json:"timestamp"`
	} `json:"messages"`
	TokenUsage map[string]any `json:"token_usage"`
	Error      string         `json:"error"`
	Source     string         `json:"source"`
	Adapter    string         `json:"adapter"`
}

func decodeLegacy(id string, data []byte) (*record.Session, error) {
	var r legacyRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("unreadable Python zwarm record: %w", err)
	}
	// The Python zwarm wrote both in every record: without them it is no
	// record of its (an empty object, say), and would show as a session
	// that failed in the year 1.
	if r.ID != id || legacyTime(r.CreatedAt).IsZero() {
		return nil, fmt.Errorf("not a session record: it has no version, and no id and created_at as the Python zwarm's have; zwarm rm --force %s removes the session", store.ShortID(id))
	}
	st, err := record.ParseStatus(r.Status)
	if err != nil {
		st = record.StatusFailed
	}
	s := &record.Session{
		ID: id, Task: r.Task, Adapter: r.Adapter, Model: r.Model,
		WorkingDir: r.WorkingDir, Source: legacySource(r.Source), PID: r.PID, ExitCode: r.ExitCode,
		Turn: r.Turn, Error: r.Error, Legacy: true, LegacyStatus: st,
		CreatedAt: legacyTime(r.CreatedAt), UpdatedAt: legacyTime(r.UpdatedAt),
	}
	statusfield.Set(s, st)
	if s.Adapter == "" {
		s.Adapter = "codex"
	}
	s.Usage = record.Usage{
		InputTokens:  legacyInt(r.TokenUsage["input_tokens"]),
		OutputTokens: legacyInt(r.TokenUsage["output_tokens"]),
		TotalTokens:  legacyInt(r.TokenUsage["total_tokens"]),
	}.WithTotal()
	for _, m := range r.Messages {
		s.LegacyMessages = append(s.LegacyMessages, record.LegacyMessage{Role: m.Role, Content: m.Content, Timestamp: strings.Trim(string(m.Timestamp), `"`)})
		if m.Role == "assistant" {
			s.LastMessage = m.Content
		}
	}
	return s, nil
}

// legacyTime accepts the Python forms: ISO 8601 with or without a zone, or
// seconds since the epoch.
func legacyTime(raw json.RawMessage) time.Time {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, str); err == nil {
				return t.UTC()
			}
		}
		if f, err := strconv.ParseFloat(str, 64); err == nil {
			return epochTime(f)
		}
		return time.Time{}
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return epochTime(f)
	}
	return time.Time{}
}

// epochTime is seconds since the epoch as a time, zero for what no clock
// says (NaN, or past what nanoseconds since 1970 hold, which read as 1677).
func epochTime(f float64) time.Time {
	if math.IsNaN(f) || f <= 0 || f >= math.MaxInt64/1e9 {
		return time.Time{}
	}
	return time.Unix(0, int64(f*1e9)).UTC()
}

func legacyInt(v any) int64 {
	if f, ok := v.(float64); ok {
		return int64(f)
	}
	return 0
}

func legacySource(text string) record.Source {
	src, err := record.ParseSource(text)
	if err != nil {
		return record.UserSource
	}
	return src
}

// LegacyCurrent completes a Python zwarm record for display. The Python
// zwarm never recorded an exit: a record it left "running" is shown running
// only while its worker is demonstrably alive (the pid runs an agent that
// started after the session was created), else failed, saying why.
func LegacyCurrent(s *record.Session, prices record.Prices) *record.Session {
	if s.CostUSD == nil && !s.Usage.IsZero() {
		s.CostUSD = prices.Cost(s.Model, s.Usage)
	}
	if s.LegacyStatus.Finished() || s.LegacyStatus == "" {
		return s
	}
	if legacyWorkerAlive(s) {
		statusfield.Set(s, record.StatusRunning)
		s.Error = ""
		return s
	}
	statusfield.Set(s, record.StatusFailed)
	s.Error = "written by the Python zwarm while it was " + string(s.LegacyStatus) + "; its worker is gone and its outcome was never recorded"
	return s
}

// legacyWorkerAlive checks a Python record's pid without a start time:
// the process must run codex or claude and have started no earlier than the
// session, so a reused pid is not taken for the worker.
func legacyWorkerAlive(s *record.Session) bool {
	if s.PID <= 0 {
		return false
	}
	started, err := proc.StartTime(s.PID)
	if err != nil || started.Before(s.CreatedAt.Add(-5*time.Second)) {
		return false
	}
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/cmdline")
	if err != nil {
		return false
	}
	c := string(cmd)
	return strings.Contains(c, "codex") || strings.Contains(c, "claude")
}

// turnFileRE is the name of a turn file.
var turnFileRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^turn_(\d+)\.jsonl$`) })

// LegacyTurns lists the turns of a Python zwarm session, which kept no turn
// records: one per turn file, with the user's messages, in order, as their
// prompts.
func LegacyTurns(dir string, s *record.Session) []record.Turn {
	ents, _ := os.ReadDir(dir)
	var out []record.Turn
	for _, e := range ents {
		if m := turnFileRE().FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, statusfield.With(record.Turn{N: n}, record.StatusCompleted))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	var prompts []string
	for _, lm := range s.LegacyMessages {
		if lm.Role == "user" {
			prompts = append(prompts, lm.Content)
		}
	}
	if len(prompts) == 0 && s.Task != "" {
		prompts = []string{s.Task}
	}
	for i := range out {
		if i < len(prompts) {
			out[i].Prompt = prompts[i]
		}
	}
	if n := len(out); n > 0 && s.Status() == record.StatusRunning {
		statusfield.Set(&out[n-1], record.StatusRunning)
	}
	return out
}
