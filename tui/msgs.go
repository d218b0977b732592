package tui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

// feed names a subscription of the dashboard: the list of every session,
// or the trajectory of the selected one.
type feed int

const (
	listFeed feed = iota
	trajFeed
)

// Messages from the outside world, produced by the commands below.
type (
	// subscribedMsg carries a new subscription.
	subscribedMsg struct {
		feed feed
		id   string // the selected session, for trajFeed
		sub  *watch.Subscription
		err  error
	}
	// updatesMsg carries the updates a subscription had ready; with a
	// listing, the summaries of its first sessions, read with it so that
	// the first frame shows them.
	updatesMsg struct {
		feed    feed
		sub     *watch.Subscription
		updates []watch.Update
		read    map[int]*record.Session
		closed  bool
	}
	actionMsg struct {
		text string
		err  error
		// queued, set for a follow-up queued behind a running turn, keeps
		// the status line true once the follow-up starts.
		queued *queuedNote
	}
)

// maxBatch bounds how many updates one message carries: the first load of
// thousands of sessions arrives in a few messages, not thousands.
const maxBatch = 512

// subscribe starts a subscription off the UI goroutine.
func (m Model) subscribe(f feed, id string, opt watch.SubscribeOptions) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		sub, err := src.Subscribe(ctx, opt)
		return subscribedMsg{feed: f, id: id, sub: sub, err: err}
	}
}

// firstRows is how many of a listing's sessions are read with it: more
// than any screen shows.
const firstRows = 200

// next waits for a subscription's next updates and takes whatever else is
// ready with them.
func next(f feed, sub *watch.Subscription) tea.Cmd {
	return func() tea.Msg {
		u, ok := <-sub.C()
		if !ok {
			return updatesMsg{feed: f, sub: sub, closed: true}
		}
		batch := []watch.Update{u}
		for len(batch) < maxBatch {
			select {
			case u, ok := <-sub.C():
				if !ok {
					return withFirstRows(updatesMsg{feed: f, sub: sub, updates: batch})
				}
				batch = append(batch, u)
				continue
			default:
			}
			break
		}
		return withFirstRows(updatesMsg{feed: f, sub: sub, updates: batch})
	}
}

// withFirstRows reads the summaries of a listing's newest sessions, off
// the UI goroutine, when msg brings a listing.
func withFirstRows(msg updatesMsg) updatesMsg {
	for _, u := range msg.updates {
		if u.Listing == nil {
			continue
		}
		at := make([]int, min(firstRows, u.Listing.Len()))
		for i := range at {
			at[i] = i
		}
		// Not read: the rows are read as they come into view.
		if list, err := u.Listing.Sessions(context.Background(), at); err == nil {
			msg.read = make(map[int]*record.Session, len(list))
			for i, s := range list {
				msg.read[i] = s
			}
		}
	}
	return msg
}

// closeSub ends a subscription the dashboard no longer reads, off the UI
// goroutine.
func closeSub(sub *watch.Subscription) tea.Cmd {
	if sub == nil {
		return nil
	}
	return func() tea.Msg {
		sub.Close()
		return nil
	}
}

func (m Model) inject(id, text string, steer bool) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	send := src.Inject
	if steer {
		send = src.Interrupt
	}
	return func() tea.Msg {
		res, err := send(ctx, id, text)
		if err != nil {
			return actionMsg{err: err}
		}
		msg := actionMsg{text: injectText(res)}
		if res.Outcome == sessions.InjectQueued && res.Session != nil {
			msg.queued = &queuedNote{id: res.Session.ID, behind: res.Turn}
		}
		return msg
	}
}

// queuedNote is a follow-up the status line says is queued: for session
// id, behind its turn behind.
type queuedNote struct {
	id     string
	behind int
}

// injectText says what became of a follow-up, as Inject decided it.
func injectText(r *sessions.InjectResult) string {
	id := record.ShortID(r.Entry.ID)
	if r.Session != nil {
		id = record.ShortID(r.Session.ID)
	}
	switch r.Outcome {
	case sessions.InjectQueued:
		switch {
		case r.Attached:
			return fmt.Sprintf("follow-up queued for %s: a person is attached to it (zwarm attach); the thread resumes with it when they leave the CLI", id)
		case r.Turn == 0:
			return fmt.Sprintf("follow-up queued for %s: its task has not started yet; the agent takes it when the task's turn ends", id)
		}
		if r.Live {
			return fmt.Sprintf("follow-up queued for %s: the running agent takes it when turn %d ends", id, r.Turn)
		}
		return fmt.Sprintf("follow-up queued for %s: it resumes the thread when turn %d ends", id, r.Turn)
	case sessions.InjectRestarted:
		return fmt.Sprintf("%s had no thread to resume: turn %d starts a new run", id, r.Turn)
	case sessions.InjectInterrupted:
		return fmt.Sprintf("stopping turn %d of %s: the follow-up continues its thread as the next turn", r.Turn, id)
	}
	return fmt.Sprintf("%s is resuming its thread as turn %d", id, r.Turn)
}

// KillReason is the error of a session killed from the dashboard: it said
// "killed by zwarm kill", a command no one ran.
const KillReason = "killed from the dashboard (zwarm dash)"

func (m Model) kill(id string) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		k, err := src.KillReport(ctx, id, KillReason)
		if err != nil {
			return actionMsg{err: err}
		}
		text := fmt.Sprintf("%s %s", record.ShortID(id), k.Session.Status())
		if n := len(k.Dropped); n > 0 {
			// Said here, not left for the detail pane to show.
			text += " · " + render.Dropped(n)
		}
		return actionMsg{text: text}
	}
}

func (m Model) remove(id string) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		if _, err := src.Remove(ctx, id, false); err != nil {
			var u *sessions.UnlandedError
			if errors.As(err, &u) {
				// Its words name a --force the dashboard has no key for.
				err = fmt.Errorf("%s is not deleted: %s; v shows it, L lands it, zwarm rm --force %s drops it",
					record.ShortID(id), u.What(), record.ShortID(id))
			}
			return actionMsg{err: err}
		}
		return actionMsg{text: "deleted " + record.ShortID(id)}
	}
}
