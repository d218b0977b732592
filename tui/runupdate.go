package tui

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/keys"
	"github.com/zwarm/zwarm/tui/prompt"
)

func (m *Model) onRunSubscribed(msg runSubscribedMsg) tea.Cmd {
	if msg.err != nil {
		m.setError(fmt.Errorf("cannot follow the runs: %w", msg.err))
		if msg.feed == listFeed {
			// The sessions alone are still worth showing.
			m.runsSynced = true
			m.checkLoaded()
		}
		return nil
	}
	switch {
	case msg.feed == listFeed && m.runListSub == nil:
		m.runListSub = msg.sub
	case msg.feed == trajFeed && msg.id == m.trajID && m.runTrajSub == nil:
		m.runTrajSub = msg.sub
	default:
		return closeRunSub(msg.sub) // the selection moved on meanwhile
	}
	return nextRuns(msg.feed, msg.sub)
}

func (m *Model) onRunUpdates(msg runUpdatesMsg) tea.Cmd {
	current := m.runListSub
	if msg.feed == trajFeed {
		current = m.runTrajSub
	}
	if msg.sub != current {
		return nil // a subscription the dashboard has let go of
	}
	if msg.closed {
		if err := msg.sub.Err(); err != nil {
			m.setError(fmt.Errorf("stopped following the runs: %w; press r to reload", err))
		}
		return nil
	}
	if msg.feed == trajFeed {
		for _, u := range msg.updates {
			if u.Err != nil {
				m.setError(u.Err)
			}
			m.detail.ApplyRun(u)
		}
		return nextRuns(msg.feed, msg.sub)
	}
	var list []*runs.Record
	var removed []string
	var notices []func()
	for _, u := range msg.updates {
		switch {
		case u.Removed:
			removed = append(removed, u.ID)
		case u.Record != nil:
			if prev, tell := m.list.Run(u.ID), m.opt.NotifyRun; prev != nil && tell != nil && m.runsSynced {
				cur := u.Record
				notices = append(notices, func() { tell(prev, cur) })
			}
			list = append(list, u.Record)
		case u.Err != nil:
			m.setError(u.Err)
		}
	}
	m.list.UpsertRuns(list, removed)
	for _, u := range msg.updates { // it may share its batch with changes
		if u.Synced {
			m.runsSynced = true
			m.checkLoaded()
		}
	}
	m.header.SetRuns(m.list.Runs())
	m.refreshRunTitle()
	m.layout()
	return tea.Batch(m.followSelection(), nextRuns(msg.feed, msg.sub), m.tick(), m.notifyRuns(notices))
}

// notifyRuns tells of the runs' changes off the UI goroutine (the notifier
// writes a marker and starts a command), in the order they happened: Bubble
// Tea runs commands concurrently, so each batch waits for the one before it,
// or a run's end could be told before its question.
func (m *Model) notifyRuns(notices []func()) tea.Cmd {
	if len(notices) == 0 {
		return nil
	}
	prev, done := m.runNotices, make(chan struct{})
	m.runNotices = done
	return func() tea.Msg {
		if prev != nil {
			<-prev
		}
		defer close(done)
		for _, n := range notices {
			n()
		}
		return nil
	}
}

// refreshRunTitle gives the detail pane the shown run's record and its
// totals with its workers, as the list has them now.
func (m *Model) refreshRunTitle() {
	id := m.detail.Run()
	if id == "" {
		return
	}
	if rec := m.list.Run(id); rec != nil {
		tokens, cost := m.list.RunTotals(id)
		m.detail.SetRun(rec, tokens, cost)
	}
}

