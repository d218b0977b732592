package web_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui/web/webtest"
)

// firstScreen resolves, in the page, once its list shows a page of
// sessions (or all there are), with the time since the navigation began
// (performance.now counts from it).
const firstScreen = `new Promise((resolve) => {
	const check = () => {
		const rows = document.querySelectorAll("#sessions tbody tr").length;
		if (rows >= 200 || (rows > 0 && document.getElementById("more").hidden)) resolve(performance.now());
		else setTimeout(check, 1);
	};
	check();
})`

// BenchmarkFirstScreen is a person opening the page in a browser: from
// navigating to the link zwarm serve printed to the first page of
// sessions on the screen, in headless Chromium, over the state dir
// ZWARM_BENCH_STATE names (the scale script's, of 100,000 sessions), or
// 1,000 sessions written for the benchmark. ms/screen is the median.
func BenchmarkFirstScreen(b *testing.B) {
	dir := os.Getenv("ZWARM_BENCH_STATE")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "state")
	}
	st, err := state.NewStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("ZWARM_BENCH_STATE") == "" {
		for i := range 1000 {
			sessionstest.WriteSettledRecord(b, st, i)
		}
	}
	sv := serveStore(b, st)
	ctx := webtest.Browser(b, 10*time.Minute)
	link := sv.base + "/#token=" + sv.ro
	open := func() float64 {
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link)); err != nil {
			b.Fatal(err)
		}
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](firstScreen, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		return ms
	}
	open() // the server's first listing, and the browser's first page
	var times []float64
	for b.Loop() {
		times = append(times, open())
	}
	sort.Float64s(times)
	b.ReportMetric(times[len(times)/2], "ms/screen")
}
