package orchestrator

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// inputTexts are the texts of a request's messages, tool outputs
// included, by role: "user: ...", "assistant: ...", "developer: ...".
func inputTexts(body []byte) []string {
	var out []string
	for _, it := range fakemodel.Input(body) {
		if it.Type == "message" {
			out = append(out, it.Role+": "+it.Text)
		}
	}
	return out
}

// A pilot run goes turn by turn: a reply without a tool call ends the
// turn; a rewind cuts the conversation back to the end of a turn, on
// disk too, and the next call sees it so; a run left between turns is
// interrupted, and resumed it goes on from its checkpoints.
func TestPilotTurnsRewindAndResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "PILOT ONE")
	h.srv.On("PILOT ONE", calls(call("list_sessions", map[string]any{})), fakemodel.Reply{Text: "ANSWER ONE"})
	h.srv.On("PILOT TWO", fakemodel.Reply{Text: "ANSWER TWO"})
	h.srv.On("PILOT THREE", fakemodel.Reply{Text: "ANSWER THREE"})
	h.srv.On("PILOT FOUR", fakemodel.Reply{Text: "ANSWER FOUR"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opt := h.options(h.settings(func(s *Settings) { s.Pilot, s.Ask = true, true }), 0)
	r, err := Start(ctx, opt, "PILOT ONE")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"finish", "ask_user"} {
		if _, ok := r.Tools().Get(name); ok {
			t.Errorf("a pilot run offers %s", name)
		}
	}
	end, err := r.Work(ctx)
	if err != nil || !end.Answered || end.Answer != "ANSWER ONE" || end.Turn != 1 {
		t.Fatalf("turn 1: %+v %v", end, err)
	}
	if rec := r.Record(); rec.Status != runs.StatusRunning || rec.Steps != 2 || !rec.Pilot || rec.Task != "PILOT ONE" {
		t.Fatalf("after turn 1: %+v", rec)
	}
	if end, err = r.Turn(ctx, "PILOT TWO"); err != nil || end.Answer != "ANSWER TWO" || end.Turn != 2 {
		t.Fatalf("turn 2: %+v %v", end, err)
	}
	cps := r.Checkpoints()
	if len(cps) != 2 || cps[0].Text != "PILOT ONE" || cps[0].Answer != "ANSWER ONE" || cps[1].Text != "PILOT TWO" || cps[1].Answer != "ANSWER TWO" {
		t.Fatalf("checkpoints %+v", cps)
	}
	if _, err := r.Rewind(2); err == nil {
		t.Error("a rewind to where it is")
	}
	if _, err := r.Rewind(3); err == nil {
		t.Error("a rewind to a checkpoint not made")
	}
	rw, err := r.Rewind(1)
	if err != nil || rw.Turns != 1 || rw.Dropped != 2 {
		t.Fatalf("rewind: %+v %v", rw, err)
	}
	_, onDisk, _ := h.onDisk(r.ID())
	if len(onDisk) != cps[0].Items+1 || !strings.HasPrefix(inspect(onDisk[len(onDisk)-1]).text(), rewoundPrefix) {
		t.Fatalf("the conversation on disk after the rewind: %d items, checkpoint 1 at %d", len(onDisk), cps[0].Items)
	}
	if end, err = r.Turn(ctx, "PILOT THREE"); err != nil || end.Answer != "ANSWER THREE" || end.Turn != 2 {
		t.Fatalf("the turn after the rewind: %+v %v", end, err)
	}
	reqs := h.requests()
	seen := strings.Join(inputTexts(reqs[len(reqs)-1].Body), "\n")
	mustContain(t, "the call after the rewind", seen, "user: [from the user, turn 1] PILOT ONE", "assistant: ANSWER ONE",
		"developer: "+rewoundPrefix+" The user went back to the end of turn 1", "user: [from the user, turn 2] PILOT THREE")
	if strings.Contains(seen, "PILOT TWO") || strings.Contains(seen, "ANSWER TWO") {
		t.Errorf("the call after the rewind saw the dropped turn:\n%s", seen)
	}
	rec, err := r.Quit(ctx)
	if err != nil || rec.Status != runs.StatusInterrupted {
		t.Fatalf("quit: %+v %v", rec, err)
	}
	if _, err := r.Turn(ctx, "more"); err == nil {
		t.Error("a turn after quit")
	}

	r, err = Resume(ctx, h.options(h.settings(nil), 0), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if cps := r.Checkpoints(); len(cps) != 2 || cps[1].Text != "PILOT THREE" {
		t.Fatalf("checkpoints after resume: %+v", cps)
	}
	if _, ok := r.Tools().Get("finish"); ok {
		t.Error("a resumed pilot run offers finish")
	}
	if end, err = r.Turn(ctx, "PILOT FOUR"); err != nil || end.Answer != "ANSWER FOUR" || end.Turn != 3 {
		t.Fatalf("the turn after resume: %+v %v", end, err)
	}
	if _, err := r.Execute(ctx); err == nil {
		t.Error("Execute ran a pilot run")
	}
	if rec, err := r.Quit(ctx); err != nil || rec.Status != runs.StatusInterrupted {
		t.Fatalf("quit: %+v %v", rec, err)
	}
	_, _, evs := h.onDisk(r.ID())
	var turns, rewinds, ends []int
	for _, ev := range evs {
		switch ev.Type {
		case runs.EventMessage:
			turns = append(turns, ev.Turn)
		case runs.EventRewind:
			rewinds = append(rewinds, ev.Turn)
		case runs.EventTurnEnded:
			if ev.Reason == runs.TurnAnswered {
				ends = append(ends, ev.Turn)
			}
		}
	}
	if !equalInts(turns, []int{2, 2, 3}) || !equalInts(rewinds, []int{1}) || !equalInts(ends, []int{1, 2, 2, 3}) {
		t.Errorf("events: turns %v, rewinds %v, answered %v", turns, rewinds, ends)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A turn stopped (its context ends) while the model works leaves the run
// live and consistent: the next turn goes on, and every call has its
// output.
func TestPilotTurnStoppedGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "PILOT STOP")
	h.srv.On("PILOT STOP", calls(call("sleep", map[string]any{"seconds": 120})))
	h.srv.On("PILOT AGAIN", fakemodel.Reply{Text: "AGAIN DONE"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Start(ctx, h.options(h.settings(func(s *Settings) { s.Pilot = true }), 0), "PILOT STOP")
	if err != nil {
		t.Fatal(err)
	}
	// The turn is stopped once the sleep itself runs: stopped between the
	// call's event and the call, the call would not run at all.
	sleeping := make(chan struct{})
	var once sync.Once
	list := r.reg.Tools()
	for i, tl := range list {
		if tl.Name == "sleep" {
			sleep := tl.Handler
			list[i].Handler = func(ctx context.Context, args json.RawMessage) tools.Result {
				once.Do(func() { close(sleeping) })
				return sleep(ctx, args)
			}
		}
	}
	if r.reg, err = tools.NewRegistry(list...); err != nil {
		t.Fatal(err)
	}
	tctx, stop := context.WithCancel(ctx)
	go func() {
		select {
		case <-sleeping:
		case <-time.After(time.Minute):
			t.Errorf("the model's sleep call did not start within a minute; the turn is stopped anyway")
		}
		stop()
	}()
	end, err := r.Work(tctx)
	if err != nil || !end.Stopped || end.Answered || end.Ended || end.Reason != "you stopped it" {
		t.Fatalf("stopped turn: %+v %v", end, err)
	}
	if rec := r.Record(); rec.Status != runs.StatusRunning {
		t.Fatalf("after a stopped turn: %s", rec.Status)
	}
	if end, err = r.Turn(ctx, "PILOT AGAIN"); err != nil || end.Answer != "AGAIN DONE" {
		t.Fatalf("the next turn: %+v %v", end, err)
	}
	reqs := h.requests()
	outs := fakemodel.Outputs(reqs[len(reqs)-1].Body, "sleep")
	if len(outs) != 1 || !strings.Contains(outs[0], "the user stopped your turn (Ctrl+C) during this call") {
		t.Errorf("the stopped call's output: %q", outs)
	}
	if _, err := r.Quit(ctx); err != nil {
		t.Fatal(err)
	}
}

// A message sent with runs say while the prompt waits comes before the
// person's next turn, in the order things were said: it came after, and
// the model took the older note for the newest word.
func TestPilotGivesWhatWasSaidMeanwhileBeforeTheTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "PILOT SAY")
	h.srv.On("PILOT SAY", fakemodel.Reply{Text: "FIRST"})
	h.srv.On("PILOT NEXT", fakemodel.Reply{Text: "SECOND"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Start(ctx, h.options(h.settings(func(s *Settings) { s.Pilot = true }), 0), "PILOT SAY")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Work(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Send(ctx, runs.RunDir(h.w.State, r.ID()), runs.MessageSay, "a note from outside", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Turn(ctx, "PILOT NEXT"); err != nil {
		t.Fatal(err)
	}
	reqs := h.requests()
	in := strings.Join(inputTexts(reqs[len(reqs)-1].Body), "\n")
	note, turn := strings.Index(in, "a note from outside"), strings.Index(in, "[from the user, turn 2] PILOT NEXT")
	if note < 0 || turn < 0 || note > turn {
		t.Fatalf("the last request's messages:\n%s", in)
	}
}
