package tui

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/diffview"
	"github.com/zwarm/zwarm/tui/prompt"
	"github.com/zwarm/zwarm/tui/sessionlist"
)

// Update routes a message: outside events update the data, keys go to the
// prompt when it is open, else to the global bindings, else to the focused
// pane. Errors only ever reach the status line.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
	case subscribedMsg:
		cmds = append(cmds, m.onSubscribed(msg))
	case alertMsg:
		cmds = append(cmds, m.onAlert(msg))
	case updatesMsg:
		cmds = append(cmds, m.onUpdates(msg))
	case runSubscribedMsg:
		cmds = append(cmds, m.onRunSubscribed(msg))
	case runUpdatesMsg:
		cmds = append(cmds, m.onRunUpdates(msg))
	case sessionlist.Read:
		m.list.ApplyRead(msg)
		if msg.Err != nil {
			m.setError(msg.Err)
		}
	case sessionlist.Matched:
		m.list.ApplyMatched(msg)
		if msg.Err != nil {
			m.setError(msg.Err)
		} else if m.list.Filter() != "" {
			m.setStatus("filter: " + m.list.Filter())
		}
		m.layout()
		cmds = append(cmds, m.followSelection())
	case diffview.LoadedMsg:
		m.diff.Apply(msg)
	case landPlanMsg:
		m.onLandPlan(msg)
	case attachedMsg:
		m.onAttached(msg)
	case actionMsg:
		if msg.err != nil {
			m.setError(msg.err)
		} else {
			m.setStatus(msg.text)
			m.queued = msg.queued
		}
	case tickMsg:
		m.ticking = false
		m.frame++
		m.list.SetNow(m.opt.Now())
		cmds = append(cmds, m.tick())
	case prompt.SubmitMsg:
		cmds = append(cmds, m.onSubmit(msg))
	case prompt.CancelMsg:
		if msg.Mode == prompt.Confirm {
			m.setStatus("cancelled")
		}
		m.landing = landPlan{}
		m.layout()
	case tea.KeyMsg:
		// Letters typed fast (or sent at once, as tmux send-keys does) can
		// arrive as one message: outside a text field each is its own key.
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.prompt.Active() {
			for _, r := range msg.Runes {
				cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			}
			break
		}
		cmds = append(cmds, m.onKey(msg))
	case tea.MouseMsg:
		if m.diff.Active() {
			cmds = append(cmds, update(&m.diff, msg))
		} else {
			cmds = append(cmds, update(&m.detail, msg))
		}
	default:
		if m.prompt.Active() {
			cmds = append(cmds, update(&m.prompt, msg))
		}
	}
	// The listing's sessions that came into view are read.
	cmds = append(cmds, m.list.ReadRows())
	return m, tea.Batch(cmds...)
}

// update hands msg to pane p, which changes in place.
func update(p common.Component, msg tea.Msg) tea.Cmd {
	_, cmd := p.Update(msg)
	return cmd
}

func (m *Model) setStatus(s string) {
	m.status, m.statusErr, m.queued = render.SafeLine(s), false, nil
	m.layout() // a long one takes more lines (statusHeight)
}

func (m *Model) setError(err error) {
	m.status, m.statusErr, m.queued = render.SafeLine(err.Error()), true, nil
	m.opt.Log.Warn("dashboard", "err", err)
	m.layout()
}

// noteTurn replaces a "follow-up queued" status once the session's next
// turn has started: the follow-up is no longer queued.
func (m *Model) noteTurn(s *record.Session) {
	if q := m.queued; q != nil && s.ID == q.id && s.Turn > q.behind {
		m.setStatus(fmt.Sprintf("%s started the follow-up as turn %d", record.ShortID(s.ID), s.Turn))
	}
}

func (m *Model) onSubscribed(msg subscribedMsg) tea.Cmd {
	if msg.err != nil {
		m.setError(msg.err)
		return nil
	}
	switch {
	case msg.feed == listFeed && m.listSub == nil:
		m.listSub = msg.sub
	case msg.feed == trajFeed && msg.id == m.trajID && m.trajSub == nil:
		m.trajSub = msg.sub
	default:
		return closeSub(msg.sub) // the selection moved on meanwhile
	}
	return next(msg.feed, msg.sub)
}

