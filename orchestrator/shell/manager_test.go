package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func newManager(t *testing.T) *Manager {
	t.Helper()
	m := New(Options{Dir: t.TempDir(), Shell: "/bin/bash"})
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// run executes req, as a non-login shell unless req says otherwise: a login
// shell runs the host's profile, which may be slow, print, or take locks
// that a command killed mid-profile leaves behind. Unless req says how long
// to wait, it waits up to the maximum (a minute) for the command to exit,
// which returns as soon as it does: room for a loaded machine.
func run(t *testing.T, m *Manager, req ExecRequest) Result {
	t.Helper()
	if req.Login == nil {
		req.Login = ptr(false)
	}
	if req.YieldTimeMs == nil {
		req.YieldTimeMs = ptr(MaxYieldMs)
	}
	r, err := m.Exec(context.Background(), req)
	if err != nil {
		t.Fatalf("Exec(%q): %v", req.Cmd, err)
	}
	return r
}

func write(t *testing.T, m *Manager, id int, chars string, yieldMs int) Result {
	t.Helper()
	r, err := m.WriteStdin(context.Background(), WriteRequest{SessionID: id, Chars: chars, YieldTimeMs: &yieldMs})
	if err != nil {
		t.Fatalf("WriteStdin(%d, %q): %v", id, chars, err)
	}
	return r
}

// running fails the test unless r is a running session, and returns its id.
func running(t *testing.T, r Result) int {
	t.Helper()
	if r.ExitCode != nil || r.SessionID == 0 {
		t.Fatalf("want a running session, got %s", r)
	}
	return r.SessionID
}

// pollUntil polls session id, accumulating output, until ok holds for it or
// the process exits; it returns the output and the last result.
func pollUntil(t *testing.T, m *Manager, id int, ok func(string) bool) (string, Result) {
	t.Helper()
	return sendUntil(t, m, id, "", ok)
}

// sendUntil writes chars to session id, then polls as pollUntil does, for
// up to a minute; the output includes the write's own.
func sendUntil(t *testing.T, m *Manager, id int, chars string, ok func(string) bool) (string, Result) {
	t.Helper()
	var out strings.Builder
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		r := write(t, m, id, chars, 200)
		chars = ""
		out.WriteString(r.Output)
		if ok(out.String()) || r.ExitCode != nil {
			return out.String(), r
		}
	}
	t.Fatalf("session %d: the output awaited did not come within a minute, and the command still runs; its output was %q", id, out.String())
	return "", Result{}
}

// waitFor polls cond every 20 ms for up to a minute and reports whether it
// held.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

var resultRE = regexp.MustCompile(`^Wall time: \d+\.\d{3} seconds\nProcess exited with code 3\nOutput:\nout\nerr\n$`)

func TestExecExitCode(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	r := run(t, m, ExecRequest{Cmd: "echo out; echo err >&2; exit 3"})
	if r.ExitCode == nil || *r.ExitCode != 3 || r.SessionID != 0 || r.OriginalTokens != 0 {
		t.Fatalf("got %s", r)
	}
	if !resultRE.MatchString(r.String()) {
		t.Fatalf("result text %q does not match %s", r.String(), resultRE)
	}
	r = run(t, m, ExecRequest{Cmd: "true"})
	if r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("true: %s", r)
	}
}

func TestClampWarning(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	r := run(t, m, ExecRequest{Cmd: "echo hi", YieldTimeMs: ptr(120000)})
	want := "Warning: requested timeout 120000ms exceeds maximum of 60000ms; clamping to 60000ms.\nWall time: "
	if !strings.HasPrefix(r.String(), want) || r.ExitCode == nil {
		t.Fatalf("result %q does not start with %q", r.String(), want)
	}
	if r := run(t, m, ExecRequest{Cmd: "echo hi", YieldTimeMs: ptr(60000)}); r.Warning != "" {
		t.Fatalf("warning for an allowed timeout: %q", r.Warning)
	}
}

// Output written just before exit survives the terminal's hangup.
func TestOutputBeforeExitIsKept(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	r := run(t, m, ExecRequest{Cmd: "seq 1 20000", MaxOutputTokens: ptr(1 << 20)})
	if !strings.HasPrefix(r.Output, "1\n2\n") || !strings.HasSuffix(r.Output, "\n19999\n20000\n") || strings.Contains(r.Output, "\r") {
		t.Fatalf("seq output: %d bytes, ends %q", len(r.Output), r.Output[max(0, len(r.Output)-40):])
	}
}

func TestTruncatedResult(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	r := run(t, m, ExecRequest{Cmd: "seq 1 1000", MaxOutputTokens: ptr(10)})
	full := 3893 // bytes of `seq 1 1000`
	if r.OriginalTokens != approxTokens(full) || len(r.Output) > 40 || !strings.Contains(r.Output, "tokens truncated…") {
		t.Fatalf("got %s", r)
	}
	if !strings.Contains(r.String(), "\nOriginal token count: 974\nOutput:\n") {
		t.Fatalf("result text lacks the original token count: %q", r.String())
	}
}

