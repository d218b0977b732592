package orchestrator

import (
	"strconv"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/watchers/notify"
)

// FinishedEvent is the [notify] event of a run that stopped: one for each
// time it stops (a resumed run may stop again), named alike by every
// process that sees it, so it is sent once.
func FinishedEvent(stateDir string, rec *runs.Record) notify.Event {
	text := string(rec.Status) + ": " + rec.Task
	if rec.Summary != "" {
		text += " · " + rec.Summary
	} else if rec.StopReason != "" {
		text += " · " + rec.StopReason
	}
	key := "ended"
	if rec.EndedAt != nil {
		key += "-" + strconv.FormatInt(rec.EndedAt.UnixNano(), 10)
	}
	return notify.Event{Name: notify.RunFinished, ID: rec.ID, Text: text, Status: string(rec.Status),
		Dir: runs.RunDir(stateDir, rec.ID), Key: key}
}

// AsksEvent is the [notify] event of a run's question q, one per question.
func AsksEvent(stateDir, runID string, q runs.Question) notify.Event {
	return notify.Event{Name: notify.RunAsks, ID: runID, Text: "asks: " + q.Text, Status: string(runs.StatusWaiting),
		Dir: runs.RunDir(stateDir, runID), Key: "question-" + q.ID}
}

// RunNotice is the [notify] event a change of a run's record from prev
// (nil: not seen before) to cur tells of, if any: it asks a question, or
// it stopped, unless its person left it (pilot's :quit).
//
// A question and a stop are told by which one it is, not by a change of
// status: a consumer reads the record as it is when it gets to it, so a
// run answered that asks again while the consumer was busy reads waiting
// then waiting, and one resumed that stops again ended then ended.
func RunNotice(stateDir string, prev, cur *runs.Record) (notify.Event, bool) {
	if prev == nil || cur == nil {
		return notify.Event{}, false
	}
	switch {
	case cur.Status == runs.StatusWaiting && cur.Question != nil:
		if prev.Status == runs.StatusWaiting && prev.Question != nil && prev.Question.ID == cur.Question.ID {
			return notify.Event{}, false
		}
		return AsksEvent(stateDir, cur.ID, *cur.Question), true
	case cur.Status == runs.StatusInterrupted && cur.StopReason == leftReason:
		// The person left it (pilot's :quit): nobody is told what they did.
		return notify.Event{}, false
	case cur.Status.Live():
		return notify.Event{}, false
	case prev.Status.Live() || !sameTime(prev.EndedAt, cur.EndedAt):
		return FinishedEvent(stateDir, cur), true
	}
	return notify.Event{}, false
}

func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}
