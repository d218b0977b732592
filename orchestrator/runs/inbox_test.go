package runs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func newRunDir(t *testing.T) string {
	t.Helper()
	dir := RunDir(t.TempDir(), "aaaa1111-0000-4000-8000-000000000000")
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Senders at once never share a number, and each one's messages keep the
// order it sent them in.
func TestInboxConcurrentSendersNumberInOrder(t *testing.T) {
	dir := newRunDir(t)
	const senders, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := Send(context.Background(), dir, MessageSay, fmt.Sprintf("s%d m%d", s, i), ""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// What a sender killed mid-write leaves is not a message.
	os.WriteFile(filepath.Join(dir, InboxDir, ".00000999-x.json.tmp123"), []byte(`{"seq":`), 0o600)
	all, err := QueuedMessages(context.Background(), dir)
	if err != nil || len(all) != senders*each {
		t.Fatalf("%d queued, %v", len(all), err)
	}
	next := map[string]int{}
	for i, e := range all {
		if e.Seq != i+1 || e.State != InboxQueued || e.Kind != MessageSay {
			t.Fatalf("entry %d: %+v", i, e)
		}
		var s, m int
		fmt.Sscanf(e.Text, "s%d m%d", &s, &m)
		key := fmt.Sprint(s)
		if m != next[key] {
			t.Fatalf("sender %d: message %d came where %d was due", s, m, next[key])
		}
		next[key]++
	}
}

func TestInboxSettleAndRefusals(t *testing.T) {
	dir := newRunDir(t)
	ctx := context.Background()
	for _, c := range []struct {
		text string
		kind MessageKind
		want string
	}{
		{"  \n", MessageSay, "the message is empty"},
		{strings.Repeat("x", MaxMessageBytes+1), MessageSay, "at most 65536 fit"},
		{"hi", "shout", `unknown message kind "shout"`},
	} {
		if _, err := Send(ctx, dir, c.kind, c.text, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Send(%q, %.10q): %v, want %q", c.kind, c.text, err, c.want)
		}
	}
	if q, err := QueuedMessages(ctx, dir); err != nil || len(q) != 0 {
		t.Fatalf("an inbox never written to: %v %v", q, err)
	}
	a, _ := Send(ctx, dir, MessageSay, "first", "")
	b, err := Send(ctx, dir, MessageAnswer, "yes", "q-1")
	if err != nil || b.Seq != 2 || b.QuestionID != "q-1" {
		t.Fatalf("%+v %v", b, err)
	}
	now := time.Now().UTC()
	a.State, a.Step, a.DeliveredAt = InboxDelivered, 3, &now
	if err := SettleEntry(dir, a); err != nil {
		t.Fatal(err)
	}
	q, _ := QueuedMessages(ctx, dir)
	if len(q) != 1 || q[0].ID != b.ID {
		t.Fatalf("queued after settling the first: %+v", q)
	}
	all, _ := ReadInbox(dir)
	if len(all) != 2 || all[0].State != InboxDelivered || all[0].Step != 3 {
		t.Fatalf("%+v", all)
	}
	// A symlinked inbox is refused, never written through.
	other := t.TempDir()
	os.RemoveAll(filepath.Join(dir, InboxDir))
	os.Symlink(other, filepath.Join(dir, InboxDir))
	if _, err := Send(ctx, dir, MessageSay, "x", ""); err == nil {
		t.Error("sent through a symlink")
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("wrote %d files through the symlink", len(ents))
	}
}

// A run waiting for an answer whose process died asks nothing any more.
func TestAWaitingRunWhoseProcessDiedIsInterrupted(t *testing.T) {
	q := &Question{ID: "q", Text: "which?", AskedAt: time.Now()}
	rec := &Record{ID: "r", Status: StatusWaiting, Question: q}
	if c := rec.Current(); c.Status != StatusInterrupted || c.Question != nil || rec.Question == nil {
		t.Errorf("a waiting run without an owner: %+v", c)
	}
	c := rec.Clone()
	c.Question.Options = append(c.Question.Options, "x")
	if len(rec.Question.Options) != 0 || !StatusWaiting.Live() || StatusInterrupted.Live() {
		t.Error("Clone shares the question, or Live is wrong")
	}
}
