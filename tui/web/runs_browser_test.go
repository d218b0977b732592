package web_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui/web"
	"github.com/zwarm/zwarm/tui/web/webtest"
)

// writeRun writes a settled run's record into the served state dir.
func (sv *serving) writeRun(t *testing.T, id, task string, steps int, created time.Time, workers ...string) {
	t.Helper()
	dir := runs.RunDir(sv.st.Dir(), id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	end := created.Add(time.Minute)
	r := &runs.Record{Version: runs.RecordVersion, ID: id, Task: task, Model: "gpt-5.1", Status: runs.StatusCompleted, Steps: steps,
		Limits: runs.Limits{MaxSteps: 50}, CreatedAt: created, UpdatedAt: end, EndedAt: &end, Workers: workers}
	if err := runs.WriteRecord(dir, r); err != nil {
		t.Fatal(err)
	}
}

// The runs are listed as the dashboard lists them, each with its workers
// under it (a worker opens its session); they sort by a column and the
// filter finds them as it finds sessions.
func TestRunsWithTheirWorkers(t *testing.T) {
	sv := serve(t)
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	alpha, beta := "0199a213-81c0-7800-8aa1-000000000001", "0199a213-81c0-7800-8aa1-000000000002"
	sv.writeRun(t, alpha, "alpha: two workers", 5, at, sessionstest.SessionID(1), sessionstest.SessionID(2))
	sv.writeRun(t, beta, "beta: none", 9, at.Add(time.Hour))
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.ro)); err != nil {
		t.Fatal(err)
	}
	rows := `[...document.querySelectorAll("#runs tbody tr")].map(tr => tr.dataset.id ? "run " + tr.children[2].textContent : "worker " + tr.children[0].textContent + " " + tr.children[2].textContent).join("; ")`
	w1, w2 := sessionstest.SessionID(1)[:8], sessionstest.SessionID(2)[:8]
	newest := "run beta: none; run alpha: two workers; worker └ " + w1 + " task 1; worker └ " + w2 + " task 2"
	webtest.WaitFor(t, ctx, "the runs, newest first, with their workers", rows+` === `+strconv.Quote(newest), 30*time.Second)
	click := func(sel string) { t.Helper(); webtest.Click(t, ctx, chromedp.CSS(sel)) }
	click(`th[data-run-sort="steps"]`) // most steps first
	webtest.WaitFor(t, ctx, "the runs by steps", rows+` === `+strconv.Quote(newest), 30*time.Second)
	click(`th[data-run-sort="steps"]`) // fewest first
	fewest := "run alpha: two workers; worker └ " + w1 + " task 1; worker └ " + w2 + " task 2; run beta: none"
	webtest.WaitFor(t, ctx, "the runs by steps, fewest first", rows+` === `+strconv.Quote(fewest), 30*time.Second)
	typeFilter := func(text string) { t.Helper(); webtest.Type(t, ctx, "#filter", text) }
	typeFilter("beta")
	webtest.WaitFor(t, ctx, "the runs filtered", rows+` === "run beta: none"`, 30*time.Second)
	typeFilter("alpha")
	webtest.WaitFor(t, ctx, "the other run filtered", rows+` === `+strconv.Quote(fewest[:len(fewest)-len("; run beta: none")]), 30*time.Second)
	click(`#runs tr[data-session="` + sessionstest.SessionID(2) + `"]`)
	webtest.WaitFor(t, ctx, "the worker's session", `document.getElementById("detail-title").textContent === "`+w2+` · completed"`, 30*time.Second)
}

// One run record that cannot be read hides no other: the page lists the
// rest and says which could not be read (the whole list was refused, and
// the page showed no run at all).
func TestAnUnreadableRunHidesNoOther(t *testing.T) {
	sv := serve(t)
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	good, bad := "0199a213-81c0-7800-8aa1-000000000011", "0199a213-81c0-7800-8aa1-000000000012"
	sv.writeRun(t, good, "good run", 3, at)
	sv.writeRun(t, bad, "bad run", 3, at.Add(time.Hour))
	if err := os.WriteFile(filepath.Join(runs.RunDir(sv.st.Dir(), bad), "run.json"), []byte(`{"version":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := request(t, sv, "GET", "/api/runs", sv.ro, "", ""); code != 200 || !strings.Contains(body, good) || !strings.Contains(body, `"unreadable":"1 runs could not be read`) {
		t.Fatalf("GET /api/runs with one record broken: %d %s", code, body)
	}
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.ro)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the readable run listed", `[...document.querySelectorAll("#runs tbody tr")].map(tr => tr.children[2].textContent).join() === "good run"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the note on the other", `document.getElementById("runs-note").textContent.includes(`+strconv.Quote(bad)+`)`, 30*time.Second)
}

// A session record that cannot be read hides no other, and the API and
// the page say which it is, as ls does: it was in no page, unseen.
func TestAnUnreadableSessionIsNamed(t *testing.T) {
	sv := serve(t)
	bad := sessionstest.SessionID(2)
	if err := os.WriteFile(sv.st.MetaPath(bad), []byte(`{"version":`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := request(t, sv, "GET", "/api/sessions", sv.ro, "", "")
	if code != 200 || !strings.Contains(body, sessionstest.SessionID(1)) || !strings.Contains(body, `"unreadable":"1 session record(s) could not be read`) || !strings.Contains(body, bad) {
		t.Fatalf("GET /api/sessions with one record broken: %d %s", code, body)
	}
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.ro)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the note on the unreadable record", `document.getElementById("sessions-note").textContent.includes(`+strconv.Quote(bad)+`)`, 30*time.Second)
}

// An answer to a run that asks nothing is the request's mistake, as runs
// answer's exit 2 says: 400, not 409.
func TestAnAnswerToARunThatAsksNothingIsABadRequest(t *testing.T) {
	sv := serve(t)
	id := "0199a213-81c0-7800-8aa1-000000000021"
	sv.writeRun(t, id, "done run", 3, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	if code, body := request(t, sv, "POST", "/api/runs/"+id+"/answer", sv.full, sv.base, `{"text":"1"}`); code != 400 || !strings.Contains(body, "asks nothing") {
		t.Fatalf("%d %s", code, body)
	}
}

// A server streams only so many runs' stories at once, each holding an
// inotify instance of the few a user has: one more is refused (503) until
// one ends. 116 of them left none to zwarm wait or the page's events.
func TestRunStoriesAreBounded(t *testing.T) {
	t.Parallel()
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	sv := serveOptions(t, st, web.Options{Token: web.NewToken(), ReadOnlyToken: web.NewToken(), MaxStories: 2})
	const id = "7c1e0000-0000-4000-8000-000000000002"
	sv.writeRun(t, id, "a run", 1, time.Now())
	open := func() *http.Response {
		t.Helper()
		res, err := http.Get(sv.base + "/api/runs/" + id + "/story?ticket=" + ticket(t, sv))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := open(), open()
	defer b.Body.Close()
	if a.StatusCode != 200 || b.StatusCode != 200 {
		t.Fatalf("two stories: %d %d", a.StatusCode, b.StatusCode)
	}
	c := open()
	body, _ := io.ReadAll(c.Body)
	c.Body.Close()
	if c.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "2 runs' stories are streamed already") {
		t.Fatalf("a third: %d %s", c.StatusCode, body)
	}
	a.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		d := open()
		d.Body.Close()
		if d.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("one ended, another still refused: %d", d.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
