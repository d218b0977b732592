package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// openStream opens /api/events as the page's stream() does and gives its
// events' names as they come.
func openStream(t *testing.T, sv *serving) (<-chan string, func()) {
	t.Helper()
	_, body := request(t, sv, "POST", "/api/stream", sv.full, sv.base, "")
	var tk struct{ Ticket string }
	if err := json.Unmarshal([]byte(body), &tk); err != nil || tk.Ticket == "" {
		t.Fatalf("no ticket: %s", body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", sv.base+"/api/events?ticket="+tk.Ticket, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				got <- name
			}
		}
	}()
	return got, func() { cancel(); res.Body.Close() }
}

// A change made while a page had no stream (between its list's load and
// its stream's start, or while it reconnects) was told to no stream: a
// stream starts with a resync, on which the page reads what it shows
// again.
func TestAStreamStartsWithAResync(t *testing.T) {
	sv := serve(t)
	id := sessionstest.SessionID(1)
	_, stop := openStream(t, sv)
	stop() // the stream breaks: a proxy's timeout, a laptop asleep
	if _, err := sv.st.UpdateSettled(t.Context(), id, func(tx *state.Tx) error {
		sessionstest.SetStatus(tx.Session(), record.StatusFailed)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // told to the streams there were
	got, stop2 := openStream(t, sv)
	defer stop2()
	select {
	case ev := <-got:
		if ev != "resync" {
			t.Errorf("a new stream's first event is %q, want resync", ev)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("session %s failed while the page had no stream; its new stream told nothing in 5 s: the page shows it as it was", id[:8])
	}
}
