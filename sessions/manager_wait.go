package sessions

import (
	"context"
	"fmt"
	"slices"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// WaitOptions choose what Wait waits for.
type WaitOptions struct {
	// Any returns when the first of the sessions has settled.
	Any bool
	// OnUpdate, if set, sees every update while waiting (for progress).
	OnUpdate func(watch.Update)
	// Events delivers the agents' events to OnUpdate too.
	Events bool
}

// Wait blocks until the sessions have settled (with Any, until one has) and
// returns their records, in the order asked. A session about to run a
// queued follow-up is not settled. It is driven by the subscription: file
// events and owners' exits, never a timer. When ctx ends it returns the
// records as they are, with ctx's error.
func (m *Manager) Wait(ctx context.Context, ids []string, opt WaitOptions) ([]*record.Session, error) {
	full := make([]string, len(ids))
	for i, p := range ids {
		id, err := listing.Resolve(m.st, p)
		if err != nil {
			return nil, err
		}
		full[i] = id
	}
	if list, ok := m.settledAlready(full, opt.Any); ok {
		return list, nil
	}
	// A session named twice (an id and its prefix) is one to hear from.
	unique := slices.Compact(slices.Sorted(slices.Values(full)))
	sub, err := m.Subscribe(ctx, watch.SubscribeOptions{IDs: unique, Events: opt.Events})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	latest := map[string]*record.Session{}
	// result is every session asked for, in order. One the subscription has
	// not reported yet (ctx ended before its first read) is read now: a
	// caller names what is still running, and must not find it missing.
	result := func() []*record.Session {
		out := make([]*record.Session, 0, len(full))
		for _, id := range full {
			s := latest[id]
			if s == nil {
				s, _ = m.Get(context.WithoutCancel(ctx), id)
			}
			out = append(out, s)
		}
		return out
	}
	for {
		select {
		case <-ctx.Done():
			return result(), fmt.Errorf("wait: %w", ctx.Err())
		case u, ok := <-sub.C():
			if !ok {
				if err := sub.Err(); err != nil {
					return nil, err
				}
				return result(), fmt.Errorf("wait: %w", ctx.Err())
			}
			if opt.OnUpdate != nil {
				opt.OnUpdate(u)
			}
			switch {
			case u.Removed:
				return nil, fmt.Errorf("wait: session %s: %w (it was removed)", record.ShortID(u.ID), ErrNotFound)
			case u.Err != nil && u.Session == nil:
				return nil, u.Err
			case u.Session != nil:
				latest[u.ID] = u.Session
			}
			if len(latest) == len(unique) {
				if list := result(); settledEnough(list, opt.Any) {
					return list, nil
				}
			}
		}
	}
}

// settledAlready answers a Wait from the records when they have settled
// already (with anyOf, when one has): watching their files would only find
// that out, and closing a watch makes the kernel wait out a grace period,
// 10 to 30 ms of a command that has nothing to wait for. A settled record
// is final as it stands, so the records are read as they are on disk; what
// a live session's record does not say yet (a runner's word, a turn's
// unrecorded end) is the subscription's to learn.
func (m *Manager) settledAlready(ids []string, anyOf bool) ([]*record.Session, bool) {
	list := make([]*record.Session, len(ids))
	for i, id := range ids {
		s, err := m.st.Load(id)
		if err != nil {
			return nil, false // the subscription reports it
		}
		list[i] = s
	}
	return list, settledEnough(list, anyOf)
}

// settledEnough says whether every session has settled, or with anyOf,
// one.
func settledEnough(list []*record.Session, anyOf bool) bool {
	settled := 0
	for _, s := range list {
		if s != nil && s.Settled() {
			settled++
		}
	}
	return settled == len(list) || anyOf && settled > 0
}

// waitUntil re-evaluates cond on every change of one session until it holds.
func (m *Manager) waitUntil(ctx context.Context, id string, cond func(*record.Session) (bool, error)) (*record.Session, error) {
	sub, err := m.Subscribe(ctx, watch.SubscribeOptions{IDs: []string{id}})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	// The subscription reports inbox changes only as they happen; cond reads
	// the inbox itself, so every update is a reason to look again.
	var last *record.Session
	for {
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("wait: %w", ctx.Err())
		case u, ok := <-sub.C():
			if !ok {
				if err := sub.Err(); err != nil {
					return last, err
				}
				return last, fmt.Errorf("wait: %w", ctx.Err())
			}
			if u.Removed {
				return last, fmt.Errorf("session %s: %w (it was removed)", record.ShortID(id), ErrNotFound)
			}
			if u.Session == nil {
				if u.Err != nil {
					return last, u.Err
				}
				continue
			}
			last = u.Session
			ok, err := cond(last)
			if err != nil || ok {
				return last, err
			}
		}
	}
}
