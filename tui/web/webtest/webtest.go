// Package webtest drives zwarm serve's page in a real browser for tests:
// the distribution's headless Chromium, through the DevTools protocol
// (chromedp). Without Chromium a test is skipped, except in CI (CI=true),
// where .ci/run installs it and its absence is a failure.
package webtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium is the browser's path.
func Chromium(t testing.TB) string {
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

// Browser is a headless Chromium of the test's own, with a profile of its
// own and none of the background traffic a closed network refuses; it is
// closed when the test ends, and every step in it is bounded by limit.
//
// A browser that exits before it listens (it did, once, on a machine at
// a load of 29) is started once more: that is the machine's, not the
// page's.
func Browser(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	for attempt := 1; ; attempt++ {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Chromium(t)), chromedp.NoSandbox,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()),
			chromedp.WindowSize(1280, 800))
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(actx)
		ctx, stop := context.WithTimeout(ctx, limit)
		err := chromedp.Do(ctx, chromedp.Navigate("about:blank")) // starts it
		if err == nil {
			t.Cleanup(func() { stop(); cancel(); cancelAlloc() })
			return ctx
		}
		stop()
		cancel()
		cancelAlloc()
		if attempt == 2 || !strings.Contains(err.Error(), "chrome failed to start") {
			t.Fatalf("start chromium: %v", err)
		}
		t.Logf("chromium did not start; once more: %v", err)
	}
}

// Eval evaluates js in the page; a failure fails the test.
func Eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// WaitFor waits until js is true in the page, at most limit, and says how
// long that took.
func WaitFor(t testing.TB, ctx context.Context, what, js string, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		// A page that reloads (as it does to take a token) loses what
		// was evaluated in it: asked again, its new document answers.
		if err != nil && !strings.Contains(err.Error(), "Inspected target navigated or closed") &&
			!strings.Contains(err.Error(), "Cannot find context with specified id") {
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

// Screenshot saves the page as it is, as NAME.png under
// $ZWARM_SCREENSHOTS if set (docs/web.md and docs/telemetry.md show
// them), else the test's temporary dir, and returns its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ZWARM_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Click clicks the first element sel finds, as a person does: a mouse
// event at its place once it is visible. The page redraws parts of itself
// as the swarm changes, which can leave the node chromedp found stale
// before its click lands ("Could not find node with given id"); the click
// is then made again on the element sel finds now, as a person would
// click the redrawn one.
func Click[S chromedp.Selectable](t testing.TB, ctx context.Context, sel S) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := chromedp.Do(ctx, chromedp.Click(sel))
		if err == nil {
			return
		}
		if attempt == 5 || !strings.Contains(err.Error(), "Could not find node with given id") {
			t.Fatalf("click %v: %v", sel, err)
		}
	}
}

// ClickUntil clicks the element sel selects until the JavaScript js
// holds, for at most limit. A click is a mouse's, at where the element
// was: one that lands as the page moves the element (a list above it
// drawn a moment later) reaches nothing, as a person's would, and is
// made again.
func ClickUntil[S chromedp.Selectable](t testing.TB, ctx context.Context, sel S, what, js string, limit time.Duration) {
	t.Helper()
	began := time.Now()
	for {
		Click(t, ctx, sel)
		for tried := time.Now(); time.Since(tried) < 2*time.Second; time.Sleep(20 * time.Millisecond) {
			if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
				return
			}
		}
		if time.Since(began) > limit {
			t.Fatalf("clicked %v for %s: %s never held", sel, limit, what)
		}
	}
}

// Type types text, key by key, into the element with the CSS selector
// css after emptying it. The page itself focuses the element, rather
// than chromedp through a node id that a redraw beside it can make stale.
func Type(t testing.TB, ctx context.Context, css, text string) {
	t.Helper()
	focus := fmt.Sprintf(`(f => { f.value = ""; f.focus(); })(document.querySelector(%s))`, strconv.Quote(css))
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](focus), chromedp.KeyEvent(text)); err != nil {
		t.Fatalf("type into %s: %v", css, err)
	}
}
