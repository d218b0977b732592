package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// A pilot run (Settings.Pilot) is a conversation: the person writes a
// turn, the model works on it with its tools until it answers (a reply
// that calls no tool), and the person writes again. The same loop runs
// each turn, with the same tools (but finish and ask_user), limits,
// watchers and records.
//
// Each person turn is a user message tagged with its number ("[from the
// user, turn 2] ..."), so the conversation itself says where each turn
// begins. A checkpoint is the conversation as it stood when a turn ended:
// everything before the next turn's message. Rewind cuts the
// conversation back to one, atomically (conversation.jsonl is replaced,
// as compaction does), so a resumed run sees it rewound; the workers and
// every record of what happened stay.

var turnMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[from the user, turn (\d+)\] `) })

func turnMessage(n int, text string) string {
	return fmt.Sprintf("[from the user, turn %d] %s", n, text)
}

// rewoundPrefix starts the note a rewind leaves for the model.
const rewoundPrefix = "[zwarm: rewound]"

// stoppedPrefix starts the note a turn stopped before the model answered
// leaves for it.
const stoppedPrefix = "[zwarm: stopped]"

// TurnEnd is how a turn of a pilot run ended.
type TurnEnd struct {
	Turn int
	// Answer is the model's reply that ended the turn: what it said, ""
	// if it said nothing.
	Answered bool
	Answer   string
	// Stopped: ctx ended the turn (Ctrl+C) or its timeout passed.
	// Failed: the model call failed for good. Either way the run goes
	// on, and Reason says what happened.
	Stopped, Failed bool
	Reason          string
	// Ended: the run itself ended (a limit, a watcher, its state could
	// not be written); Record says how. It takes no more turns.
	Ended bool
}

// Checkpoint is the conversation as it stood when a person turn ended.
type Checkpoint struct {
	Turn   int
	Text   string // what the person wrote
	Answer string // the model's last message in the turn, if any
	// Items is the conversation's length at the checkpoint.
	Items int
}

// Rewound says what a rewind dropped.
type Rewound struct {
	Turn    int      // the checkpoint gone back to
	Dropped int      // conversation items dropped
	Turns   int      // person turns dropped
	Workers []string // the run's workers the kept conversation does not know
}

func (r *Run) pilotOnly() error {
	switch {
	case !r.set.Pilot:
		return errors.New("orchestrator: not a pilot run: Execute runs it")
	case r.ended:
		return fmt.Errorf("run %s has ended: %s", record.ShortID(r.rec.ID), r.Record().StopReason)
	}
	return nil
}

// Turn gives the model the person's next turn and works on it (Work).
func (r *Run) Turn(ctx context.Context, text string) (TurnEnd, error) {
	if err := r.pilotOnly(); err != nil {
		return TurnEnd{}, err
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return TurnEnd{}, errors.New("an empty turn: say what to do")
	}
	// What was sent with runs say while the prompt waited came first:
	// given before the turn, not after it (the model read the older
	// note last, as the newest thing said).
	if err := r.deliverInbox(ctx); err != nil {
		return TurnEnd{}, err
	}
	n := len(r.Checkpoints()) + 1
	if err := r.appendItems(message("user", turnMessage(n, text))); err != nil {
		return TurnEnd{}, err
	}
	r.emit(runs.Event{Type: runs.EventMessage, Step: r.rec.Steps + 1, Turn: n, Text: text})
	if err := r.save(); err != nil {
		return TurnEnd{}, err
	}
	return r.Work(ctx)
}

// Work runs the loop on the conversation as it is (a run just started
// holds the first turn) until the model answers, ctx ends or the turn's
// timeout passes (the turn stops; the run goes on), the model call fails
// for good (the same), or the run ends: a limit, a watcher's pause or
// abort. Every end is written to events.jsonl. An error means the state
// could not be written; the run has then ended.
func (r *Run) Work(ctx context.Context) (TurnEnd, error) {
	if err := r.pilotOnly(); err != nil {
		return TurnEnd{}, err
	}
	if t := r.set.Limits.Timeout.Duration; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, errWallClock)
		defer cancel()
	}
	end := TurnEnd{Turn: len(r.Checkpoints())}
	r.answer = nil
	out, err := r.loop(ctx)
	if err == nil {
		ev := runs.Event{Type: runs.EventTurnEnded, Step: r.rec.Steps, Turn: end.Turn}
		switch {
		case out.answered:
			end.Answered, end.Answer, ev.Reason, ev.Text = true, *r.answer, runs.TurnAnswered, *r.answer
		case out.cut:
			end.Stopped, ev.Reason = true, runs.TurnStopped
			end.Reason = "you stopped it"
			why := "the user stopped it"
			if errors.Is(context.Cause(ctx), errWallClock) {
				end.Reason = fmt.Sprintf("its timeout of %s passed", r.set.Limits.Timeout.Duration)
				why = end.Reason
			}
			ev.Text = end.Reason
			// The model is told, or the person's next turn would follow
			// this one as if it had been answered.
			note := fmt.Sprintf("%s Turn %d ended before you answered: %s. What you started in it (workers, commands) was not undone.", stoppedPrefix, end.Turn, why)
			if err := r.appendItems(message("developer", note)); err != nil {
				return r.endPilot(ctx, end, outcome{}, err)
			}
		case out.callFailed:
			end.Failed, ev.Reason = true, runs.TurnFailed
			end.Reason = out.reason + ": " + out.err
			ev.Text = end.Reason
		default:
			return r.endPilot(ctx, end, out, nil)
		}
		r.answer = nil
		r.emit(ev)
		if err := r.save(); err != nil {
			return r.endPilot(ctx, end, outcome{}, err)
		}
		return end, nil
	}
	return r.endPilot(ctx, end, outcome{}, err)
}

// endPilot ends the run with out, or as failed when err says its state
// could not be written.
func (r *Run) endPilot(ctx context.Context, end TurnEnd, out outcome, err error) (TurnEnd, error) {
	if err != nil {
		out = outcome{status: runs.StatusFailed, reason: "zwarm could not record the run's state", err: err.Error()}
	}
	r.ended = true
	if serr := r.end(context.WithoutCancel(ctx), out); serr != nil && err == nil {
		err = serr
	}
	end.Ended, end.Reason = true, r.Record().StopReason
	return end, err
}

// leftReason is the stop reason of a pilot run its person left (Quit).
const leftReason = "the user left the pilot; --resume continues it"

// Quit ends a pilot run between turns: it is interrupted, and Resume
// continues it. The workers go on unless KillWorkersOnExit.
func (r *Run) Quit(ctx context.Context) (*runs.Record, error) {
	if err := r.pilotOnly(); err != nil {
		return r.Record(), err
	}
	r.ended = true
	err := r.end(ctx, outcome{status: runs.StatusInterrupted, reason: leftReason})
	return r.Record(), err
}

// Refresh reads the run's workers and their costs now, between turns.
func (r *Run) Refresh(ctx context.Context) *runs.Record {
	if !r.ended {
		r.refresh(ctx)
	}
	return r.Record()
}

// Checkpoints are the ends of the person turns in the conversation, in
// order. The last one is the conversation as it is.
func (r *Run) Checkpoints() []Checkpoint {
	var out []Checkpoint
	for i, raw := range r.items {
		it := inspect(raw)
		switch {
		case it.isInput() && it.Role == "user":
			text := it.text()
			m := turnMarker().FindStringSubmatch(text)
			if m == nil {
				continue // a message sent with runs say
			}
			if len(out) > 0 {
				out[len(out)-1].Items = i
			}
			n, _ := strconv.Atoi(m[1])
			out = append(out, Checkpoint{Turn: n, Text: text[len(m[0]):], Items: len(r.items)})
		case it.Type == "message" && it.Role == "assistant" && len(out) > 0:
			if t := strings.TrimSpace(it.text()); t != "" {
				out[len(out)-1].Answer = t
			}
		}
	}
	return out
}

// Rewind takes the conversation back to checkpoint n: what came after
// the end of turn n is dropped from the model's view, and a note says
// so, naming the workers started since (they and their records stay, as
// do the events of the dropped turns). The next turn is n+1.
func (r *Run) Rewind(n int) (Rewound, error) {
	if err := r.pilotOnly(); err != nil {
		return Rewound{}, err
	}
	cps := r.Checkpoints()
	switch {
	case len(cps) == 0:
		return Rewound{}, errors.New("no checkpoints yet: each turn makes one")
	case n < 1 || n > len(cps):
		if len(cps) == 1 {
			return Rewound{}, fmt.Errorf("no checkpoint %d: there is only 1", n)
		}
		return Rewound{}, fmt.Errorf("no checkpoint %d: there are 1 to %d", n, len(cps))
	case n == len(cps):
		return Rewound{}, fmt.Errorf("the conversation is at checkpoint %d already", n)
	}
	cut := cps[n-1].Items
	kept := r.items[:cut:cut]
	// A note of an earlier rewind to the same point gives way to the new.
	for len(kept) > 0 && strings.HasPrefix(inspect(kept[len(kept)-1]).text(), rewoundPrefix) {
		kept = kept[:len(kept)-1]
	}
	rw := Rewound{Turn: n, Dropped: len(r.items) - cut, Turns: len(cps) - n, Workers: r.unknownWorkers(kept)}
	items := append(kept, message("developer", rewoundNote(rw)))
	if err := runs.RewriteJournal(r.convo, items); err != nil {
		return Rewound{}, err
	}
	r.items = items
	r.callIDs = nil // gathered again from what is left
	text := fmt.Sprintf("went back to checkpoint %d: %d items of %s dropped from the conversation", n, rw.Dropped, turnsText(n+1, len(cps)))
	if len(rw.Workers) > 0 {
		text += fmt.Sprintf("; %s started since %s", sessionsText(len(rw.Workers)), verbStay(len(rw.Workers)))
	}
	r.emit(runs.Event{Type: runs.EventRewind, Step: r.rec.Steps, Turn: n, Text: text})
	r.mu.Lock()
	r.rec.UpdatedAt = time.Now().UTC()
	r.mu.Unlock()
	return rw, r.save()
}

// unknownWorkers are the run's workers that items never mention.
func (r *Run) unknownWorkers(items []json.RawMessage) []string {
	var out []string
	for _, id := range r.Record().Workers {
		known := false
		for _, raw := range items {
			if bytes.Contains(raw, []byte(id)) {
				known = true
				break
			}
		}
		if !known {
			out = append(out, id)
		}
	}
	return out
}

func rewoundNote(rw Rewound) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s The user went back to the end of turn %d: the later turns are no longer part of this conversation. What was done in them was not undone:", rewoundPrefix, rw.Turn)
	if len(rw.Workers) > 0 {
		fmt.Fprintf(&b, " the workers %s, started since, still exist (list_sessions and check_session show them; end_session ends one no longer needed), and", strings.Join(rw.Workers, ", "))
	}
	b.WriteString(" changes landed or made in the run's directory are still there. The next message of the user is what to do now.")
	return b.String()
}

func turnsText(from, to int) string {
	if from == to {
		return fmt.Sprintf("turn %d", from)
	}
	return fmt.Sprintf("turns %d-%d", from, to)
}

func sessionsText(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}

func verbStay(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}
