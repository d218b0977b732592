package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/web/webtest"
)

// serve refuses what would put its token on the network in the clear, and
// a command line it cannot run, before it listens.
func TestServeRefusesPlainHTTPOffTheLoopback(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, "refusing plain HTTP on 0.0.0.0:0"},
		{[]string{"serve", "--addr", "192.0.2.1:7777"}, "--tls-cert and --tls-key"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "--addr", "nope"}, "want host:port"},
	} {
		r := w.bin(tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// A port another program holds is no wrong command line: serve says so,
// and how to choose another, and exits 1.
func TestServeOnATakenPortSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := w.bin("serve", "--addr", ln.Addr().String())
	if r.code != 1 || !strings.Contains(r.stderr, "another program listens there (choose another port with --addr)") || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// startServe runs zwarm serve in the world and returns its link (with the
// full token) once it listens; it is stopped when the test ends.
func (w *world) startServe(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = w.Work, w.env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "/#token=") {
		w.t.Fatalf("serve printed %q: %v", line, err)
	}
	return strings.TrimSpace(line)
}

// A worker's change lands from the page, its verify command's output
// shown as it runs, as zwarm land would land it from the checkout the
// worker was spawned from.
func TestALandFromThePageLands(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README.md": "hello\n"})
	w.setScript(agentDoes(`printf 'package x\n' > x.go && printf 'hello, world\n' > README.md`))
	id := w.spawn("add x.go")
	w.ok("wait", id)
	link := w.startServe()
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the worker listed", `document.querySelectorAll("#sessions tbody tr").length === 1`, 30*time.Second)
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+id+`"]`), "the session selected", `state.selected === "`+id+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the actions", `!document.getElementById("actions").hidden`, 30*time.Second)
	ws := `document.getElementById("detail-workspace").textContent`
	if got, want := webtest.Eval[string](t, ctx, ws), "worktree"+w.show(id).Worktree; !strings.HasPrefix(got, want) || !strings.Contains(got, "not landed") {
		t.Fatalf("the session's worktree and change: %q, want it to start %q and say it is not landed", got, want)
	}
	webtest.Click(t, ctx, chromedp.CSS("#show-diff"))
	webtest.WaitFor(t, ctx, "the diff, file by file", `[...document.querySelectorAll("#diff-files summary")].some(s => s.textContent === "x.go")`, 30*time.Second)
	added := webtest.Eval[string](t, ctx, `[...document.querySelectorAll("#diff-files .add")].map(s => s.textContent).join("")`)
	stat := webtest.Eval[string](t, ctx, `document.getElementById("diff-stat").textContent`)
	if !strings.Contains(added, "+package x") || !strings.Contains(stat, "x.go") {
		t.Fatalf("the diff shows %q added, stat %q", added, stat)
	}
	webtest.Click(t, ctx, chromedp.CSS("#side-by-side"))
	webtest.WaitFor(t, ctx, "the diff side by side", `document.querySelectorAll("#diff-files table.side-by-side").length === 2`, 30*time.Second)
	pair := webtest.Eval[string](t, ctx, `[...document.querySelectorAll("table.side-by-side tr")].map(tr => [...tr.children].map(td => td.className + ":" + td.textContent).join(" | ")).find(r => r.startsWith("del:")) || ""`)
	if pair != "del:hello | add:hello, world" {
		t.Fatalf("README.md side by side: %q", pair)
	}
	webtest.Screenshot(t, ctx, "web-diff")
	webtest.Type(t, ctx, "#land-verify", "cat x.go && echo VERIFIED")
	webtest.Click(t, ctx, chromedp.CSS(`#land-form button`))
	webtest.WaitFor(t, ctx, "the landing", `document.getElementById("action-result").textContent.startsWith("landed into main")`, time.Minute)
	shown := webtest.Eval[string](t, ctx, `document.getElementById("land-out").textContent`)
	result := webtest.Eval[string](t, ctx, `document.getElementById("action-result").textContent`)
	if !strings.Contains(shown, "package x") || !strings.Contains(shown, "VERIFIED") || !strings.Contains(result, "verified") {
		t.Fatalf("the verify's output %q, the result %q", shown, result)
	}
	if got := w.git(w.Work, "show", "main:x.go"); got != "package x" {
		t.Fatalf("main's x.go after the landing: %q", got)
	}
	landed := "landed into main as " + w.git(w.Work, "rev-parse", "main")[:8]
	webtest.WaitFor(t, ctx, "the landing in the session's record", ws+`.includes(`+strconv.Quote(landed)+`)`, 30*time.Second)
	webtest.Screenshot(t, ctx, "web-land")
}

