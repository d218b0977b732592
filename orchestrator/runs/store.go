package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/sessions/store"
	"golang.org/x/sys/unix"
)

// The files of a run, in <state>/runs/<id>/.
const (
	RunsDir          = "runs"
	RecordFile       = "run.json"
	ConversationFile = "conversation.jsonl"
	EventsFile       = "events.jsonl"
	lockFile         = ".lock"
)

// The permissions of what a run writes: its files hold code and secrets.
const (
	DirPerm  = 0o700
	FilePerm = 0o600
)

// stateDirOf is the state dir of a file of a run, <state>/runs/<id>/FILE.
func stateDirOf(path string) string { return filepath.Dir(filepath.Dir(filepath.Dir(path))) }

// openRunFile opens a file of a run, never through a symlink, at it, at
// its run's directory or at runs/ (store.OpenFile).
func openRunFile(path string, flag int) (*os.File, error) {
	return store.OpenFile(stateDirOf(path), path, flag, FilePerm)
}

// ErrNoRun is returned (wrapped) when no run matches an id.
var ErrNoRun = errors.New("no such run")

// ErrRunID is returned (wrapped) for what cannot name one run: not a run
// id, or a prefix of several.
var ErrRunID = errors.New("not one run's id")

// badRunID is an ErrRunID that says why.
type badRunID string

func (e badRunID) Error() string { return string(e) }
func (e badRunID) Unwrap() error { return ErrRunID }

// RunDir is the directory of a run.
func RunDir(stateDir, id string) string { return filepath.Join(stateDir, RunsDir, id) }

// LoadRecord reads run.json of a run given by id or unique prefix, as it
// truly is (see Record.Current).
func LoadRecord(stateDir, idOrPrefix string) (*Record, error) {
	id, err := ResolveRun(stateDir, idOrPrefix)
	if err != nil {
		return nil, err
	}
	r, err := ReadRecord(RunDir(stateDir, id))
	if err != nil {
		return nil, err
	}
	return current(RunDir(stateDir, id), r), nil
}

// current is r.Current, and for a run found dead, what its events say it
// spent after run.json was last written: a run killed in the middle of a
// step (its model call made and paid for, its tools running) recorded the
// step's usage in events.jsonl only, and read as a step and its tokens
// short of what a resume then counts.
func current(dir string, r *Record) *Record {
	c := r.Current()
	if c == r || c.Status != StatusInterrupted {
		return c
	}
	if ev := lastUsage(filepath.Join(dir, EventsFile)); ev != nil && ev.Step > c.Steps {
		t := ev.Totals
		c.Steps, c.Usage, c.CostUSD, c.WorkerUsage, c.WorkerCostUSD = ev.Step, t.Usage, t.CostUSD, t.WorkerUsage, t.WorkerCostUSD
	}
	return c
}

// lastUsage is the last usage event with totals among the last MiB of the
// events file, nil if none.
func lastUsage(path string) *Event {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(0, fi.Size()-1<<20)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	lines := bytes.Split(buf, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		if i == 0 && off > 0 {
			break // a line cut by the window
		}
		if !bytes.Contains(lines[i], []byte(`"usage"`)) {
			continue
		}
		var ev Event
		if json.Unmarshal(lines[i], &ev) == nil && ev.Type == EventUsage && ev.Totals != nil {
			return &ev
		}
	}
	return nil
}

// ReadRecord reads run.json of the run in dir, as it was written.
func ReadRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", filepath.Base(dir), err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("run %s: %s is not readable: %w", filepath.Base(dir), RecordFile, err)
	}
	return &r, nil
}

// ListRuns returns every run of the state dir, newest first, as it truly
// is. Runs that cannot be read are reported in the error beside the rest.
func ListRuns(stateDir string) ([]*Record, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, RunsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Record
	var bad []string
	for _, e := range ents {
		if !e.IsDir() || ValidID(e.Name()) != nil {
			continue
		}
		r, err := ReadRecord(filepath.Join(stateDir, RunsDir, e.Name()))
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		out = append(out, current(filepath.Join(stateDir, RunsDir, e.Name()), r))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	if len(bad) > 0 {
		return out, fmt.Errorf("%d runs could not be read: %s", len(bad), strings.Join(bad, "; "))
	}
	return out, nil
}

// ResolveRun turns a run id or unique prefix into a full id.
func ResolveRun(stateDir, prefix string) (string, error) {
	if err := ValidID(prefix); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(filepath.Join(stateDir, RunsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var hits []string
	for _, e := range ents {
		if e.Name() == prefix {
			return prefix, nil
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			hits = append(hits, e.Name())
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("run %q: %w (zwarm runs lists them)", prefix, ErrNoRun)
	case 1:
		return hits[0], nil
	}
	sort.Strings(hits)
	return "", badRunID(fmt.Sprintf("run id prefix %q is ambiguous: it matches %s; give more characters", prefix, strings.Join(hits, ", ")))
}

// ValidID accepts only hex digits and dashes, so nothing typed reaches
// a path.
func ValidID(s string) error {
	if s == "" || len(s) > 36 {
		return badRunID(fmt.Sprintf("invalid run id %q: run ids are up to 36 hex digits and dashes (see zwarm runs)", s))
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return badRunID(fmt.Sprintf("invalid run id %q: run ids are hex digits and dashes (see zwarm runs)", s))
		}
	}
	return nil
}

// WriteRecord replaces run.json atomically: a reader sees the old or the
// new record, never a mix, whenever the writer dies.
func WriteRecord(dir string, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, RecordFile)
	if err := store.WriteFileAtomic(stateDirOf(path), path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// RunLock is an exclusive lock on a run, held by the process running it:
// a flock, which the kernel releases if that process dies, or, in a state
// dir whose locks are leases (sessions/store), a lease lock, which a dead
// process leaves until its lease runs out.
type RunLock struct {
	f     *os.File
	lease *store.Lock
}

// LockRun takes the lock of the run in dir, or fails at once if another
// process holds it.
func LockRun(dir string) (*RunLock, error) {
	path := filepath.Join(dir, lockFile)
	if lease, err := store.UsesLeases(stateDirOf(path), dir); err != nil {
		return nil, err
	} else if lease {
		l, err := store.TryLease(stateDirOf(path), path, "the run")
		if errors.Is(err, store.ErrLocked) {
			return nil, errors.New("another zwarm process is running it")
		}
		if err != nil {
			return nil, err
		}
		return &RunLock{lease: l}, nil
	}
	f, err := openRunFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errors.New("another zwarm process is running it")
		}
		return nil, err
	}
	return &RunLock{f: f}, nil
}

// Unlock releases the lock.
func (l *RunLock) Unlock() {
	if l.lease != nil {
		l.lease.Unlock()
		return
	}
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

// ReadEvents returns the events of a run, oldest first (a torn last line
// is left out).
func ReadEvents(stateDir, id string) ([]Event, error) {
	lines, err := ReadLines(filepath.Join(RunDir(stateDir, id), EventsFile))
	out := make([]Event, 0, len(lines))
	for _, l := range lines {
		var ev Event
		if json.Unmarshal(l, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out, err
}

// ReadConversation returns the conversation items of a run, verbatim.
func ReadConversation(stateDir, id string) ([]json.RawMessage, error) {
	lines, err := ReadLines(filepath.Join(RunDir(stateDir, id), ConversationFile))
	out := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		out[i] = l
	}
	return out, err
}