func (m *Model) onUpdates(msg updatesMsg) tea.Cmd {
	current := m.listSub
	if msg.feed == trajFeed {
		current = m.trajSub
	}
	if msg.sub != current {
		return nil // a subscription the dashboard has let go of
	}
	if msg.closed {
		if err := msg.sub.Err(); err != nil {
			m.setError(fmt.Errorf("stopped following the state dir: %w; press r to reload", err))
		}
		return nil
	}
	if msg.feed == listFeed {
		var list []*record.Session
		var removed []string
		for _, u := range msg.updates {
			switch {
			case u.Listing != nil:
				m.list.Upsert(list, removed)
				list, removed = nil, nil
				m.list.SetListing(u.Listing, msg.read)
				m.pending = u.Pending
			case u.Removed:
				removed = append(removed, u.ID)
			case u.Session != nil:
				list = append(list, u.Session)
				m.noteTurn(u.Session)
			case u.Err != nil:
				m.setError(u.Err)
			}
		}
		m.list.Upsert(list, removed)
		m.clearAlerts(list)
		// The update that ends the first load may share its batch with
		// changes after it.
		if slices.ContainsFunc(msg.updates, func(u watch.Update) bool { return u.Synced }) {
			m.sessionsSynced = true
			m.checkLoaded()
		}
		totals := m.list.Totals()
		m.header.SetTotals(totals)
		m.setLoading()
		m.priceNote = render.PriceFootnote(totals.UnpricedModels())
		for _, s := range list {
			m.detail.SetSession(s)
			m.diff.SetSession(s)
		}
		m.refreshRunTitle()
		m.layout()
		return tea.Batch(m.followSelection(), next(msg.feed, msg.sub), m.tick())
	}
	for _, u := range msg.updates {
		if u.Err != nil && !errors.Is(u.Err, sessions.ErrNotFound) {
			m.setError(u.Err)
		}
		m.detail.Apply(u)
	}
	return next(msg.feed, msg.sub)
}

// setLoading tells the header whether the sessions are all loaded, and
// how many of how many are: the listing's and the others', those that
// follow it in updates of their own.
func (m *Model) setLoading() {
	n := m.list.Count()
	m.header.SetLoading(!m.sessionsSynced, n, max(n, m.list.Listing().Len()+m.pending))
}

// checkLoaded marks the first load complete once the sessions, and the
// runs if there are any to follow, have arrived: the selection then starts
// on the first row of everything.
func (m *Model) checkLoaded() {
	if m.loaded || !m.sessionsSynced || m.opt.Runs != nil && !m.runsSynced {
		return
	}
	m.loaded = true
	m.list.SelectFirst()
}

// tickMsg advances runtimes and the spinner.
type tickMsg time.Time

// tick schedules the next tick while a session runs: runtimes advance once
// a second then, and an idle dashboard with nothing running never wakes.
// Liveness needs no tick: the subscription hears a dead supervisor through
// its pidfd.
func (m *Model) tick() tea.Cmd {
	if m.ticking || m.opt.Tick <= 0 || !m.hasRunning() {
		return nil
	}
	m.ticking = true
	return tea.Tick(m.opt.Tick, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// followSelection points the detail pane at the selected row, with a
// subscription to its events: a session's trajectory, or a run's steps.
func (m *Model) followSelection() tea.Cmd {
	row, ok := m.list.SelectedRow()
	key := ""
	if ok {
		key = row.Key()
	}
	if key == m.detail.ID() {
		return nil
	}
	closing := tea.Batch(closeSub(m.trajSub), closeRunSub(m.runTrajSub))
	m.trajSub, m.runTrajSub, m.trajID = nil, nil, key
	switch {
	case !ok:
		m.detail.Reset("")
		return closing
	case row.Run != nil:
		m.detail.ResetRun(key, row.Run)
		m.refreshRunTitle()
		return tea.Batch(closing, m.subscribeRuns(trajFeed, runs.SubscribeOptions{Run: row.Run.ID, Window: m.opt.Window}))
	}
	m.detail.Reset(key)
	if !row.Partial {
		// A summary still being read would title the pane without its
		// task: the subscription's first update brings the record.
		m.detail.SetSession(row.Session)
	}
	return tea.Batch(closing, m.subscribe(trajFeed, key, watch.SubscribeOptions{IDs: []string{key}, Events: true, Window: m.opt.Window}))
}
