package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"syscall"

	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
)

// storyWindow is how much of a run's events.jsonl a page reads at first:
// its newest part, as the dashboard's run pane reads it.
const storyWindow = 1 << 20

// lineJSON is one line of a run's story, as runs show prints it.
type lineJSON struct {
	Kind   int    `json:"kind"`
	Indent int    `json:"indent"`
	Text   string `json:"text"`
}

// storyLines renders events with rd, which carries what one event tells
// the next (the run's step limit).
func storyLines(rd *orchestrator.Renderer, events []runs.Event) []lineJSON {
	lines := []lineJSON{}
	for _, ev := range events {
		for _, l := range rd.Lines(ev) {
			lines = append(lines, lineJSON{Kind: int(l.Kind), Indent: l.Indent, Text: l.Text})
		}
	}
	return lines
}

// runStory streams one run's story as the run writes it (GET
// /api/runs/{id}/story?ticket=T, Server-Sent Events): a step's model
// call, each tool call as it is made and its result as it comes, not
// only the step once it is done. The first "lines" event has reset set
// and the story so far (skipped: its start was left unread, the run is
// long); each next one has the lines appended since. A run whose events
// file was replaced starts over with reset.
func (s *Server) runStory(w http.ResponseWriter, r *http.Request) {
	if s.tickets.use(r.URL.Query().Get("ticket")) == denied {
		fail(w, http.StatusUnauthorized, "the story's stream needs a fresh ticket (POST /api/stream)")
		return
	}
	rec, err := runs.LoadRecord(s.stateDir(), r.PathValue("id"))
	if err != nil {
		fail(w, runCode(err), err.Error()) // as GET /api/runs/ID answers
		return
	}
	// Each stream watches its run's files with an inotify instance of
	// its own, of which a user has few (128 here) for every program: a
	// page that opened many would leave none to zwarm wait or another
	// page's events.
	select {
	case s.stories <- struct{}{}:
		defer func() { <-s.stories }()
	default:
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf("%d runs' stories are streamed already, the most at once: close one (a page's run) and ask again", cap(s.stories)))
		return
	}
	sub, err := runs.Subscribe(r.Context(), s.stateDir(), runs.SubscribeOptions{Run: rec.ID, Window: storyWindow})
	if errors.Is(err, syscall.EMFILE) {
		fail(w, http.StatusServiceUnavailable, "the system's file watches are used up: "+err.Error())
		return
	} else if err != nil {
		s.failed(w, err)
		return
	}
	defer sub.Close()
	st, ok := startStream(w, r)
	if !ok {
		return
	}
	defer st.close()
	rd := orchestrator.Renderer{MaxSteps: rec.Limits.MaxSteps}
	first := true
	for u := range sub.C() {
		if u.ID != rec.ID {
			continue
		}
		if u.Err != nil {
			s.opt.Log.Warn("web: reading a run's story", "run", rec.ID, "err", u.Err)
		}
		if u.Reset {
			rd = orchestrator.Renderer{MaxSteps: rec.Limits.MaxSteps}
		}
		lines := storyLines(&rd, u.Events)
		reset := first || u.Reset
		if !reset && len(lines) == 0 {
			continue
		}
		first = false
		b, _ := json.Marshal(map[string]any{"reset": reset, "skipped": u.Skipped > 0, "lines": lines})
		if st.send(sseEvent("lines", b)) != nil {
			return
		}
	}
}
