package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// zwarm trace succeeds only when the collector took every span: one that
// never answers, or answers with an error, makes it fail (1), saying so.
func TestTraceFailsWhenTheCollectorDoesNotTakeTheSpans(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.spawn("traced")
	w.ok("wait", id)

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // accepted, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "storage full", http.StatusInternalServerError)
	}))
	defer failing.Close()

	for name, endpoint := range map[string]string{"silent": "http://" + silent.Addr().String(), "failing": failing.URL} {
		r := w.zwarm("trace", id, "--endpoint", endpoint)
		if r.code != 1 || !strings.Contains(r.stderr, "did not take") || r.stdout != "" {
			t.Errorf("%s collector: exit %d, stdout %q, stderr %q", name, r.code, r.stdout, r.stderr)
		}
	}
}
