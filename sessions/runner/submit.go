package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// submitLimit bounds the submission of a job, unless the runner says
// otherwise (SubmitLimit).
const submitLimit = time.Minute

// Submit starts spec's job with r and returns where it went. A
// submission is not interrupted (an engine may have queued the job by the
// time its client is killed, and the job id, needed to follow or cancel
// it, would be lost): it is bounded instead. One that got no answer
// within the bound is no refusal: the job the engine queued all the same
// is found by the session (FindSubmitted; not previous, the session's job
// before), and warn hears of it. With a slot of a Batch in ctx, the
// submission goes with the rest of the batch.
func Submit(ctx context.Context, r Runner, spec Spec, previous string, warn func(error)) (Submitted, error) {
	if slot, _ := ctx.Value(slotKey{}).(*Slot); slot != nil {
		e := &entry{ctx: ctx, r: r, spec: spec, previous: previous, warn: warn, done: make(chan struct{})}
		if !slot.join(e) {
			return e.got, e.err
		}
	}
	return submitAlone(ctx, r, spec, previous, warn)
}

func submitAlone(ctx context.Context, r Runner, spec Spec, previous string, warn func(error)) (Submitted, error) {
	limit := limitOf(r)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	cluster := r.Cluster(sctx)
	id, err := r.Start(sctx, spec)
	if err != nil && (sctx.Err() != nil || errors.Is(err, ErrUnreachable)) {
		if id, err = FindSubmitted(ctx, r, spec.SessionID, previous, err); err == nil {
			warn(fmt.Errorf("session %.8s: the scheduler did not answer within %s; it had queued job %s all the same, which zwarm follows",
				spec.SessionID, limit, id))
		}
	}
	if err != nil {
		return Submitted{}, err
	}
	return Submitted{ID: id, Cluster: cluster}, nil
}

// limitOf bounds one submission to r.
func limitOf(r Runner) time.Duration {
	if l, ok := r.(interface{ SubmitLimit() time.Duration }); ok && l.SubmitLimit() > 0 {
		return l.SubmitLimit()
	}
	return submitLimit
}

// findLimit bounds looking for a job whose submission got no answer.
const findLimit = 30 * time.Second

// FindSubmitted resolves a submission of session's job that got no answer
// (startErr): the job the engine queued all the same, its newest one
// that is not previous (the job the session had: a follow-up's
// submission), or startErr when it has none.
func FindSubmitted(ctx context.Context, r Runner, session, previous string, startErr error) (string, error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), findLimit)
	defer cancel()
	ids, err := r.Find(fctx, session)
	if err != nil {
		return "", fmt.Errorf("%w; nor could zwarm ask whether it was queued all the same (%v): if it was, its job finds nothing waiting for it and ends", startErr, err)
	}
	if n := len(ids); n > 0 && ids[n-1] != previous {
		return ids[n-1], nil
	}
	return "", startErr
}
