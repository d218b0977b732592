package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
)

// maxCount bounds spawn -n: Slurm's default largest job array is 1001
// tasks, and a thousand workers at once is already a lot for one person
// to review.
const maxCount = 1000

// spawnMany starts o.count workers on req's task together, and prints
// their ids, one a line, in the order started (with --json, a list of
// them). Refusals are reported after the workers that did start; any
// makes the exit 1, or 2 when none started and the request itself was
// wrong.
func spawnMany(ctx context.Context, o *spawnOptions, m *sessions.Manager, req sessions.SpawnRequest) error {
	reqs := make([]sessions.SpawnRequest, o.count)
	for i := range reqs {
		reqs[i] = req
	}
	started, errs := m.SpawnAll(ctx, reqs)
	var list []*record.Session
	for _, s := range started {
		if s != nil {
			list = append(list, s)
		}
	}
	refused := joinUnique(errs)
	if o.wait && len(list) > 0 {
		ids := make([]string, len(list))
		for i, s := range list {
			ids[i] = s.ID
		}
		done, err := waitSessions(ctx, o.f.io, m, ids, false, 0, fmt.Sprintf("waiting for %d workers", len(ids)), o.out.On())
		if err != nil {
			return errors.Join(err, refused)
		}
		list = done
	}
	if o.out.On() {
		if err := o.out.Write(o.f.io.Out, cli.ListJSON(list)); err != nil {
			return err
		}
	} else {
		for _, s := range list {
			fmt.Fprintln(o.f.io.Out, s.ID)
			if o.wait {
				printOutcome(o.f.io, s)
			}
		}
	}
	if refused != nil {
		if len(list) > 0 {
			return fmt.Errorf("%d of %d workers started; the rest were refused: %w", len(list), o.count, refused)
		}
		return errs[0] // all were refused alike: the first says why, with its exit code
	}
	return failedExit(list...)
}

// joinUnique joins errs, each message once: a batch refused as one gives
// every worker the same error.
func joinUnique(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, err := range errs {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}
