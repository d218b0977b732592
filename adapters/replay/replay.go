// Package replay is an agent that plays back recorded transcripts with
// their original pacing. It powers `zwarm demo`: real supervised workers,
// real turn files, real follow-ups and kills, without a model or an API key.
//
// A recording is a JSONL file. Its first line is a header,
//
//	{"replay": 1, "task": "add a --verbose flag", "model": "gpt-5.1-codex-mini"}
//
// and every further line is an output line of the recorded agent and when it
// was printed, or how the agent exited:
//
//	{"at_ms": 1200, "line": {"type": "turn.started"}}
//	{"at_ms": 9000, "exit": 0}
//
// In a line, "$THREAD" becomes the session's thread id and "$PROMPT" the
// prompt. Recordings are played from the state dir's replays/ folder; the
// first turn plays the recording whose task is the prompt, follow-ups play
// "followup.jsonl". The demo's recordings are built into the binary
// (Recordings), so `zwarm demo` works from any directory.
package replay

import (
	"bufio"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
)

// Recordings are the demo's recordings, in recordings/*.jsonl.
//
//go:embed recordings/*.jsonl
var Recordings embed.FS

// Name is the adapter's name.
const Name = "replay"

// Dir is the folder of recordings in the state dir.
const Dir = "replays"

// SpeedEnv scales the recorded pacing (2 plays twice as fast).
const SpeedEnv = "ZWARM_REPLAY_SPEED"

// Header is the first line of a recording.
type Header struct {
	Replay int    `json:"replay"`
	Task   string `json:"task"`
	Model  string `json:"model"`
}

// Adapter is the replay adapter. The recorded agent's output format is
// read by the parser it is given.
type Adapter struct {
	newParser func() agent.Parser
	player    []string
}

// New returns a replay adapter whose recordings are parsed by newParser and
// played by the command player (argv; the recording path, the speed, thread
// id and prompt are appended).
func New(newParser func() agent.Parser, player []string) *Adapter {
	return &Adapter{newParser: newParser, player: player}
}

// Name implements agent.Adapter.
func (*Adapter) Name() string { return Name }

// DefaultModel implements agent.Adapter.
func (*Adapter) DefaultModel(string) string { return "recorded" }

// NewParser implements agent.Adapter.
func (a *Adapter) NewParser() agent.Parser { return a.newParser() }

// Interactive implements agent.Adapter: a recording has no CLI to work
// in.
func (*Adapter) Interactive(agent.TurnRequest) (agent.Command, error) {
	return agent.Command{}, config.Invalidf("a replayed worker has no interactive CLI to attach to: it plays a recording")
}

// Command implements agent.Adapter.
func (a *Adapter) Command(req agent.TurnRequest) (agent.Command, error) {
	if len(a.player) == 0 {
		return agent.Command{}, errors.New("replay: no player command")
	}
	dir := filepath.Join(req.StateDir, Dir)
	var path string
	if req.ThreadID != "" {
		path = filepath.Join(dir, "followup.jsonl")
	} else {
		recs, err := List(dir)
		if err != nil {
			return agent.Command{}, err
		}
		for p, h := range recs {
			if h.Task == req.Prompt {
				path = p
			}
		}
		if path == "" {
			return agent.Command{}, config.Invalidf("no recording in %s has the task %q", dir, req.Prompt)
		}
	}
	speed := os.Getenv(SpeedEnv)
	if speed == "" {
		speed = "1"
	}
	thread := req.ThreadID
	if thread == "" {
		thread = "replay-" + req.SessionID
	}
	args := append(append([]string{}, a.player[1:]...), "--speed", speed, "--", path, thread, req.Prompt)
	return agent.Command{Path: a.player[0], Args: args, Dir: req.WorkingDir}, nil
}

// List reads the headers of the recordings in dir, by path.
func List(dir string) (map[string]Header, error) {
	out, err := listFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]Header, len(out))
	for p, h := range out {
		byPath[filepath.Join(dir, p)] = h
	}
	return byPath, nil
}

// listFS reads the headers of the recordings in dir of fsys.
func listFS(fsys fs.FS, dir string) (map[string]Header, error) {
	paths, err := fs.Glob(fsys, path.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	out := map[string]Header{}
	for _, p := range paths {
		f, err := fsys.Open(p)
		if err != nil {
			return nil, err
		}
		h, err := readHeader(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		out[p] = h
	}
	return out, nil
}

func readHeader(r io.Reader, name string) (Header, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var h Header
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &h) != nil || h.Replay != 1 {
		return Header{}, fmt.Errorf("%s is not a zwarm recording (its first line must be {\"replay\": 1, ...})", name)
	}
	h.Task = strings.TrimSpace(h.Task)
	return h, nil
}

// Stage copies recordings into stateDir's replays folder and returns their
// headers, sorted by task: those of the folder src, or with src "", the
// ones built in.
func Stage(stateDir, src string) ([]Header, error) {
	fsys, dir, where := fs.FS(Recordings), "recordings", "the built-in recordings"
	if src != "" {
		fsys, dir, where = os.DirFS(src), ".", src
	}
	recs, err := listFS(fsys, dir)
	if err != nil {
		return nil, err
	}
	var tasks []Header
	for _, h := range recs {
		if h.Task != "" {
			tasks = append(tasks, h)
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no recordings with a task in %s (each is a .jsonl file whose first line is {\"replay\": 1, \"task\": ...})", where)
	}
	dst := filepath.Join(stateDir, Dir)
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return nil, err
	}
	for p := range recs {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dst, path.Base(p)), data, 0o600); err != nil {
			return nil, err
		}
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Task < tasks[j].Task })
	return tasks, nil
}
