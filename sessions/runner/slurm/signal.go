package slurm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Ref names a job to act on: its id and, when set, its name, which the
// job must also have (scancel --name): an id alone may be another
// cluster's job, or, once this cluster forgot it, a later job's.
type Ref struct {
	ID   string
	Name string
}

func (r Ref) filter() []string {
	if r.Name == "" {
		return nil
	}
	return []string{"--name=" + r.Name}
}

// ErrPending is wrapped by Signal's error for a job that has not started:
// there is no process to signal yet. Cancel ends such a job.
var ErrPending = errors.New("job is pending")

// Signal sends sig (a name such as "TERM" or a number) to the batch step's
// main process, the command Submit exec'd, and to nothing else:
//
//	squeue ... -j ID ...   (as States)
//	scancel --batch -s SIG [--name=NAME] ID
//
// It is the graceful stop: the command decides what to do with it. A job
// that is already gone is not an error. A pending job is an error wrapping
// ErrPending, found by the squeue call first: scancel would retry it for a
// minute and a half ("Job can not be altered now, try again later").
func (c *Client) Signal(ctx context.Context, ref Ref, sig string) error {
	id := ref.ID
	if !sigRe().MatchString(sig) {
		return fmt.Errorf("signal job %s: %q is not a signal name or number", id, sig)
	}
	s, known, err := c.look(ctx, ref)
	if err != nil {
		return fmt.Errorf("signal job %s: %w", id, err)
	}
	if !known || s.Terminal() {
		return nil
	}
	if s.Pending() {
		return fmt.Errorf("signal job %s: %w (%s): cancel it instead", id, ErrPending, s.Reason)
	}
	return c.scancel(ctx, seen(ref), "signal job "+id+" with "+sig, "--batch", "-s", sig)
}

// Kill sends SIGKILL to every process of the job, the batch step and all
// it started:
//
//	scancel --full -s KILL [--name=NAME] ID
//
// A pending task of an array is cancelled instead (Cancel): it shares one
// record with its pending siblings, and a signal takes the record whole.
// A job that is already gone is not an error.
func (c *Client) Kill(ctx context.Context, ref Ref) error {
	if !isTask(ref) {
		return c.scancel(ctx, ref, "kill job "+ref.ID, "--full", "-s", "KILL")
	}
	s, known, err := c.look(ctx, ref)
	switch {
	case err != nil:
		return fmt.Errorf("kill job %s: %w", ref.ID, err)
	case !known:
		return nil
	case s.Pending():
		return c.scancel(ctx, seen(ref), "cancel job "+ref.ID)
	}
	return c.scancel(ctx, seen(ref), "kill job "+ref.ID, "--full", "-s", "KILL")
}

// Cancel removes the job: a pending one never starts; a running one gets
// SIGTERM, then SIGKILL after the cluster's KillWait, and ends CANCELLED.
//
//	scancel [--name=NAME] ID
//
// A job that is already gone is not an error.
func (c *Client) Cancel(ctx context.Context, ref Ref) error {
	if !isTask(ref) {
		return c.scancel(ctx, ref, "cancel job "+ref.ID)
	}
	_, known, err := c.look(ctx, ref)
	if err != nil || !known {
		return err
	}
	return c.scancel(ctx, seen(ref), "cancel job "+ref.ID)
}

// look is the job as squeue shows it; known says it is there, under ref's
// name when ref has one (a job of another name is not ref's: the id is
// another cluster's, or reused).
func (c *Client) look(ctx context.Context, ref Ref) (State, bool, error) {
	states, err := c.States(ctx, []string{ref.ID})
	if err != nil {
		return State{}, false, err
	}
	s, known := states[ref.ID]
	return s, known && (ref.Name == "" || s.Name == ref.Name), nil
}

// isTask says ref is a task of a job array (ID_TASK) with a name to
// check: a pending task shares one record with its pending siblings, and
// a name filter (or a signal) makes scancel take that record whole.
func isTask(ref Ref) bool { return strings.Contains(ref.ID, "_") && ref.Name != "" }

// seen is ref, once look has found it under its name, for scancel: a task
// of an array by its id alone.
func seen(ref Ref) Ref {
	if isTask(ref) {
		return Ref{ID: ref.ID}
	}
	return ref
}

var sigRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(SIG)?[A-Z0-9+-]+$`) })

// gone are scancel's words for a job that has ended or been forgotten.
var gone = []string{
	"Invalid job id specified",
	"Job/step already completing or completed",
	"already completing or completed",
	"Job has already finished",
}

func (c *Client) scancel(ctx context.Context, ref Ref, what string, args ...string) error {
	if !jobIDRe().MatchString(ref.ID) {
		return fmt.Errorf("%s: %q is not a job id", what, ref.ID)
	}
	_, err := c.run(ctx, "", "scancel", append(append(args, ref.filter()...), ref.ID)...)
	var ce *CommandError
	if err != nil && errors.As(err, &ce) && !errors.Is(err, ErrUnreachable) {
		for _, g := range gone {
			if strings.Contains(ce.Stderr, g) {
				return nil
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
