package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/shell"
)

func shellRegistry(t *testing.T) *Registry {
	t.Helper()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	sh := shell.New(shell.Options{Dir: dir, Shell: "/bin/bash"})
	t.Cleanup(func() { sh.Close() })
	r, err := NewRegistry(Shell(sh, Dirs{Base: dir})...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run calls a tool with a deadline above the longest yield (a minute).
func run(t *testing.T, r *Registry, name, args string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return r.Call(ctx, name, json.RawMessage(args))
}

// sendUntil writes chars to shell session id, then polls it until ok holds
// for the results' text so far or the process exits, for up to a minute;
// it returns that text.
func sendUntil(t *testing.T, r *Registry, id, chars string, ok func(string) bool) string {
	t.Helper()
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("session id %q: %v", id, err)
	}
	var out strings.Builder
	for deadline := time.Now().Add(time.Minute); ; {
		args, _ := json.Marshal(map[string]any{"session_id": n, "chars": chars, "yield_time_ms": 200})
		chars = ""
		res := run(t, r, "write_stdin", string(args))
		if res.IsError {
			t.Fatalf("write_stdin to session %s failed: %s", id, res.Text)
		}
		out.WriteString(res.Text)
		if ok(out.String()) || strings.Contains(res.Text, "Process exited with code") {
			return out.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: the output awaited did not come within a minute; it printed %q", id, out.String())
		}
	}
}

var sessionRE = regexp.MustCompile(`Process running with session ID (\d+)`)

func TestShellTools(t *testing.T) {
	t.Parallel()
	r := shellRegistry(t)
	res := run(t, r, "exec_command", `{"cmd":"pwd; for i in $(seq -w 1 20); do echo 0$i; done","workdir":"sub","max_output_tokens":16,"yield_time_ms":60000,"login":false}`)
	if res.IsError || !strings.Contains(res.Text, "Process exited with code 0") {
		t.Fatalf("exec should have exited with code 0 within a minute; got %+v", res)
	}
	if !strings.Contains(res.Text, "tokens truncated…") || !strings.Contains(res.Text, "Original token count:") {
		t.Errorf("not truncated: %s", res.Text)
	}
	res = run(t, r, "exec_command", `{"cmd":"echo hi","yield_time_ms":120000,"login":false}`)
	if !strings.HasPrefix(res.Text, "Warning: requested timeout 120000ms exceeds maximum of 60000ms; clamping to 60000ms.\nWall time: ") {
		t.Errorf("clamp: %q", res.Text)
	}
	res = run(t, r, "exec_command", `{"cmd":"pwd","workdir":"/"}`)
	if !res.IsError || !strings.Contains(res.Text, "outside the allowed directories") {
		t.Errorf("outside: %+v", res)
	}
	res = run(t, r, "exec_command", `{"cmd":""}`)
	if !res.IsError || !strings.Contains(res.Text, "cmd is empty") {
		t.Errorf("empty: %+v", res)
	}

	// Two interactive shells, polled across calls, one interrupted.
	a := run(t, r, "exec_command", `{"cmd":"bash --norc -i","yield_time_ms":300,"login":false}`)
	b := run(t, r, "exec_command", `{"cmd":"bash --norc -i","yield_time_ms":300,"login":false}`)
	ma, mb := sessionRE.FindStringSubmatch(a.Text), sessionRE.FindStringSubmatch(b.Text)
	if ma == nil || mb == nil || ma[1] == mb[1] {
		t.Fatalf("sessions: %q %q", a.Text, b.Text)
	}
	exported := sendUntil(t, r, ma[1], "export ZX=in-a; echo exported\n", regexp.MustCompile(`(?m)^exported\r?$`).MatchString)
	if !regexp.MustCompile(`(?m)^exported\r?$`).MatchString(exported) {
		t.Fatalf("shell a should have run the export and gone on; it printed %q", exported)
	}
	// The typed line is echoed as [$ZX]; what echo prints is [] or [in-a].
	out := sendUntil(t, r, mb[1], "echo \"[$ZX]\"\n", func(s string) bool { return strings.Contains(s, "[]") || strings.Contains(s, "[in-a]") })
	if !strings.Contains(out, "[]") || strings.Contains(out, "[in-a]") {
		t.Errorf("shell b should not see shell a's export ([]); it printed %q", out)
	}
	run(t, r, "write_stdin", `{"session_id":`+ma[1]+`,"chars":"sleep 30\n","yield_time_ms":200}`)
	// The typed line is echoed as "echo after-ctrl-c"; what echo prints
	// is a line of its own.
	ran := regexp.MustCompile(`(?m)^after-ctrl-c\r?$`)
	if out := sendUntil(t, r, ma[1], "\u0003echo after-ctrl-c\n", ran.MatchString); !ran.MatchString(out) {
		t.Errorf("after Ctrl-C shell a should have run the next command, printing after-ctrl-c; it printed %q", out)
	}
	// The write returns as soon as the shell exits.
	res = run(t, r, "write_stdin", `{"session_id":`+mb[1]+`,"chars":"exit 3\n","yield_time_ms":60000}`)
	if !strings.Contains(res.Text, "Process exited with code 3") {
		t.Errorf("shell b should have exited with code 3 within a minute; got %q", res.Text)
	}
	res = run(t, r, "write_stdin", `{"session_id":`+mb[1]+`,"chars":""}`)
	if !res.IsError || !strings.Contains(res.Text, "is not running") {
		t.Errorf("finished session: %+v", res)
	}
	res = run(t, r, "write_stdin", `{"chars":"x"}`)
	if !res.IsError || !strings.Contains(res.Text, "needs session_id") {
		t.Errorf("no session: %+v", res)
	}
}

func TestSleepAndFinish(t *testing.T) {
	t.Parallel()
	var summary string
	r, err := NewRegistry(Sleep(), Finish(func(s string) { summary = s }))
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, r, "sleep", `{"seconds":0.01}`); res.IsError || res.Text != "slept 0.01s" {
		t.Errorf("sleep %+v", res)
	}
	if res := run(t, r, "sleep", `{"seconds":-1}`); !res.IsError {
		t.Errorf("negative sleep %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := r.Call(ctx, "sleep", json.RawMessage(`{"seconds":900}`)); !res.IsError || !strings.Contains(res.Text, "interrupted") {
		t.Errorf("cancelled sleep %+v", res)
	}
	if res := run(t, r, "finish", `{"summary":" "}`); !res.IsError || summary != "" {
		t.Errorf("empty finish %+v", res)
	}
	if res := run(t, r, "finish", `{"summary":"all done"}`); res.IsError || summary != "all done" {
		t.Errorf("finish %+v %q", res, summary)
	}
}