func TestPollAcrossCalls(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	r := run(t, m, ExecRequest{Cmd: "for i in 1 2 3; do echo $i; sleep 0.3; done", YieldTimeMs: ptr(100)})
	id := running(t, r)
	out, last := pollUntil(t, m, id, func(string) bool { return false })
	if got := r.Output + out; got != "1\n2\n3\n" || *last.ExitCode != 0 {
		t.Fatalf("output across calls %q, last %s", got, last)
	}
	if _, err := m.WriteStdin(context.Background(), WriteRequest{SessionID: id}); err == nil ||
		!strings.Contains(err.Error(), "session "+strconv.Itoa(id)+" is not running (it exited with code 0)") {
		t.Fatalf("write to a finished session: %v", err)
	}
}

func TestCtrlCInterrupts(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	id := running(t, run(t, m, ExecRequest{Cmd: "sleep 100", YieldTimeMs: ptr(200)}))
	// The write returns as soon as the command exits.
	r := write(t, m, id, "\u0003", MaxYieldMs)
	if r.ExitCode == nil || *r.ExitCode != 130 {
		t.Fatalf("after Ctrl-C the command should have exited with code 130 (SIGINT); got %s", r)
	}
}

func TestCatEchoes(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	id := running(t, run(t, m, ExecRequest{Cmd: "cat", YieldTimeMs: ptr(100)}))
	// The terminal echoes the line as typed, then cat writes it back.
	twice := func(s string) bool { return strings.Count(s, "hello cat\n") == 2 }
	if out, _ := sendUntil(t, m, id, "hello cat\n", twice); !twice(out) {
		t.Fatalf("want the line echoed and written back, got %q", out)
	}
	if r := write(t, m, id, "\u0004", MaxYieldMs); r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("after Ctrl-D cat should have exited with code 0; got %s", r)
	}
}

func TestSessionsDoNotShareState(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	start := func() int {
		return running(t, run(t, m, ExecRequest{Cmd: "bash --norc --noprofile -i", YieldTimeMs: ptr(100)}))
	}
	a, b := start(), start()
	has := func(sub string) func(string) bool { return func(s string) bool { return strings.Contains(s, sub) } }
	sendUntil(t, m, a, "export X=1; echo exported\n", has("\nexported"))
	if out, _ := sendUntil(t, m, a, "echo \"X=[$X]\"\n", has("X=[1]")); !strings.Contains(out, "X=[1]") {
		t.Fatalf("session %d lost its own export: %q", a, out)
	}
	out, _ := sendUntil(t, m, b, "echo \"X=[$X]\"\n", func(s string) bool { return has("X=[]")(s) || has("X=[1]")(s) })
	if !strings.Contains(out, "X=[]") || strings.Contains(out, "X=[1]") {
		t.Fatalf("session %d sees session %d's export: %q", b, a, out)
	}
}

// A process writing several MiB between calls never blocks; the result keeps
// the first and last half MiB and one marker accounts for the rest.
func TestOutputBufferBound(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	const n = 4000000
	r := run(t, m, ExecRequest{Cmd: "echo START; head -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' x; echo; echo END", MaxOutputTokens: ptr(1 << 30)})
	total := len("START\n") + n + len("\nEND\n")
	if r.ExitCode == nil || r.OriginalTokens != approxTokens(total) {
		t.Fatalf("exit %v, original tokens %d, want %d", r.ExitCode, r.OriginalTokens, approxTokens(total))
	}
	if len(r.Output) > bufferLimit+len("\n…999999 tokens truncated…\n") || !strings.HasPrefix(r.Output, "START\nxxx") || !strings.HasSuffix(r.Output, "xxx\nEND\n") {
		t.Fatalf("output of %d bytes: starts %q, ends %q", len(r.Output), r.Output[:20], r.Output[len(r.Output)-20:])
	}
	if got := regexp.MustCompile(`…(\d+) tokens truncated…`).FindAllStringSubmatch(r.Output, -1); len(got) != 1 ||
		got[0][1] != strconv.Itoa(approxTokens(total-len(r.Output)+len(got[0][0])+2)) {
		t.Fatalf("markers %v", got)
	}
}

func TestLoginFlag(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	probe := "shopt -q login_shell && echo login || echo nologin"
	r, err := m.Exec(context.Background(), ExecRequest{Cmd: probe, YieldTimeMs: ptr(MaxYieldMs)}) // login by default
	if err != nil || !strings.HasSuffix(r.Output, "\nlogin\n") && r.Output != "login\n" {
		t.Fatalf("default login: %q, %v", r.Output, err)
	}
	if r := run(t, m, ExecRequest{Cmd: probe, Login: ptr(false)}); r.Output != "nologin\n" {
		t.Fatalf("login=false: %q", r.Output)
	}
}

