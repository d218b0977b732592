package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/zwarm/zwarm/orchestrator/runs"
)

// What the person sends a run (zwarm runs say, runs answer) waits in its
// inbox (runs.InboxDir) until the run gives it to the model: a message
// before the next model call, as a user message; an answer as the output
// of the ask_user call that waits for it. Either carries its inbox
// number in the conversation ("[from the user, message 3] ..."), which is
// how a resumed run tells what reached the model before a crash from what
// did not: an entry is marked delivered only after the conversation
// holding it is durable, and a crash between the two leaves it queued,
// with its number in the conversation.

// userMarker starts what the person sent, in the conversation.
var userMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[from the user, message (\d+)\]`) })

func fromUser(seq int, text string) string {
	return fmt.Sprintf("[from the user, message %d] %s", seq, text)
}

func (r *Run) initPerson() {
	r.given, r.answered, r.asked = map[int]bool{}, map[string]bool{}, map[string]string{}
}

// deliverInbox gives the model the messages queued in the inbox, in the
// order they were sent, before the step's model call; the step is made
// durable, then the entries are marked delivered. A run that cannot read
// its inbox says so and goes on: the messages wait for the next step.
func (r *Run) deliverInbox(ctx context.Context) error {
	queued, err := runs.QueuedMessages(ctx, r.dir)
	if err != nil && ctx.Err() == nil { // a run being stopped has nothing to say about it
		r.emit(runs.Event{Type: runs.EventNotice, Step: r.rec.Steps + 1, Error: err.Error(), Text: "could not read the run's inbox"})
	}
	step, now := r.rec.Steps+1, time.Now().UTC()
	given := false
	for _, e := range queued {
		if r.given[e.Seq] {
			continue // given already; its mark failed
		}
		if e.Kind == runs.MessageAnswer && r.answered[e.QuestionID] {
			// "Whichever first": the question was answered another way.
			e.State, e.Reason = runs.InboxUndelivered, "its question was already answered"
			r.settle = append(r.settle, e)
			continue
		}
		text := e.Text
		ev := runs.Event{Type: runs.EventMessage, Step: step, Text: e.Text, Inbox: e.Seq}
		if e.Kind == runs.MessageAnswer {
			// Its question is gone: the run stopped while it waited, and
			// the call got an output saying so. The answer still counts.
			text = fmt.Sprintf("Answer to your question %q: %s", r.asked[e.QuestionID], e.Text)
			ev.QuestionID = e.QuestionID
			r.answered[e.QuestionID] = true
		}
		if err := r.appendItems(message("user", fromUser(e.Seq, text))); err != nil {
			return err
		}
		r.given[e.Seq], given = true, true
		e.State, e.Step, e.DeliveredAt = runs.InboxDelivered, step, &now
		r.settle = append(r.settle, e)
		r.emit(ev)
	}
	if given {
		if err := r.save(); err != nil {
			return err
		}
	}
	r.settleInbox()
	return nil
}

// settleInbox marks the entries the model has been given, once the
// conversation holding them is durable.
func (r *Run) settleInbox() {
	for i := range r.settle {
		if err := runs.SettleEntry(r.dir, &r.settle[i]); err != nil {
			// It stays queued on disk; this process will not give it
			// again (given), and a resume finds it in the conversation.
			r.opt.Log.Error("orchestrator: mark an inbox message", "run", r.rec.ID, "seq", r.settle[i].Seq, "err", err)
		}
	}
	r.settle = nil
}

// reconcileInbox marks delivered the queued entries that the
// conversation already holds: the process that gave them to the model
// died before it could mark them.
func (r *Run) reconcileInbox() {
	entries, err := runs.ReadInbox(r.dir)
	if err != nil {
		r.opt.Log.Error("orchestrator: read the inbox", "run", r.rec.ID, "err", err)
	}
	if len(entries) == 0 {
		return
	}
	inConvo := map[int]bool{}
	for _, raw := range r.items {
		it := inspect(raw)
		text := ""
		switch {
		case it.isInput() && it.Role == "user":
			text = it.text()
		case it.isOutput():
			text = it.outputText()
		}
		if m := userMarker().FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			inConvo[n] = true
		}
	}
	now := time.Now().UTC()
	for _, e := range entries {
		if e.State == runs.InboxQueued && inConvo[e.Seq] {
			r.given[e.Seq] = true
			e.State, e.DeliveredAt = runs.InboxDelivered, &now
			r.settle = append(r.settle, e)
		}
	}
	r.settleInbox()
}

// errMessage ends a wait or a sleep when the user sends a message.
var errMessage = errors.New("a message from the user arrived; it follows")

// interruptible are the tools that only wait: a message of the user cuts
// them short, so the model reads it now rather than after an hour's wait.
var interruptible = map[string]bool{"wait": true, "sleep": true}

// untilMessage returns a context that ends, with errMessage as its cause,
// when a message the model has not been given waits in the inbox; stop
// ends the watch and waits for its goroutine. Without a watch (the
// system's limit), the call runs to its end as before.
func (r *Run) untilMessage(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	in, err := runs.MakeInbox(r.dir)
	var w *fsnotify.Watcher
	if err == nil {
		w, err = fsnotify.NewWatcher()
	}
	if err == nil {
		if err = w.Add(in); err != nil {
			w.Close()
		}
	}
	if err != nil {
		r.opt.Log.Warn("orchestrator: no watch on the inbox", "run", r.rec.ID, "err", err)
		return ctx, func() { cancel(nil) }
	}
	given := maps.Clone(r.given) // the run's goroutine owns r.given
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if r.messageWaits(given) {
				cancel(errMessage)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-w.Events:
			case <-w.Errors:
			}
		}
	}()
	return ctx, func() {
		cancel(nil)
		<-done
		w.Close()
	}
}

// messageWaits says a message the model has not been given is queued.
func (r *Run) messageWaits(given map[int]bool) bool {
	entries, _ := runs.ReadInbox(r.dir)
	for _, e := range entries {
		if e.State == runs.InboxQueued && e.Kind == runs.MessageSay && !given[e.Seq] {
			return true
		}
	}
	return false
}