// openRunMessage opens the prompt for a message to run r: the answer to
// its question while it asks one, else a message its model reads before
// its next call (or on resume, for a stopped run), as zwarm runs answer
// and zwarm runs say do.
func (m *Model) openRunMessage(r *runs.Record) tea.Cmd {
	id := record.ShortID(r.ID)
	if r.Status == runs.StatusWaiting && r.Question != nil {
		q := "answer run " + id + " (" + render.Clip(render.SafeLine(r.Question.Text), 60) + "): "
		if n := len(r.Question.Options); n > 0 {
			q = fmt.Sprintf("answer run %s (1-%d or your own words): ", id, n)
		}
		return m.prompt.OpenMessage("answer", r.ID, q)
	}
	return m.prompt.OpenMessage("say", r.ID, "message to run "+id+": ")
}

// sendRun sends what the prompt took to a run's inbox, off the UI
// goroutine, and says what became of it.
func (m *Model) sendRun(msg prompt.SubmitMsg) tea.Cmd {
	text := strings.TrimSpace(msg.Value)
	if text == "" {
		m.setError(errors.New("empty message not sent"))
		return nil
	}
	r := m.list.Run(msg.Target)
	send := m.opt.SendRun
	if send == nil {
		m.setError(errors.New("this dashboard sends runs nothing: zwarm runs say and zwarm runs answer do"))
		return nil
	}
	if r == nil {
		m.setError(fmt.Errorf("run %s is gone", record.ShortID(msg.Target)))
		return nil
	}
	id, full, ctx := record.ShortID(r.ID), r.ID, m.ctx
	kind, qid, option := runs.MessageSay, "", 0
	if msg.Action == "answer" {
		if r.Status != runs.StatusWaiting || r.Question == nil {
			m.setError(fmt.Errorf("run %s no longer asks anything: i sends it a message", id))
			return nil
		}
		picked, n, err := r.Question.Pick(text)
		if err != nil {
			m.setError(fmt.Errorf("run %s: %w", id, err))
			return nil
		}
		kind, qid, text, option = runs.MessageAnswer, r.Question.ID, picked, n
	}
	live := r.Status.Live()
	m.setStatus("sending to run " + id + "…")
	return func() tea.Msg {
		e, err := send(ctx, full, kind, text, qid)
		switch {
		case err != nil:
			return actionMsg{err: fmt.Errorf("run %s: %w", id, err)}
		case kind == runs.MessageAnswer:
			if option > 0 {
				return actionMsg{text: fmt.Sprintf("answer sent to run %s: option %d, %s", id, option, render.Clip(render.SafeLine(text), 60))}
			}
			return actionMsg{text: fmt.Sprintf("answer sent to run %s: %s", id, render.Clip(render.SafeLine(text), 60))}
		case live:
			return actionMsg{text: fmt.Sprintf("message %d sent to run %s: its model reads it before its next call", e.Seq, id)}
		}
		return actionMsg{text: fmt.Sprintf("message %d kept for run %s: it reads it when resumed", e.Seq, id)}
	}
}

// runRefusal says why a key that acts on sessions does nothing on a run,
// and what does what the user meant.
func runRefusal(k tea.KeyMsg, km *keys.KeyMap, r *runs.Record) error {
	id := record.ShortID(r.ID)
	running := r.Status == runs.StatusRunning
	switch {
	case key.Matches(k, km.Kill) && running:
		return fmt.Errorf("run %s is stopped with Ctrl+C where it runs (zwarm orchestrate); x on one of its workers stops that worker", id)
	case key.Matches(k, km.Kill):
		return fmt.Errorf("run %s is %s; x on one of its workers stops that worker", id, r.Status)
	case key.Matches(k, km.Delete):
		return errors.New("runs are kept in the state dir; d deletes a finished session")
	case key.Matches(k, km.Diff):
		return fmt.Errorf("run %s changes nothing itself: v on one of its workers shows what that worker changed", id)
	case key.Matches(k, km.Land):
		return fmt.Errorf("run %s changes nothing itself: L on one of its workers lands what that worker changed", id)
	case key.Matches(k, km.Attach):
		return fmt.Errorf("run %s is an orchestrator's: A on one of its workers attaches to that worker", id)
	}
	return nil
}

func runIDs(list []*runs.Record) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.ID
	}
	return out
}