// Another site's page that holds the token still cannot act with it: the
// browser asks first (CORS), the server says nothing it would take, and
// the request never lands.
func TestAnotherSitesPageCannotAct(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.spawn("stay as you are")
	w.ok("wait", id)
	link := w.startServe()
	base, tok, _ := strings.Cut(link, "/#token=")
	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(rw, `<script>fetch(%q, {method: "POST", headers: {Authorization: "Bearer %s", "Content-Type": "application/json"},
			body: JSON.stringify({text: "do evil"})}).then(r => document.title = "answered " + r.status, e => document.title = "refused")</script>`,
			base+"/api/sessions/"+id+"/inject", tok)
	}))
	defer evil.Close()
	ctx := webtest.Browser(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the cross-site request to end", `document.title !== ""`, 30*time.Second)
	if title := webtest.Eval[string](t, ctx, `document.title`); title != "refused" {
		t.Fatalf("the cross-site request: %s", title)
	}
	if s := w.show(id); len(s.Inbox) != 0 || s.Turn != 1 {
		t.Fatalf("the cross-site follow-up reached the session: inbox %v, turn %d", s.Inbox, s.Turn)
	}
}

// A run that asks shows its question on the page with a button per
// option; a person says something to it and answers with a button, and
// the run goes on with what they said and picked.
func TestARunIsAnsweredFromThePage(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ASK PAGE: which database"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which database?", "options": []string{"postgres", "sqlite"}})),
		replyCalls(fcall("finish", map[string]any{"summary": "chose"})))
	bg := w.start("orchestrate", task)
	run := w.waitingRun()
	link := w.startServe()
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the run listed", `document.querySelectorAll("#runs tbody tr[data-id]").length === 1`, 30*time.Second)
	webtest.ClickUntil(t, ctx, chromedp.CSS(`#runs tr[data-id="`+run.ID+`"]`), "the run selected", `document.querySelector("#runs tr.selected") !== null`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the question", `document.getElementById("run-asks").textContent === "asks: Which database?"`, 30*time.Second)
	webtest.Type(t, ctx, "#say-text", "and keep it simple")
	webtest.Click(t, ctx, chromedp.CSS(`#say-form button`))
	webtest.WaitFor(t, ctx, "the message said", `document.getElementById("run-result").textContent === "said"`, 30*time.Second)
	webtest.Screenshot(t, ctx, "web-run")
	webtest.Click(t, ctx, chromedp.Search(`//div[@id="run-options"]/button[text()="sqlite"]`))
	if code := bg.wait(); code != 0 {
		t.Fatalf("orchestrate exit %d\n%s\n%s", code, bg.stdout.String(), bg.stderr.String())
	}
	out := bg.stdout.String()
	for _, want := range []string{"← you (runs answer): sqlite", "you: and keep it simple"} {
		if !strings.Contains(out, want) {
			t.Errorf("orchestrate's output lacks %q:\n%s", want, out)
		}
	}
	webtest.WaitFor(t, ctx, "the run shown completed", `document.getElementById("run-title").textContent.includes("completed")`, 30*time.Second)
}

