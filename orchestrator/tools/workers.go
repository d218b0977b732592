package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
)

// Wait's timeout, in seconds: the default and the clamp.
const (
	DefaultWaitSeconds = 300
	MinWaitSeconds     = 10
	MaxWaitSeconds     = 3600
)

// WorkerOptions configure the worker tools.
type WorkerOptions struct {
	Sessions Sessions
	// Source is stamped on every worker delegate starts; the tools see and
	// touch only sessions with this source (e.g. record.RunSource(id)).
	Source record.Source
	// Dir is the base of relative working dirs and the root of the
	// directories workers may run in; AllowedDirs are further roots.
	Dir         string
	AllowedDirs []string
	// MaxWorkers bounds the workers running at once; 0 means no bound.
	MaxWorkers int
	// DefaultAdapter and DefaultModel apply when delegate names none ("":
	// config.toml's defaults). DefaultModel is used only with the default
	// adapter.
	DefaultAdapter, DefaultModel string
	// Isolation is delegate's default isolation: config.IsolationWorktree
	// or config.IsolationNone ("": the [worktrees] table's, else a
	// worktree inside a git repository and in place outside one).
	Isolation string
	// Runner is where its workers' supervisors run ("": config.toml's
	// [runner] kind, else this host).
	Runner string
	// WaitCap lowers wait's largest timeout (default MaxWaitSeconds).
	WaitCap time.Duration
	// MinWait is wait's shortest timeout (0: MinWaitSeconds), which keeps
	// a model from polling. Only tests shorten it, to see a wait time out
	// without waiting the full minimum.
	MinWait time.Duration
	// Seen records what the model has read; nil starts empty.
	Seen *Seen
	// Progress, if set, hears of workers finishing while wait blocks.
	Progress func(Progress)
	// OnSpawn, if set, is told of every worker started, at once, with the
	// context of the call that started it.
	OnSpawn func(context.Context, *record.Session)
}

// Progress is news from a tool that is still running.
type Progress struct {
	Tool    string
	Session *record.Session
	Text    string
}

// workers holds what the worker tools share.
type workers struct {
	opt  WorkerOptions
	dirs Dirs
	seen *Seen
}

// Workers returns the worker tools: delegate, converse, wait,
// check_session, peek_session, get_trajectory, list_sessions, end_session,
// and for workers in git worktrees diff_session, land_session and
// update_session. Landing and updating go by the branch checked out in
// opt.Dir.
func Workers(opt WorkerOptions) []Tool {
	w := &workers{opt: opt, dirs: Dirs{Base: opt.Dir, Allowed: opt.AllowedDirs}, seen: opt.Seen}
	if w.seen == nil {
		w.seen = NewSeen(nil)
	}
	return []Tool{
		w.delegateTool(), w.converseTool(), w.waitTool(), w.checkTool(),
		w.peekTool(), w.trajectoryTool(), w.listTool(), w.endTool(),
		w.diffTool(), w.landTool(), w.updateTool(),
	}
}

// resolve finds one of this source's workers by id or prefix, or says in
// words why it cannot.
func (w *workers) resolve(ctx context.Context, id string) (*record.Session, error) {
	if id == "" {
		return nil, errors.New("session_id is required: pass a worker id from delegate or list_sessions")
	}
	s, err := w.opt.Sessions.Get(ctx, id)
	var amb *sessions.AmbiguousError
	switch {
	case errors.Is(err, sessions.ErrNotFound), errors.Is(err, sessions.ErrInvalidID):
		return nil, fmt.Errorf("no worker %q: use an id that delegate or list_sessions returned", clip(id, 80))
	case errors.As(err, &amb):
		// A prefix is one of this caller's workers: the sessions of
		// others it also matches are neither its concern nor named to it.
		return w.resolveAmong(ctx, id)
	case err != nil:
		return nil, fmt.Errorf("cannot read worker %s: %v", id, err)
	case s.Source != w.opt.Source:
		return nil, fmt.Errorf("session %s is not one of your workers (it was started by %s); list_sessions shows yours", record.ShortID(s.ID), s.Source)
	}
	return s, nil
}

// resolveAmong resolves a prefix that several sessions share among this
// source's workers alone.
func (w *workers) resolveAmong(ctx context.Context, prefix string) (*record.Session, error) {
	list, err := w.mine(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("cannot list your workers: %v", err)
	}
	var match []*record.Session
	p := listing.NormalPrefix(prefix)
	for _, s := range list {
		if strings.HasPrefix(s.ID, p) {
			match = append(match, s)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("no worker %q: use an id that delegate or list_sessions returned", clip(prefix, 80))
	case 1:
		return match[0], nil
	}
	ids := make([]string, 0, 3)
	for _, s := range match[:min(3, len(match))] {
		ids = append(ids, record.ShortID(s.ID))
	}
	return nil, fmt.Errorf("id prefix %q is ambiguous: it matches %d of your workers (%s…); give more of the id", prefix, len(match), strings.Join(ids, ", "))
}

// mine lists this source's workers, newest first.
func (w *workers) mine(ctx context.Context, status record.Status) ([]*record.Session, error) {
	list, err := w.opt.Sessions.List(ctx, listing.Options{Source: w.opt.Source, Status: status})
	var le *listing.Error
	if errors.As(err, &le) {
		err = nil // the readable ones are what there is to show
	}
	out := list[:0]
	for _, s := range list {
		if s.Source == w.opt.Source {
			out = append(out, s)
		}
	}
	return out, err
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
