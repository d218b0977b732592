package orchestrator

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// start starts a run of the harness's task and executes it on a
// goroutine; the returned func waits for its record.
func (h *harness) start(ctx context.Context, opt Options) (*Run, func() *runs.Record) {
	h.t.Helper()
	r, err := Start(ctx, opt, h.key)
	if err != nil {
		h.t.Fatal(err)
	}
	done := make(chan *runs.Record, 1)
	go func() {
		rec, err := r.Execute(ctx)
		if err != nil {
			h.t.Error(err)
		}
		done <- rec
	}()
	return r, func() *runs.Record {
		select {
		case rec := <-done:
			return rec
		case <-time.After(2 * time.Minute):
			h.t.Fatal("the run did not end")
			return nil
		}
	}
}

// waiting waits until the run waits for an answer and returns its question.
func (h *harness) waiting(id string) *runs.Question {
	h.t.Helper()
	var q *runs.Question
	sessionstest.Eventually(h.t, "the run to wait for an answer", func() bool {
		rec, err := runs.LoadRecord(h.w.State, id)
		if err == nil && rec.Status == runs.StatusWaiting {
			q = rec.Question
		}
		return q != nil
	})
	return q
}

// userTexts are the texts of the user messages and ask_user outputs of a
// model request, after the task.
func userTexts(body []byte) []string {
	var out []string
	for i, it := range fakemodel.Input(body) {
		switch {
		case it.Type == "message" && it.Role == "user" && i > 1:
			out = append(out, it.Text)
		case it.Type == "function_call_output" && strings.HasPrefix(it.Output, "[from the user"):
			out = append(out, it.Output)
		}
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.Contains(x, s) {
			n++
		}
	}
	return n
}

func inbox(t *testing.T, h *harness, id string) []runs.InboxEntry {
	t.Helper()
	entries, err := runs.ReadInbox(runs.RunDir(h.w.State, id))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func askCall(q string, options ...string) fakemodel.Reply {
	args := map[string]any{"question": q}
	if len(options) > 0 {
		args["options"] = options
	}
	return calls(call("ask_user", args))
}

// The model asks; runs answer (the inbox) answers; the run waits meanwhile
// with its question in run.json, then goes on with the answer.
func TestAskAnsweredFromTheInbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "ASK: which database")
	h.script(askCall("Which database should the service use?", "postgres", "sqlite"),
		calls(call("finish", map[string]any{"summary": "asked"})))
	set := h.settings(func(s *Settings) { s.Ask = true })
	ctx := context.Background()
	r, wait := h.start(ctx, h.options(set, 0))
	q := h.waiting(r.ID())
	if q.Text != "Which database should the service use?" || strings.Join(q.Options, "|") != "postgres|sqlite" {
		t.Fatalf("question %+v", q)
	}
	if _, err := runs.Send(ctx, runs.RunDir(h.w.State, r.ID()), runs.MessageAnswer, "postgres, the one we run", q.ID); err != nil {
		t.Fatal(err)
	}
	rec := wait()
	if rec.Status != runs.StatusCompleted || rec.Question != nil {
		t.Fatalf("%+v", rec)
	}
	reqs := h.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if outs := fakemodel.Outputs(reqs[1].Body, "ask_user"); len(outs) != 1 || outs[0] != "[from the user, message 1] postgres, the one we run" {
		t.Errorf("ask_user's output: %q", outs)
	}
	if !strings.Contains(string(reqs[0].Body), `"name":"ask_user"`) {
		t.Error("ask_user was not offered")
	}
	e := inbox(t, h, r.ID())
	if len(e) != 1 || e[0].State != runs.InboxDelivered || e[0].Step != 1 {
		t.Errorf("inbox %+v", e)
	}
	qs, as := h.eventsOf(runs.EventQuestion), h.eventsOf(runs.EventAnswer)
	if len(qs) != 1 || qs[0].QuestionID != q.ID || len(as) != 1 || as[0].Via != runs.AnswerInbox || as[0].Inbox != 1 || as[0].Text != "postgres, the one we run" {
		t.Errorf("events %+v %+v", qs, as)
	}
}

