package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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

func run(t *testing.T, r *Registry, name, args string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.Call(ctx, name, json.RawMessage(args))
}

var sessionRE = regexp.MustCompile(`Process running with session ID (\d+)`)

func TestShellTools(t *testing.T) {
	t.Parallel()
	r := shellRegistry(t)
	res := run(t, r, "exec_command", `{"cmd":"pwd; for i in $(seq -w 1 20); do echo 0$i; done","workdir":"sub","max_output_tokens":16,"login":false}`)
	if res.IsError || !strings.Contains(res.Text, "Process exited with code 0") {
		t.Fatalf("exec: %+v", res)
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
	run(t, r, "write_stdin", `{"session_id":`+ma[1]+`,"chars":"export ZX=in-a\n"}`)
	res = run(t, r, "write_stdin", `{"session_id":`+mb[1]+`,"chars":"echo \"[$ZX]\"\n","yield_time_ms":500}`)
	if !strings.Contains(res.Text, "[]") || strings.Contains(res.Text, "in-a]") {
		t.Errorf("shells share state: %q", res.Text)
	}
	res = run(t, r, "write_stdin", `{"session_id":`+ma[1]+`,"chars":"sleep 30\n","yield_time_ms":200}`)
	res = run(t, r, "write_stdin", `{"session_id":`+ma[1]+`,"chars":"\u0003echo after-ctrl-c\n","yield_time_ms":1000}`)
	if !strings.Contains(res.Text, "after-ctrl-c") {
		t.Errorf("Ctrl-C: %q", res.Text)
	}
	res = run(t, r, "write_stdin", `{"session_id":`+mb[1]+`,"chars":"exit 3\n","yield_time_ms":5000}`)
	if !strings.Contains(res.Text, "Process exited with code 3") {
		t.Errorf("exit: %q", res.Text)
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