// A worker spawned from the page runs as zwarm spawn run where serve was
// started would, and the page follows it to its end.
func TestAWorkerSpawnedFromThePage(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README.md": "hello\n"})
	w.setScript(agentDoes(`printf 'y\n' > y.txt`))
	link := w.startServe()
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the spawn form", `!document.getElementById("spawn-form").hidden`, 30*time.Second)
	webtest.Type(t, ctx, "#spawn-task", "write y.txt")
	webtest.Click(t, ctx, chromedp.CSS(`#spawn-form button`))
	webtest.WaitFor(t, ctx, "the worker done", `document.getElementById("detail-title").textContent.includes("completed")`, time.Minute)
	ids := w.IDs()
	if len(ids) != 1 {
		t.Fatalf("sessions after a spawn from the page: %v", ids)
	}
	if s := w.show(ids[0]); s.Task != "write y.txt" || s.Source.String() != "user" || s.Worktree == "" {
		t.Fatalf("the spawned worker: task %q, source %s, worktree %q", s.Task, s.Source, s.Worktree)
	}
	// A follow-up from the page is a second turn, and the page says so.
	webtest.Type(t, ctx, "#inject-text", "and then z")
	webtest.Click(t, ctx, chromedp.CSS(`#inject-form button`))
	webtest.WaitFor(t, ctx, "the follow-up delivered", `document.getElementById("detail-follow-ups").textContent === "follow-up: and then z · delivered as turn 2"`, time.Minute)
	webtest.WaitFor(t, ctx, "its turn done", `document.querySelectorAll("#story .turn").length === 2 && document.getElementById("detail-title").textContent.includes("completed")`, time.Minute)
}