// The terminal answers first; an answer sent to the inbox afterwards is
// not given to the model, and says why.
func TestAskAnsweredFromTheTerminalFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "ASK: terminal first")
	var late *runs.InboxEntry
	var sendErr error
	h.script(askCall("Go on?"),
		fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
			// While step 2's model call is in flight, a late answer.
			evs, _ := runs.ReadEvents(h.w.State, runIDOf(h))
			for _, ev := range evs {
				if ev.Type == runs.EventQuestion {
					late, sendErr = runs.Send(context.Background(), runs.RunDir(h.w.State, ev.Run), runs.MessageAnswer, "late", ev.QuestionID)
				}
			}
			return calls(call("list_sessions", map[string]any{}))
		}},
		calls(call("finish", map[string]any{"summary": "done"})))
	opt := h.options(h.settings(func(s *Settings) { s.Ask = true }), 0)
	var prompted runs.Question
	opt.Prompt = func(ctx context.Context, q runs.Question) (string, error) {
		prompted = q
		return "yes, go on", nil
	}
	rec := h.execute2(opt)
	if rec.Status != runs.StatusCompleted || prompted.Text != "Go on?" {
		t.Fatalf("%+v, prompted %+v", rec, prompted)
	}
	if sendErr != nil || late == nil {
		t.Fatalf("late answer: %v", sendErr)
	}
	reqs := h.requests()
	if outs := fakemodel.Outputs(reqs[1].Body, "ask_user"); len(outs) != 1 || outs[0] != "[from the user] yes, go on" {
		t.Errorf("ask_user's output: %q", outs)
	}
	if n := count(userTexts(reqs[2].Body), "late"); n != 0 {
		t.Errorf("the late answer reached the model")
	}
	e := inbox(t, h, rec.ID)
	if len(e) != 1 || e[0].State != runs.InboxUndelivered || e[0].Reason != "its question was already answered" {
		t.Errorf("inbox %+v", e)
	}
	if as := h.eventsOf(runs.EventAnswer); len(as) != 1 || as[0].Via != runs.AnswerTerminal {
		t.Errorf("answers %+v", as)
	}
}

// runIDOf is the id of the harness's only run.
func runIDOf(h *harness) string {
	list, _ := runs.ListRuns(h.w.State)
	if len(list) == 0 {
		return ""
	}
	return list[0].ID
}

// execute2 runs a run with the given options to its end.
func (h *harness) execute2(opt Options) *runs.Record {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Start(ctx, opt, h.key)
	if err != nil {
		h.t.Fatal(err)
	}
	rec, err := r.Execute(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

// Nobody answers within ask_timeout: the model is told to decide.
func TestAskTimesOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "ASK: nobody there")
	h.script(askCall("Which port?"), calls(call("finish", map[string]any{"summary": "decided"})))
	rec := h.execute2(h.options(h.settings(func(s *Settings) { s.Ask, s.AskTimeout = true, 300*time.Millisecond }), 0))
	if rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v", rec)
	}
	if outs := fakemodel.Outputs(h.requests()[1].Body, "ask_user"); len(outs) != 1 || outs[0] != NoAnswer {
		t.Errorf("ask_user's output: %q", outs)
	}
	if as := h.eventsOf(runs.EventAnswer); len(as) != 1 || as[0].Via != runs.AnswerTimeout {
		t.Errorf("answers %+v", as)
	}
}

// Without Ask the tool is not offered, and a call to it is refused.
func TestNoAskNoTool(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "ASK: not offered")
	h.script(askCall("Anyone?"), calls(call("finish", map[string]any{"summary": "alone"})))
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted || strings.Contains(string(h.requests()[0].Body), `"name":"ask_user"`) {
		t.Fatalf("%+v", rec)
	}
	if outs := fakemodel.Outputs(h.requests()[1].Body, "ask_user"); len(outs) != 1 || !strings.Contains(outs[0], `there is no tool "ask_user"`) {
		t.Errorf("%q", outs)
	}
}

