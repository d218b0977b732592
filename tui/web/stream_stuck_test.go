package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui/web"
)

// A page that stops reading its stream (a laptop asleep, a proxy holding
// the connection) must not hold its handler in a write: Serve returns
// once every request is done, and it is not done while one is stuck.
func TestServeEndsAStreamNobodyReads(t *testing.T) {
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	sessionstest.WriteSettledRecord(t, st, 1)
	tok := web.NewToken()
	srv, err := web.New(web.Options{Token: tok, Manager: sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, nil) }()
	before := streamHandlers()
	_, body := request(t, &serving{st: st, base: base, full: tok, ro: tok}, "POST", "/api/stream", tok, base, "")
	var tk struct{ Ticket string }
	json.Unmarshal([]byte(body), &tk)

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /api/events?ticket=%s HTTP/1.1\r\nHost: x\r\n\r\n", tk.Ticket)
	// Never read again; send the page more than the connection holds.
	for i := range 40 {
		if _, err := st.UpdateSettled(t.Context(), sessionstest.SessionID(1), func(tx *state.Tx) error {
			tx.Session().Task = fmt.Sprintf("%d %s", i, strings.Repeat("x", 512<<10))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond)
	}
	sessionstest.Eventually(t, "the stream's handler blocked in a write", func() bool {
		return streamHandlers() > before && strings.Contains(stacks(), "net.(*conn).Write")
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := streamHandlers(); n > before {
		t.Errorf("Serve returned while %d stream handlers still run:\n%s", n-before, grep(stacks(), "(*Server).events"))
	}
}

func stacks() string {
	buf := make([]byte, 1<<22)
	return string(buf[:runtime.Stack(buf, true)])
}

// streamHandlers is how many goroutines are in an event stream's handler.
func streamHandlers() int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		if strings.Contains(g, "(*Server).events(") {
			n++
		}
	}
	return n
}

func grep(all, what string) string {
	var out []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, what) {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
