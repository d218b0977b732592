package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/uuid"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/orchestrator/tools"
)

// NoAnswer is ask_user's output when ask_timeout passed without an answer.
const NoAnswer = "no answer: decide yourself"

// answer is how a question was answered.
type answer struct {
	text  string // what the model gets
	said  string // what the person wrote, for the event
	via   string // runs.AnswerTerminal, AnswerInbox, AnswerTimeout
	entry *runs.InboxEntry
}

// ask is ask_user's handler: the run waits, its status waiting and the
// question in run.json, for the first answer from the run's terminal or
// its inbox (zwarm runs answer), or for ask_timeout. A run stopped while
// it waits (Ctrl+C, runs kill, its timeout) gets the call's output from
// cutShort and ends as it would in any tool.
func (r *Run) ask(ctx context.Context, question string, options []string) tools.Result {
	step := r.rec.Steps
	q := runs.Question{ID: uuid.NewString(), Text: question, Options: options, AskedAt: time.Now().UTC()}
	r.asked[q.ID] = question
	r.mu.Lock()
	r.rec.Status, r.rec.Question = runs.StatusWaiting, &q
	r.mu.Unlock()
	r.emit(runs.Event{Type: runs.EventQuestion, Step: step, QuestionID: q.ID, Text: question, Options: options})
	// Durable and in run.json at once: runs, runs show and the dashboard
	// show the question while the run waits.
	if err := r.save(); err != nil {
		r.opt.Log.Error("orchestrator: record the question", "run", r.rec.ID, "err", err)
	}
	a, err := r.await(ctx, q)
	r.mu.Lock()
	r.rec.Status, r.rec.Question = runs.StatusRunning, nil
	r.mu.Unlock()
	if err != nil {
		return tools.Errorf("no answer came: %v", err)
	}
	r.answered[q.ID] = true
	ev := runs.Event{Type: runs.EventAnswer, Step: step, QuestionID: q.ID, Text: a.said, Via: a.via}
	if e := a.entry; e != nil {
		// Marked delivered at the step's end, once the output holding it
		// is durable (deliverInbox says why).
		now := time.Now().UTC()
		e.State, e.Step, e.DeliveredAt = runs.InboxDelivered, step, &now
		r.given[e.Seq] = true
		r.settle = append(r.settle, *e)
		ev.Inbox = e.Seq
	}
	r.emit(ev)
	if err := r.save(); err != nil {
		r.opt.Log.Error("orchestrator: record the answer", "run", r.rec.ID, "err", err)
	}
	return tools.Result{Text: a.text}
}

// await waits for the answer to q. The prompt on the terminal, if any,
// runs on a goroutine of its own, ended and waited for before await
// returns, whichever answer came first.
func (r *Run) await(ctx context.Context, q runs.Question) (answer, error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	// The inbox is watched before it is read, so an answer sent in
	// between is seen either way. Without a watch (the system's limit),
	// it is read again every few seconds.
	var events <-chan fsnotify.Event
	var errs <-chan error
	var poll <-chan time.Time
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
	if err == nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	} else {
		r.opt.Log.Warn("orchestrator: no watch on the inbox; reading it every 2s", "run", r.rec.ID, "err", err)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		poll = t.C
	}

	type reply struct {
		text string
		err  error
	}
	var term chan reply
	if r.opt.Prompt != nil {
		term = make(chan reply, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := r.opt.Prompt(ctx, q)
			term <- reply{s, err}
		}()
	}
	var expire <-chan time.Time
	if d := r.set.AskTimeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expire = t.C
	}
	for {
		if e := r.inboxAnswer(q.ID); e != nil {
			return answer{text: fromUser(e.Seq, e.Text), said: e.Text, via: runs.AnswerInbox, entry: e}, nil
		}
		select {
		case <-ctx.Done():
			return answer{}, ctx.Err()
		case <-expire:
			return answer{text: NoAnswer, said: NoAnswer, via: runs.AnswerTimeout}, nil
		case t := <-term:
			term = nil
			if t.err == nil && strings.TrimSpace(t.text) != "" {
				return answer{text: "[from the user] " + t.text, said: t.text, via: runs.AnswerTerminal}, nil
			}
			if ctx.Err() == nil {
				// The terminal went away (end of input): the inbox can
				// still answer.
				r.opt.Log.Warn("orchestrator: no answer from the terminal", "run", r.rec.ID, "err", t.err)
			}
		case <-events:
		case <-errs:
		case <-poll:
		}
	}
}

// inboxAnswer is the first queued answer to question id, if one came.
func (r *Run) inboxAnswer(id string) *runs.InboxEntry {
	entries, err := runs.ReadInbox(r.dir)
	if err != nil {
		r.opt.Log.Warn("orchestrator: read the inbox", "run", r.rec.ID, "err", err)
	}
	for i := range entries {
		e := &entries[i]
		if e.State == runs.InboxQueued && e.Kind == runs.MessageAnswer && e.QuestionID == id && !r.given[e.Seq] {
			return e
		}
	}
	return nil
}

// askAgain asks the person, once a resumed run starts, the question it
// stopped waiting on, if nothing answered it meanwhile: the person who
// resumes it is asked, and the dashboard, runs and [notify] show it
// waiting again. The call that asked it has its output already (the run
// was stopped), so the answer reaches the model as a message, before its
// next call. An answer sent while it was stopped needs no asking: the
// inbox gives it (deliverInbox).
func (r *Run) askAgain(ctx context.Context) error {
	q := r.unanswered
	r.unanswered = nil
	if q == nil || !r.set.Ask || r.answered[q.ID] || r.inboxAnswer(q.ID) != nil {
		return nil
	}
	res := r.ask(ctx, q.Text, q.Options)
	if res.IsError || ctx.Err() != nil {
		return nil // stopped again while it waited: the next resume asks
	}
	return r.appendItems(message("user", fmt.Sprintf("Answer to your question %q, asked again when the run was resumed: %s", q.Text, res.Text)))
}