// A message sent while the model thinks reaches it before its next call,
// once, as a user message; the step shows it.
func TestSayReachesTheNextModelCallOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "SAY: steer me")
	stall := make(chan struct{})
	h.script(fakemodel.Reply{Stall: stall, Calls: []fakemodel.Call{call("list_sessions", map[string]any{})}},
		calls(call("list_sessions", map[string]any{})), calls(call("finish", map[string]any{"summary": "steered"})))
	ctx := context.Background()
	r, wait := h.start(ctx, h.options(h.settings(nil), 0))
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := h.srv.WaitRequests(wctx, 1); err != nil {
		t.Fatal(err)
	}
	dir := runs.RunDir(h.w.State, r.ID())
	for _, m := range []string{"use the token bucket in pkg/limit", "and keep the old API"} {
		if _, err := runs.Send(ctx, dir, runs.MessageSay, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	close(stall)
	rec := wait()
	if rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v", rec)
	}
	reqs := h.requests()
	if got := userTexts(reqs[0].Body); len(got) != 0 {
		t.Errorf("the first call saw %q", got)
	}
	want := []string{"[from the user, message 1] use the token bucket in pkg/limit", "[from the user, message 2] and keep the old API"}
	for _, req := range reqs[1:] {
		if got := userTexts(req.Body); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("a later call saw %q", got)
		}
	}
	for _, e := range inbox(t, h, rec.ID) {
		if e.State != runs.InboxDelivered || e.Step != 2 {
			t.Errorf("entry %+v", e)
		}
	}
	if ms := h.eventsOf(runs.EventMessage); len(ms) != 2 || ms[0].Text != "use the token bucket in pkg/limit" || ms[0].Step != 2 || ms[1].Inbox != 2 {
		t.Errorf("events %+v", ms)
	}
	var lines []string
	rd := Renderer{}
	for _, ev := range h.eventsOf(runs.EventMessage) {
		for _, l := range rd.Lines(ev) {
			lines = append(lines, l.Text)
		}
	}
	if lines[0] != "you: use the token bucket in pkg/limit" {
		t.Errorf("rendered %q", lines)
	}
}

// A message to a stopped run waits for the resume; an answer to a
// question the run stopped waiting for is given as a message then.
func TestSayAndAnswerToAStoppedRunArriveOnResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "SAY: stopped")
	h.script(askCall("Which database?"), calls(call("finish", map[string]any{"summary": "resumed"})))
	set := h.settings(func(s *Settings) { s.Ask = true })
	ctx, cancel := context.WithCancel(context.Background())
	r, wait := h.start(ctx, h.options(set, 0))
	q := h.waiting(r.ID())
	cancel() // Ctrl+C while it waits
	rec := wait()
	if rec.Status != runs.StatusInterrupted || rec.Question != nil {
		t.Fatalf("%+v", rec)
	}
	_, items, _ := h.onDisk(rec.ID)
	if outs := outputsOf(items, "ask_user"); len(outs) != 1 || !strings.Contains(outs[0], "Stopped: the run was interrupted") {
		t.Errorf("the interrupted call's output: %q", outs)
	}
	dir := runs.RunDir(h.w.State, rec.ID)
	runs.Send(context.Background(), dir, runs.MessageAnswer, "postgres", q.ID)
	runs.Send(context.Background(), dir, runs.MessageSay, "now also add metrics", "")
	r2, err := Resume(context.Background(), h.options(set, 0), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec2, err := r2.Execute(context.Background())
	if err != nil || rec2.Status != runs.StatusCompleted {
		t.Fatalf("%+v %v", rec2, err)
	}
	reqs := h.requests()
	got := userTexts(reqs[len(reqs)-1].Body)
	want := []string{`[from the user, message 1] Answer to your question "Which database?": postgres`, "[from the user, message 2] now also add metrics"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after resume the model saw %q", got)
	}
}

