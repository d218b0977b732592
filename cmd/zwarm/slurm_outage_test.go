package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
)

// hungController is a copy of the world's cluster config whose controller
// accepts connections and never answers, as a controller that hangs (or a
// host that has gone quiet) does: every Slurm client waits on it for its
// whole message timeout.
func (w *world) hungController() string {
	w.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	w.t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	conf := ""
	for _, e := range w.extraEnv {
		if v, ok := strings.CutPrefix(e, "SLURM_CONF="); ok {
			conf = v
		}
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		w.t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	hung := regexp.MustCompile(`(?m)^SlurmctldPort=.*$`).ReplaceAll(b, []byte(fmt.Sprintf("SlurmctldPort=%d", port)))
	path := filepath.Join(w.t.TempDir(), "slurm.conf")
	writeFile(w.t, path, string(hung))
	return path
}

// With the controller hung, a reader asks it once, bounded, for all the
// sessions it shows, and shows them as they were recorded: running, the
// scheduler unreachable; it neither waits on each session's job in turn
// nor concludes anything of a job it cannot see.
func TestSlurmReadersDoNotWaitOnAHungController(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate)
	var ids []string
	for i := range 4 {
		id, _ := w.runningJob(fmt.Sprintf("held %d", i))
		ids = append(ids, id)
	}
	w.ok("ls") // the scheduler answers: what it says is kept for later readers
	real := append([]string{}, w.extraEnv...)
	calls := filepath.Join(t.TempDir(), "calls")
	w.wrapOnPath("squeue", "echo \"call $*\" >> '"+calls+"'\nexec '%s' \"$@\"")
	w.extraEnv = append(w.extraEnv, "SLURM_CONF="+w.hungController())
	for _, args := range [][]string{{"ls"}, {"show", ids[0]}, {"ls", "--json"}} {
		os.Remove(calls)
		r := w.zwarm(args...)
		if r.code != 0 {
			t.Fatalf("%v with the controller hung: %+v", args, r)
		}
		if n := waitCalls(calls); n != 1 {
			t.Errorf("%v with the controller hung asked squeue %d times; want once, for every session", args, n)
		}
		if strings.Contains(r.stdout, "failed") || strings.Contains(r.stdout, "gone") {
			t.Errorf("%v judged a job it could not see:\n%s", args, r.stdout)
		}
		if len(args) == 2 && !regexp.MustCompile(`slurm unreachable for \d+s; slurm \d+ on \S+ as of \d+s ago`).MatchString(r.stdout) {
			t.Errorf("%v does not say the scheduler is unreachable, and what it last said of the job:\n%s", args, r.stdout)
		}
	}
	w.extraEnv = real
	writeFile(t, gate, "")
	for _, id := range ids {
		if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
			t.Fatalf("wait %s once the controller answers: %+v", id, r)
		}
		if s := w.show(id); s.Status != record.StatusCompleted {
			t.Fatalf("session %s: %s %q", id, s.Status, s.Error)
		}
	}
}