func TestPipes(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	probe := "[ -t 0 ] && echo tty || echo notty; echo err >&2"
	if r := run(t, m, ExecRequest{Cmd: probe}); r.Output != "tty\nerr\n" {
		t.Fatalf("tty=true: %q", r.Output)
	}
	if r := run(t, m, ExecRequest{Cmd: probe, TTY: ptr(false)}); r.Output != "notty\nerr\n" {
		t.Fatalf("tty=false: %q", r.Output)
	}
	// Without a terminal nothing echoes: cat's output is all there is.
	id := running(t, run(t, m, ExecRequest{Cmd: "cat", TTY: ptr(false), YieldTimeMs: ptr(100)}))
	out, _ := sendUntil(t, m, id, "abc\n", func(s string) bool { return strings.Contains(s, "abc\n") })
	if out != "abc\n" {
		t.Fatalf("cat over pipes: %q", out)
	}
}

func TestUnknownSession(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	_, err := m.WriteStdin(context.Background(), WriteRequest{SessionID: 4242, Chars: "x"})
	if err == nil || !strings.Contains(err.Error(), "session 4242 does not exist") || !strings.Contains(err.Error(), "exec_command") {
		t.Fatalf("unknown session: %v", err)
	}
}

func TestSessionIDsAreNotReused(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	// Commands that outlive any wait: each is running when its Exec
	// returns; the first is then ended, the second by Close.
	a := running(t, run(t, m, ExecRequest{Cmd: "sleep 300", YieldTimeMs: ptr(10)}))
	if a != firstSessionID+1 {
		t.Fatalf("first session id %d, want %d", a, firstSessionID+1)
	}
	if r := write(t, m, a, "\u0003", MaxYieldMs); r.ExitCode == nil {
		t.Fatalf("session %d should have exited on Ctrl-C within a minute; got %s", a, r)
	}
	if r := run(t, m, ExecRequest{Cmd: "true"}); r.ExitCode == nil {
		t.Fatalf("true should have exited within a minute; got %s", r)
	}
	b := running(t, run(t, m, ExecRequest{Cmd: "sleep 300", YieldTimeMs: ptr(10)}))
	if b <= a+1 {
		t.Fatalf("session ids %d then %d: an exited command's id was reused", a, b)
	}
}

func TestWorkdir(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	if err := os.Mkdir(filepath.Join(m.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, m, ExecRequest{Cmd: "pwd -P", Workdir: "sub"}); r.Output != mustEval(t, filepath.Join(m.dir, "sub"))+"\n" {
		t.Fatalf("relative workdir: %q", r.Output)
	}
	if r := run(t, m, ExecRequest{Cmd: "pwd -P"}); r.Output != mustEval(t, m.dir)+"\n" {
		t.Fatalf("default workdir: %q", r.Output)
	}
	if _, err := m.Exec(context.Background(), ExecRequest{Cmd: "pwd", Workdir: "nope"}); err == nil || !strings.Contains(err.Error(), `workdir "nope" does not exist`) {
		t.Fatalf("missing workdir: %v", err)
	}
	if _, err := m.Exec(context.Background(), ExecRequest{Cmd: " "}); err == nil || !strings.Contains(err.Error(), "cmd is empty") {
		t.Fatalf("empty cmd: %v", err)
	}
	if _, err := m.Exec(context.Background(), ExecRequest{Cmd: "true", Shell: "/no/such/shell"}); err == nil || !strings.Contains(err.Error(), "/no/such/shell") {
		t.Fatalf("missing shell: %v", err)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	m := New(Options{Dir: t.TempDir(), Shell: "/bin/bash", Env: []string{"GIT_PAGER=more", "ZWARM_TEST_VAR=yes"}})
	defer m.Close()
	r := run(t, m, ExecRequest{Cmd: `echo "$PAGER $GIT_PAGER $TERM $ZWARM_TEST_VAR"`})
	if r.Output != "cat more dumb yes\n" {
		t.Fatalf("environment: %q", r.Output)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	id := firstSessionID + 1 // still running, until Close
	// The context ends once the command has started: Exec is then waiting
	// on it (a context ended before would start nothing).
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(func() bool {
			m.mu.Lock()
			defer m.mu.Unlock()
			return m.procs[id] != nil
		})
		cancel()
	}()
	if _, err := m.Exec(ctx, ExecRequest{Cmd: "sleep 100", YieldTimeMs: ptr(60000)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec whose context was cancelled should return context.Canceled; got %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := m.WriteStdin(ctx, WriteRequest{SessionID: id, YieldTimeMs: ptr(60000)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteStdin with a cancelled context: %v", err)
	}
	running(t, write(t, m, id, "", 10))
}
