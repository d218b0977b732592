package web

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/watch"
)

// hub feeds every open page's event stream from one subscription to the
// state dir: a change costs one read however many pages are open, and
// nothing runs while nothing changes.
type hub struct {
	mu      sync.Mutex
	clients map[*client]bool
}

// client is one page's stream. A page too slow to take a change gets
// "resync" once it catches up, and reloads what it shows.
type client struct {
	ch     chan []byte
	lagged bool
}

func newHub() *hub { return &hub{clients: map[*client]bool{}} }

// run follows the state dir's sessions and runs until ctx ends,
// retrying a subscription that fails after a pause.
func (h *hub) run(ctx context.Context, m *sessions.Manager, log *slog.Logger) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.retry(ctx, log, func() error { return h.followRuns(ctx, m.Store().Dir()) })
	}()
	h.retry(ctx, log, func() error { return h.follow(ctx, m) })
	wg.Wait()
}

func (h *hub) retry(ctx context.Context, log *slog.Logger, follow func() error) {
	for ctx.Err() == nil {
		err := follow()
		if ctx.Err() != nil {
			return
		}
		log.Warn("web: following the state dir", "err", err)
		h.send("resync", struct{}{})
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

// followRuns tells the pages of every change of a run's record.
func (h *hub) followRuns(ctx context.Context, stateDir string) error {
	sub, err := runs.Subscribe(ctx, stateDir, runs.SubscribeOptions{Window: 1})
	if err != nil {
		return err
	}
	defer sub.Close()
	synced := false
	for u := range sub.C() {
		if u.Synced && !synced {
			// What changed before (since a subscription failed, say)
			// was told to no one: the pages reload.
			synced = true
			h.send("resync", struct{}{})
		}
		if !synced || u.ID == "" || (u.Record == nil && !u.Removed) {
			continue
		}
		ev := map[string]any{"id": u.ID, "removed": u.Removed}
		if u.Record != nil {
			ev["run"] = toRunJSON(u.Record)
		}
		h.send("run", ev)
	}
	return sub.Err()
}

func (h *hub) follow(ctx context.Context, m *sessions.Manager) error {
	sub, err := m.Subscribe(ctx, watch.SubscribeOptions{Listing: true})
	if err != nil {
		return err
	}
	defer sub.Close()
	synced := false
	for u := range sub.C() {
		if u.Synced && !synced {
			// What changed before (since a subscription failed, say)
			// was told to no one: the pages reload.
			synced = true
			h.send("resync", struct{}{})
		}
		if !synced || u.ID == "" {
			continue // the pages read the state they start from themselves
		}
		ev := map[string]any{"id": u.ID, "removed": u.Removed}
		if u.Session != nil {
			ev["session"] = toJSON(u.Session)
		}
		h.send("session", ev)
	}
	return sub.Err()
}

// send tells every page of an event: its name and its data as JSON.
func (h *hub) send(name string, data any) {
	b, _ := json.Marshal(data)
	h.broadcast(sseEvent(name, b))
}

func sseEvent(name string, data []byte) []byte {
	return []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", name, data))
}

func (h *hub) broadcast(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		select {
		case c.ch <- msg:
		default:
			c.lagged = true
		}
	}
}

func (h *hub) join() *client {
	c := &client{ch: make(chan []byte, 256)}
	h.mu.Lock()
	h.clients[c] = true
	h.mu.Unlock()
	return c
}

func (h *hub) leave(c *client) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// events is a page's stream (GET /api/events?ticket=T): Server-Sent
// Events, one "session" event per change of a session.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if s.tickets.use(r.URL.Query().Get("ticket")) == denied {
		fail(w, http.StatusUnauthorized, "the event stream needs a fresh ticket (POST /api/stream)")
		return
	}
	st, ok := startStream(w, r)
	if !ok {
		return
	}
	defer st.close()
	c := s.hub.join()
	defer s.hub.leave(c)
	// What changed before the page joined (while it loaded its list, or
	// while its last stream was down) was told to no one: it reloads
	// first.
	if st.send(sseEvent("resync", []byte("{}"))) != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case msg := <-c.ch:
			if st.send(msg) != nil {
				return
			}
			if len(c.ch) == 0 {
				s.hub.mu.Lock()
				lagged := c.lagged
				c.lagged = false
				s.hub.mu.Unlock()
				if lagged && st.send(sseEvent("resync", []byte("{}"))) != nil {
					return
				}
			}
		}
	}
}
