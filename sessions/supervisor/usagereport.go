package supervisor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

// usageEndpoint is the local OTLP/HTTP logs endpoint a turn's agent sends its
// telemetry to (agent.UsageReporter): the usage of each model call it
// reports is kept for the turn's loop, which records it as usage events,
// so that a cost limit sees each call of an agent whose output tells the
// turn's usage only at its end. It listens on the loopback only, at a
// path with a random part, and lives as long as its turn.
type usageEndpoint struct {
	rep  agent.UsageReporter
	srv  *http.Server
	url  string
	done chan struct{}

	mu    sync.Mutex
	calls []record.Usage
	ready chan struct{} // signalled when calls has something
}

// maxUsageBody bounds one request the endpoint reads.
const maxUsageBody = 16 << 20

func startUsageEndpoint(rep agent.UsageReporter) (*usageEndpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		ln.Close()
		return nil, err
	}
	path := "/" + hex.EncodeToString(secret[:]) + "/v1/logs"
	t := &usageEndpoint{rep: rep, url: "http://" + ln.Addr().String() + path, done: make(chan struct{}), ready: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, t.logs)
	t.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(t.done)
		if err := t.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	return t, nil
}

// logs takes one export: an empty OTLP answer, whatever it held.
func (t *usageEndpoint) logs(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxUsageBody))
	if calls := t.rep.CallUsage(body); len(calls) > 0 {
		t.mu.Lock()
		t.calls = append(t.calls, calls...)
		t.mu.Unlock()
		select {
		case t.ready <- struct{}{}:
		default:
		}
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, "{}")
}

// take returns the calls reported since the last take.
func (t *usageEndpoint) take() []record.Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	calls := t.calls
	t.calls = nil
	return calls
}

// close stops the endpoint and waits for it.
func (t *usageEndpoint) close() {
	if t == nil {
		return
	}
	t.srv.Close()
	<-t.done
}