// A run's story on the page follows the run as it writes it: a tool call
// shows while it still runs, in the middle of its step (the run's record
// changes only once the step is done), and its result when it comes.
func TestARunsStoryShowsEachCallAsItIsMade(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	gate := filepath.Join(t.TempDir(), "gate")
	task := "LIVE PAGE: wait for the gate"
	srv.On(task, replyCalls(fcall("exec_command", map[string]any{"cmd": "while [ ! -f " + gate + " ]; do sleep 0.1; done; echo through", "yield_time_ms": 60000})),
		replyCalls(fcall("finish", map[string]any{"summary": "through the gate"})))
	bg := w.start("orchestrate", task)
	link := w.startServe()
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the run listed", `document.querySelectorAll("#runs tbody tr[data-id]").length === 1`, 30*time.Second)
	webtest.ClickUntil(t, ctx, chromedp.CSS(`#runs tbody tr[data-id]`), "the run selected", `document.querySelector("#runs tr.selected") !== null`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the call while it runs", `document.getElementById("run-lines").textContent.includes("→ exec_command")`, 30*time.Second)
	if runs := w.runs(); len(runs) != 1 || runs[0].Steps != 0 {
		t.Fatalf("the call showed, but the run's record is %+v; want it mid-step", runs)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := bg.wait(); code != 0 {
		t.Fatalf("orchestrate exit %d\n%s\n%s", code, bg.stdout.String(), bg.stderr.String())
	}
	webtest.WaitFor(t, ctx, "the result and the end", `(() => { const t = document.getElementById("run-lines").textContent;
		return t.includes("← exit 0") && t.includes("through the gate"); })()`, 30*time.Second)
	if n := webtest.Eval[int](t, ctx, `document.getElementById("run-lines").textContent.split("→ exec_command").length - 1`); n != 1 {
		t.Fatalf("the call shows %d times in the story", n)
	}
}

// No secret reaches the page: not the environment serve runs in (API
// keys), not a config value that holds one (a collector's header), in
// any answer the page reads, for a worker and a run alike.
func TestNoSecretReachesThePage(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	const envKey, hdrKey = "sk-zwarm-env-secret-0001", "zwarm-header-secret-0002"
	w.extraEnv = append(w.extraEnv, "OPENAI_API_KEY="+envKey, "ANTHROPIC_API_KEY="+envKey)
	cfg, _ := os.ReadFile(filepath.Join(w.State, "config.toml"))
	w.WriteConfig(string(cfg) + "\n[telemetry]\ndisabled = true\nendpoint = \"http://127.0.0.1:1\"\nheaders = { authorization = \"Bearer " + hdrKey + "\" }\n")
	task := "SECRETS: delegate one"
	srv.On(task, replyCalls(fcall("delegate", map[string]any{"task": "print the environment"})),
		replyCalls(fcall("finish", map[string]any{"summary": "done"})))
	w.setScript(agentDoes("env > env.txt"))
	w.ok("orchestrate", task)
	link := w.startServe()
	base, token, _ := strings.Cut(link, "/#token=")
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	run := w.runs()[0]
	id := run.Workers[0]
	answers := map[string]string{}
	for _, path := range []string{"/", "/app.js", "/api/sessions", "/api/sessions/" + id,
		"/api/runs", "/api/runs/" + run.ID} {
		answers[path] = get(path)
	}
	if !strings.Contains(answers["/api/sessions/"+id], "print the environment") || !strings.Contains(answers["/api/runs/"+run.ID], "delegate") {
		t.Fatalf("the answers do not hold the worker and the run:\n%s\n%s", answers["/api/sessions/"+id], answers["/api/runs/"+run.ID])
	}
	for path, body := range answers {
		if strings.Contains(body, envKey) || strings.Contains(body, hdrKey) {
			t.Errorf("GET %s holds a secret:\n%s", path, body)
		}
	}
}

// --open hands the link, token and all, to the desktop's opener, and says
// so on stderr where there is none, serving all the same.
func TestServeOpensThePage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if runtime.GOOS != "linux" {
		t.Skip("the opener is xdg-open on Linux only")
	}
	opener := t.TempDir()
	got := filepath.Join(opener, "opened")
	writeFile(t, filepath.Join(opener, "xdg-open"), "#!/bin/sh\necho \"$1\" > "+got+"\n")
	if err := os.Chmod(filepath.Join(opener, "xdg-open"), 0o755); err != nil {
		t.Fatal(err)
	}
	// serveWith starts serve --open with PATH set to path; it returns the
	// link it printed and its stderr.
	serveWith := func(path string) (link string, stderr io.Reader) {
		cmd := exec.Command(bins.zwarm, "serve", "--addr", "127.0.0.1:0", "--open")
		cmd.Dir, cmd.Env = w.Work, append(w.env(), "PATH="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if stderr, err = cmd.StderrPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
		link, err = bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(link), stderr
	}

	link, _ := serveWith(opener + ":" + os.Getenv("PATH"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(got)
		if err == nil && strings.TrimSpace(string(b)) == link {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the opener was given %q, want the printed link %q", b, link)
		}
		time.Sleep(20 * time.Millisecond)
	}

	link, stderr := serveWith(t.TempDir())
	base, token, _ := strings.Cut(link, "/#token=")
	req, _ := http.NewRequest("GET", base+"/api/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	line := make(chan string, 1)
	go func() { // serve writes it before it serves, or never
		l, _ := bufio.NewReader(stderr).ReadString('\n')
		line <- l
	}()
	var said string
	select {
	case said = <-line:
	case <-time.After(5 * time.Second):
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(said, "--open: no xdg-open here") {
		t.Fatalf("without an opener: the list answered %d, stderr %q", resp.StatusCode, said)
	}
}

// A worker killed from the page says so: it read "killed by zwarm kill",
// a command no one ran. The page says what the kill dropped.
func TestAKillFromThePageSaysWhereItCameFrom(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	w.ok("inject", id, "then this")
	link := w.startServe()
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the worker listed", `document.querySelectorAll("#sessions tbody tr").length === 1`, 30*time.Second)
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+id+`"]`), "the session selected", `state.selected === "`+id+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the actions", `!document.getElementById("actions").hidden`, 30*time.Second)
	webtest.Click(t, ctx, chromedp.CSS("#kill"))
	webtest.WaitFor(t, ctx, "the kill", `document.getElementById("action-result").textContent !== "…" && document.getElementById("action-result").textContent !== ""`, time.Minute)
	if got := webtest.Eval[string](t, ctx, `document.getElementById("action-result").textContent`); got != "killed; 1 queued follow-up dropped, undelivered" {
		t.Fatalf("the page says %q", got)
	}
	w.zwarm("wait", id)
	if s := w.show(id); s.Status() != record.StatusKilled || s.Error != "killed from the web page (zwarm serve)" {
		t.Fatalf("%s: %q", s.Status(), s.Error)
	}
}
