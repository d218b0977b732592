package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// InboxDir holds a run's inbox: what the person sends it (zwarm runs say,
// zwarm runs answer), one file per message, <seq>-<id>.json.
//
// A sender takes the inbox's lock (.lock, made as the state dir makes
// its locks), numbers its message one past the highest number there, and
// writes the file atomically before letting go: concurrent senders never share a number, and a
// message is whole or absent whenever a sender dies. Only the process
// running the run changes an entry afterwards (its State), and it reads
// the queued ones under the same lock, so none is passed over for a later
// one: they reach the model in the order they were sent. What reached the
// model is marked delivered after the conversation holding it is durable;
// the conversation carries the message's number, so a run killed between
// the two finds it there on resume and does not give it twice.
const InboxDir = "inbox"

const inboxLock = ".lock"

// MaxMessageBytes bounds one message: it goes whole into the conversation.
const MaxMessageBytes = 64 << 10

// MessageKind is what an inbox entry is.
type MessageKind string

const (
	// MessageSay is a message for the model, given to it as a user
	// message before its next call.
	MessageSay MessageKind = "say"
	// MessageAnswer answers the question QuestionID: the output of the
	// model's ask_user call while the run waits for it, a user message if
	// the question is gone (the run stopped while it waited).
	MessageAnswer MessageKind = "answer"
)

// InboxState is what became of an inbox entry: the states of a session's
// follow-ups, whose guarantees a run's inbox keeps.
type InboxState = record.InboxState

const (
	InboxQueued      = record.InboxQueued
	InboxDelivered   = record.InboxDelivered
	InboxUndelivered = record.InboxUndelivered
)

// InboxEntry is one message of the person to a run.
type InboxEntry struct {
	ID   string      `json:"id"`
	Seq  int         `json:"seq"`
	Kind MessageKind `json:"kind"`
	Text string      `json:"text"`
	// QuestionID is the question an answer is for (Question.ID).
	QuestionID string     `json:"question_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	State      InboxState `json:"state"`
	// Step is the step whose model call first saw it.
	Step        int        `json:"step,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	// Reason says why an entry was not delivered.
	Reason string `json:"reason,omitempty"`
}

// inboxOf is the inbox dir of the run in dir, checked to hold no symlink
// between the state dir and it.
func inboxOf(dir string) (string, error) {
	in := filepath.Join(dir, InboxDir)
	if err := store.CheckNoSymlinks(filepath.Dir(filepath.Dir(dir)), in); err != nil {
		return "", err
	}
	return in, nil
}

// MakeInbox makes the inbox dir of the run in dir, if it is not there,
// and returns its path (to watch it).
func MakeInbox(dir string) (string, error) {
	in, err := inboxOf(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(in, DirPerm); err != nil {
		return "", fmt.Errorf("inbox of run %s: %w", filepath.Base(dir), err)
	}
	return in, nil
}

// Send queues a message for the run in dir (RunDir) and returns it once
// it is durable. Any number of processes may send at once.
func Send(ctx context.Context, dir string, kind MessageKind, text, questionID string) (*InboxEntry, error) {
	switch {
	case strings.TrimSpace(text) == "":
		return nil, errors.New("the message is empty")
	case len(text) > MaxMessageBytes:
		return nil, fmt.Errorf("the message is %d bytes; at most %d fit", len(text), MaxMessageBytes)
	case kind != MessageSay && kind != MessageAnswer:
		return nil, fmt.Errorf("unknown message kind %q", kind)
	}
	in, err := MakeInbox(dir)
	if err != nil {
		return nil, err
	}
	lock, err := store.LockFile(ctx, stateDirOf(filepath.Join(dir, inboxLock)), filepath.Join(in, inboxLock), "the inbox of run "+store.ShortID(filepath.Base(dir)))
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	seq, err := lastSeq(in)
	if err != nil {
		return nil, err
	}
	e := &InboxEntry{ID: uuid.NewString(), Seq: seq + 1, Kind: kind, Text: text, QuestionID: questionID,
		CreatedAt: time.Now().UTC(), State: InboxQueued}
	if err := writeEntry(in, e); err != nil {
		return nil, err
	}
	// The new name is durable too: a message the sender was told is
	// queued survives a crash of the machine.
	if d, err := os.Open(in); err == nil {
		d.Sync()
		d.Close()
	}
	return e, nil
}

// lastSeq is the highest number in the inbox, from the file names.
func lastSeq(in string) (int, error) {
	ents, err := os.ReadDir(in)
	if err != nil {
		return 0, fmt.Errorf("inbox %s: %w", in, err)
	}
	last := 0
	for _, e := range ents {
		if n, ok := entrySeq(e.Name()); ok && n > last {
			last = n
		}
	}
	return last, nil
}

// entrySeq is the number in an entry's file name.
func entrySeq(name string) (int, bool) {
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	head, _, ok := strings.Cut(name, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(head)
	return n, err == nil && n > 0
}

func writeEntry(in string, e *InboxEntry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(in, fmt.Sprintf("%08d-%s.json", e.Seq, e.ID))
	if err := store.WriteFileAtomic("", path, append(b, '\n')); err != nil {
		return fmt.Errorf("inbox: write message %d: %w", e.Seq, err)
	}
	return nil
}

// ReadInbox returns the entries of the run in dir, in the order sent.
// Each is whole; one being sent at this instant may be missing while a
// later one is there (QueuedMessages never misses it).
func ReadInbox(dir string) ([]InboxEntry, error) {
	in, err := inboxOf(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(in)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inbox of run %s: %w", filepath.Base(dir), err)
	}
	var out []InboxEntry
	for _, de := range ents {
		if _, ok := entrySeq(de.Name()); !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(in, de.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // replaced while listed: its new file is read below or next time
		}
		if err != nil {
			return out, fmt.Errorf("inbox of run %s: %w", filepath.Base(dir), err)
		}
		var e InboxEntry
		if err := json.Unmarshal(b, &e); err != nil {
			return out, fmt.Errorf("inbox of run %s: %s is not readable: %w", filepath.Base(dir), de.Name(), err)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// QueuedMessages returns the queued entries of the run in dir, in the
// order sent, read under the inbox's lock: no message sent before the
// newest one returned is missing.
func QueuedMessages(ctx context.Context, dir string) ([]InboxEntry, error) {
	in, err := inboxOf(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(in); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	lock, err := store.LockFile(ctx, stateDirOf(filepath.Join(dir, inboxLock)), filepath.Join(in, inboxLock), "the inbox of run "+store.ShortID(filepath.Base(dir)))
	if err != nil {
		return nil, err
	}
	all, err := ReadInbox(dir)
	lock.Unlock()
	var out []InboxEntry
	for _, e := range all {
		if e.State == InboxQueued {
			out = append(out, e)
		}
	}
	return out, err
}

// QueuedCount counts the queued entries of the run in dir, as read
// without the lock (ReadInbox): a count to show, not to act on.
func QueuedCount(dir string) int {
	entries, _ := ReadInbox(dir)
	n := 0
	for _, e := range entries {
		if e.State == InboxQueued {
			n++
		}
	}
	return n
}

// SettleEntry records what became of an entry: its State, Step,
// DeliveredAt and Reason as set. Only the process running the run calls
// it.
func SettleEntry(dir string, e *InboxEntry) error {
	in, err := inboxOf(dir)
	if err != nil {
		return err
	}
	return writeEntry(in, e)
}
