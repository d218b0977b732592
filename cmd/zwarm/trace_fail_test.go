package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// An address no supervisor could send to is refused by whatever would
// start one (spawn, a settled session's follow-up), with nothing made,
// as orchestrate refuses it: not found later in a supervisor's log.
func TestABadCollectorAddressIsRefusedBeforeAWorkerStarts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.spawn("first")
	w.ok("wait", id)
	before := len(w.ls())
	w.extraEnv = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=ftp://collector"}
	for _, args := range [][]string{{"spawn", "second"}, {"inject", id, "more"}} {
		r := w.zwarm(args...)
		if r.code != 2 || !strings.Contains(r.stderr, `OTEL_EXPORTER_OTLP_ENDPOINT "ftp://collector" is not an http:// or https:// URL`) {
			t.Errorf("%s with a bad collector address: exit %d, %q", args[0], r.code, r.stderr)
		}
	}
	w.extraEnv = nil
	for _, endpoint := range []string{"ftp://collector", "127.0.0.1:4318"} {
		if r := w.zwarm("trace", id, "--endpoint", endpoint); r.code != 2 || !strings.Contains(r.stderr, "--endpoint "+strconv.Quote(endpoint)+" is not an http:// or https:// URL") {
			t.Errorf("trace --endpoint %s: exit %d, %q", endpoint, r.code, r.stderr)
		}
	}
	if n := len(w.ls()); n != before {
		t.Errorf("%d sessions after the refusals, want %d", n, before)
	}
	if s := w.record(id); len(s.Turns) != 1 || s.PendingInjects != 0 {
		t.Errorf("the refused follow-up changed the session: %d turns, %d pending", len(s.Turns), s.PendingInjects)
	}
}