// A run killed after giving the model a message and before marking it
// delivered does not give it twice on resume.
func TestResumeDoesNotGiveAMessageTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "SAY: crash")
	r, err := Start(context.Background(), h.options(h.settings(nil), 0), h.key)
	if err != nil {
		t.Fatal(err)
	}
	id := r.ID()
	dir := runs.RunDir(h.w.State, id)
	e, err := runs.Send(context.Background(), dir, runs.MessageSay, "given before the crash", "")
	if err != nil {
		t.Fatal(err)
	}
	runs.Send(context.Background(), dir, runs.MessageSay, "never given", "")
	// The process gave message 1 (its step is durable) and died before
	// marking it.
	r.appendItems(message("user", fromUser(e.Seq, e.Text)))
	r.convo.Sync()
	r.release()
	rec, _ := runs.ReadRecord(dir)
	rec.Owner = &proc.Ref{PID: os.Getpid(), Start: 1} // a pid of another time: its process is gone
	runs.WriteRecord(dir, rec)
	h.script(calls(call("finish", map[string]any{"summary": "once"})))
	r2, err := Resume(context.Background(), h.options(h.settings(nil), 0), id)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := r2.Execute(context.Background()); err != nil || rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v %v", rec, err)
	}
	got := userTexts(h.requests()[0].Body)
	if count(got, "given before the crash") != 1 || count(got, "never given") != 1 || len(got) != 2 {
		t.Errorf("the model saw %q", got)
	}
	for _, e := range inbox(t, h, id) {
		if e.State != runs.InboxDelivered {
			t.Errorf("entry %+v", e)
		}
	}
}

// A message cuts a sleep (or a wait) short: the model reads it now, not
// when the pause would have ended.
func TestSayCutsAWaitShort(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "SAY: wake up")
	h.script(calls(call("sleep", map[string]any{"seconds": 60})), calls(call("finish", map[string]any{"summary": "woken"})))
	ctx := context.Background()
	r, wait := h.start(ctx, h.options(h.settings(nil), 0))
	sessionstest.Eventually(t, "the sleep to start", func() bool { return len(h.eventsOf(runs.EventToolCall)) == 1 })
	if _, err := runs.Send(ctx, runs.RunDir(h.w.State, r.ID()), runs.MessageSay, "stop waiting", ""); err != nil {
		t.Fatal(err)
	}
	rec := wait()
	if rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v", rec)
	}
	reqs := h.requests()
	if outs := fakemodel.Outputs(reqs[1].Body, "sleep"); len(outs) != 1 || !strings.Contains(outs[0], "the sleep was interrupted: a message from the user arrived; it follows") {
		t.Errorf("sleep's output %q", outs)
	}
	if got := userTexts(reqs[1].Body); len(got) != 1 || got[0] != "[from the user, message 1] stop waiting" {
		t.Errorf("the model saw %q", got)
	}
}

// A run stopped while it waited for an answer, and resumed with none,
// asks the question again (waiting, the question in run.json); the answer
// then reaches the model as a message. The question is asked once more
// only: the run did not go on without it.
func TestAPendingQuestionIsAskedAgainOnResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "ASK: stopped unanswered")
	h.script(askCall("Which database?", "postgres", "sqlite"), calls(call("finish", map[string]any{"summary": "resumed"})))
	set := h.settings(func(s *Settings) { s.Ask = true })
	ctx, cancel := context.WithCancel(context.Background())
	r, wait := h.start(ctx, h.options(set, 0))
	first := h.waiting(r.ID())
	cancel() // Ctrl+C while it waits, nobody having answered
	if rec := wait(); rec.Status != runs.StatusInterrupted || rec.Question != nil {
		t.Fatalf("%+v", rec)
	}
	before := len(h.requests())
	r2, err := Resume(context.Background(), h.options(set, 0), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *runs.Record, 1)
	go func() {
		rec, err := r2.Execute(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- rec
	}()
	again := h.waiting(r.ID())
	if again.Text != first.Text || strings.Join(again.Options, "|") != "postgres|sqlite" {
		t.Fatalf("asked again %+v; first %+v", again, first)
	}
	if n := len(h.requests()); n != before {
		t.Fatalf("the model was called %d times before the question was answered", n-before)
	}
	runs.Send(context.Background(), runs.RunDir(h.w.State, r.ID()), runs.MessageAnswer, "sqlite", again.ID)
	rec := <-done
	if rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v", rec)
	}
	reqs := h.requests()
	got := userTexts(reqs[len(reqs)-1].Body)
	want := `Answer to your question "Which database?", asked again when the run was resumed: [from the user, message 1] sqlite`
	if len(got) != 1 || got[0] != want {
		t.Errorf("after resume the model saw %q; want %q", got, want)
	}
}
