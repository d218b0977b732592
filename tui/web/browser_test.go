package web_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui/web"
)

// chromium is the distribution's browser the page is tested in; without
// it the test is skipped, except in CI (CI=true), where .ci/run installs
// it and its absence is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found (.ci/run installs Debian's chromium package)")
		}
		t.Skip("chromium not found: install the chromium package to test the page in a browser (CI=true makes this a failure)")
	}
	return path
}

// browser is a headless Chromium of the test's own, closed when it ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, stop := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(stop)
	return ctx
}

// serving is a state dir with sessions and zwarm serve over it.
type serving struct {
	st       *state.Store
	base     string
	full, ro string
}

func serve(t testing.TB) *serving {
	t.Helper()
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	sv := &serving{st: st, full: web.NewToken(), ro: web.NewToken()}
	srv, err := web.New(web.Options{Manager: sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()}), Token: sv.full, ReadOnlyToken: sv.ro})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sv.base = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return sv
}

// hostile is a session whose task is markup: it must show as text.
const hostile = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`

func (sv *serving) addHostile(t testing.TB) string {
	t.Helper()
	sessionstest.WriteSettledRecord(t, sv.st, 4)
	s, err := sv.st.Load(sessionstest.SessionID(4))
	if err != nil {
		t.Fatal(err)
	}
	s.Task = hostile
	if err := sv.st.Save(s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func waitFor(t *testing.T, ctx context.Context, what, js string, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return time.Since(began)
		}
		if time.Since(began) > limit {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The page lists the sessions; a task that is markup is text, and nothing
// of it runs; a session's story follows its record within a second.
func TestThePageInABrowser(t *testing.T) {
	sv := serve(t)
	id := sv.addHostile(t)
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.full)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the four sessions listed", `document.querySelectorAll("#sessions tbody tr").length === 4`, 30*time.Second)
	pwned := evaluate[string](t, ctx, `String(window.pwned)`)
	shown := evaluate[string](t, ctx, `[...document.querySelectorAll("td.task")].map(td => td.textContent).find(t => t.includes("script")) || ""`)
	address := evaluate[string](t, ctx, `location.href`)
	if pwned != "undefined" || shown != hostile {
		t.Fatalf("a task of markup: window.pwned=%s, shown as %q", pwned, shown)
	}
	if strings.Contains(address, sv.full) {
		t.Fatalf("the token stayed in the address bar: %s", address)
	}
	shot := screenshot(t, ctx, "list")

	// The story follows the record.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[data-id="`+id+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session's story", `document.getElementById("detail-title").textContent.includes("completed")`, 10*time.Second)
	waitFor(t, ctx, "the event stream", `document.getElementById("live").textContent === "live"`, 10*time.Second)
	s, err := sv.st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	s.Status, s.Error = record.StatusFailed, "failed for the test"
	// A settled record is rewritten as zwarm rewrites one (a landing, say):
	// with the listing's generation advanced.
	if err := sv.st.BumpGeneration(t.Context(), func() error { return sv.st.Save(s) }); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, ctx, "the story to show the change", `document.getElementById("detail-title").textContent.includes("failed")`, 10*time.Second)
	if took > time.Second {
		t.Errorf("the change reached the page in %s, want within a second", took)
	}
	t.Logf("a record's change reached the page in %s; screenshots %s, %s", took.Round(time.Millisecond), shot, screenshot(t, ctx, "story"))
}

// A read-only link shows everything and changes nothing: the page offers
// no action, and an action asked for anyway is refused.
func TestAReadOnlyLinkCannotAct(t *testing.T) {
	sv := serve(t)
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.ro)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the sessions listed", `document.querySelectorAll("#sessions tbody tr").length === 3`, 30*time.Second)
	id := sessionstest.SessionID(1)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[data-id="`+id+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the story", `document.getElementById("detail-title").textContent.includes("completed")`, 10*time.Second)
	hidden := evaluate[bool](t, ctx, `document.getElementById("actions").hidden`)
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/api/sessions/`+id+`/kill", {method: "POST", headers: {Authorization: "Bearer `+sv.ro+`"}}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !hidden || status != http.StatusForbidden {
		t.Fatalf("read-only: actions hidden %v, a kill answered %d", hidden, status)
	}
}

func evaluate[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// screenshot saves the page as it is, under $ZWARM_SCREENSHOTS if set
// (docs/web.md shows one), else the test's temporary dir.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ZWARM_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "web-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
