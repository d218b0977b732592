package web_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui/web"
	"github.com/zwarm/zwarm/tui/web/webtest"
)

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
	return serveStore(t, st)
}

// serveStore is zwarm serve over st, stopped when the test ends.
func serveStore(t testing.TB, st *state.Store) *serving {
	t.Helper()
	return serveTokens(t, st, web.NewToken(), web.NewToken())
}

// serveTokens is serveStore with the tokens given (serve --token).
func serveTokens(t testing.TB, st *state.Store, full, ro string) *serving {
	t.Helper()
	return serveOptions(t, st, web.Options{Token: full, ReadOnlyToken: ro})
}

// serveOptions is zwarm serve over st with opt (its Manager made here).
func serveOptions(t testing.TB, st *state.Store, opt web.Options) *serving {
	t.Helper()
	sv := &serving{st: st, full: opt.Token, ro: opt.ReadOnlyToken}
	opt.Manager = sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	srv, err := web.New(opt)
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

// The page lists the sessions; a task that is markup is text, and nothing
// of it runs; a session's story follows its record within a second.
func TestThePageInABrowser(t *testing.T) {
	sv := serve(t)
	id := sv.addHostile(t)
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.full)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the four sessions listed", `document.querySelectorAll("#sessions tbody tr").length === 4`, 30*time.Second)
	pwned := webtest.Eval[string](t, ctx, `String(window.pwned)`)
	shown := webtest.Eval[string](t, ctx, `[...document.querySelectorAll("td.task")].map(td => td.textContent).find(t => t.includes("script")) || ""`)
	address := webtest.Eval[string](t, ctx, `location.href`)
	if pwned != "undefined" || shown != hostile {
		t.Fatalf("a task of markup: window.pwned=%s, shown as %q", pwned, shown)
	}
	one, err := sv.st.Load(sessionstest.SessionID(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := webtest.Eval[string](t, ctx, `document.querySelector('tr[data-id="`+one.ID+`"]').children[4].textContent`); got != one.ChangesText() || got == "" {
		t.Errorf("the CHANGES cell says %q, zwarm ls %q", got, one.ChangesText())
	}
	cells := webtest.Eval[string](t, ctx, `[...document.querySelector('tr[data-id="`+one.ID+`"]').children].slice(5, 7).map(td => td.textContent).join(" ")`)
	if want := render.SessionTokens(one) + " " + render.SessionCost(one); cells != want || strings.Contains(cells, "undefined") {
		t.Errorf("the TOKENS and COST cells say %q, zwarm ls %q", cells, want)
	}
	if strings.Contains(address, sv.full) {
		t.Fatalf("the token stayed in the address bar: %s", address)
	}
	shot := webtest.Screenshot(t, ctx, "web-list")

	// The story follows the record.
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+id+`"]`), "the session selected", `state.selected === "`+id+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the session's story", `document.getElementById("detail-title").textContent.includes("completed")`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the event stream", `document.getElementById("live").textContent === "live"`, 30*time.Second)
	s, err := sv.st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	sessionstest.SetStatus(s, record.StatusFailed)
	s.Error = "failed for the test"
	// A settled record is rewritten as zwarm rewrites one (a landing, say):
	// with the listing's generation advanced.
	if err := sv.st.BumpGeneration(t.Context(), func() error { return sv.st.Save(s) }); err != nil {
		t.Fatal(err)
	}
	took := webtest.WaitFor(t, ctx, "the story to show the change", `document.getElementById("detail-title").textContent.includes("failed")`, 30*time.Second)
	if took > time.Second {
		t.Errorf("the change reached the page in %s, want within a second", took)
	}
	t.Logf("a record's change reached the page in %s; screenshots %s, %s", took.Round(time.Millisecond), shot, webtest.Screenshot(t, ctx, "web-story"))
}

// Text that would display as something it is not is shown escaped, as a
// terminal shows it: a bidi override that turns "fdp.exe" into what
// reads as "exe.pdf", and control characters; the JSON keeps them as
// they are.
func TestTextThatWouldReadOtherwiseIsShownEscaped(t *testing.T) {
	sv := serve(t)
	sessionstest.WriteSettledRecord(t, sv.st, 4)
	s, err := sv.st.Load(sessionstest.SessionID(4))
	if err != nil {
		t.Fatal(err)
	}
	s.Task = "open invoice\u202efdp.exe\x1b[8m now\r\tdone"
	s.Turns[0].Prompt = s.Task
	if err := sv.st.Save(s); err != nil {
		t.Fatal(err)
	}
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.full)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the four sessions listed", `document.querySelectorAll("#sessions tbody tr").length === 4`, 30*time.Second)
	cell := `document.querySelector('tr[data-id="` + s.ID + `"] td.task').textContent`
	if got, want := webtest.Eval[string](t, ctx, cell), `open invoice\u202efdp.exe\x1b[8m now\x0d`+"\tdone"; got != want {
		t.Fatalf("the task is shown as %q, want %q", got, want)
	}
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+s.ID+`"]`), "the session selected", `state.selected === "`+s.ID+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the session's story", `document.getElementById("detail-title").textContent.includes("completed")`, 30*time.Second)
	story := webtest.Eval[string](t, ctx, `document.getElementById("detail-pane").textContent`)
	if strings.ContainsAny(story, "\u202e\x1b\r") || !strings.Contains(story, `invoice\u202efdp.exe`) {
		t.Fatalf("the story shows the task's controls raw: %q", story)
	}
}

// A token of the person's choosing (serve --token), whatever characters
// it has, works from the link serve prints for it.
func TestTheLinkOfAChosenTokenWorks(t *testing.T) {
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	sessionstest.WriteSettledRecord(t, st, 1)
	sv := serveTokens(t, st, "Our Team_token+/=&x?1", "")
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(web.Link(sv.base, sv.full))); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the session listed", `document.querySelectorAll("#sessions tbody tr").length === 1`, 30*time.Second)
}

// A read-only link shows everything and changes nothing: the page offers
// no action, and an action asked for anyway is refused.
func TestAReadOnlyLinkCannotAct(t *testing.T) {
	sv := serve(t)
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.ro)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the sessions listed", `document.querySelectorAll("#sessions tbody tr").length === 3`, 30*time.Second)
	id := sessionstest.SessionID(1)
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+id+`"]`), "the session selected", `state.selected === "`+id+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the story", `document.getElementById("detail-title").textContent.includes("completed")`, 30*time.Second)
	hidden := webtest.Eval[bool](t, ctx, `document.getElementById("actions").hidden`)
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/api/sessions/`+id+`/kill", {method: "POST", headers: {Authorization: "Bearer `+sv.ro+`"}}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !hidden || status != http.StatusForbidden {
		t.Fatalf("read-only: actions hidden %v, a kill answered %d", hidden, status)
	}
}

// The first screen is a page of the newest sessions; the next loads as the
// reader scrolls to the end of the list, until there are no more. Sessions
// removed from the first page meanwhile take none of the next page's with
// them (a page begins after the last one shown, not at a count).
func TestTheListLoadsAsItIsScrolled(t *testing.T) {
	sv := serve(t)
	for i := 4; i <= 450; i++ {
		sessionstest.WriteSettledRecord(t, sv.st, i)
	}
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.full)); err != nil {
		t.Fatal(err)
	}
	rows := `document.querySelectorAll("#sessions tbody tr").length`
	webtest.WaitFor(t, ctx, "the first page", rows+` === 200`, 30*time.Second)
	if first := webtest.Eval[string](t, ctx, `document.querySelector("#sessions tbody tr").dataset.id`); first != sessionstest.SessionID(450) {
		t.Errorf("the first row is %s, want the newest", first)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: sv.st})
	for i := 446; i <= 450; i++ {
		if _, err := m.Remove(context.Background(), sessionstest.SessionID(i), false); err != nil {
			t.Fatal(err)
		}
	}
	// Gone from the page by their removed events, or by the list read
	// again (a stream starts with a resync, which may come after them):
	// either way none is shown, and the first page is whole.
	gone := `![...document.querySelectorAll("#sessions tbody tr")].some(r => ["` + strings.Join([]string{sessionstest.SessionID(446),
		sessionstest.SessionID(447), sessionstest.SessionID(448), sessionstest.SessionID(449), sessionstest.SessionID(450)}, `","`) + `"].includes(r.dataset.id))`
	webtest.WaitFor(t, ctx, "the removed rows gone", gone+` && `+rows+` >= 195`, 30*time.Second)
	for _, want := range []string{"395", "445"} {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("more").scrollIntoView()`)); err != nil {
			t.Fatal(err)
		}
		webtest.WaitFor(t, ctx, want+" rows", rows+` >= `+want, 30*time.Second)
	}
	if n := webtest.Eval[int](t, ctx, rows); n != 445 || !webtest.Eval[bool](t, ctx, `document.getElementById("more").hidden`) {
		t.Errorf("%d rows shown of 445; a list that has it all must not offer more", n)
	}
}

// A session that changes while the list is filtered is listed only if it
// passes the filter, as the server filters a page: every new session
// used to join the filtered list.
func TestTheFilterHoldsAsSessionsChange(t *testing.T) {
	sv := serve(t)
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.ro)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the event stream", `document.getElementById("live").textContent === "live"`, 30*time.Second)
	webtest.Type(t, ctx, "#filter", "task 1")
	tasks := `[...document.querySelectorAll("#sessions td.task")].map(td => td.textContent).sort().join("; ")`
	webtest.WaitFor(t, ctx, "the filtered list", tasks+` === "task 1"`, 30*time.Second)
	for _, i := range []int{4, 10} { // task 4 does not pass, task 10 does
		if err := sv.st.BumpGeneration(t.Context(), func() error { sessionstest.WriteSettledRecord(t, sv.st, i); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	webtest.WaitFor(t, ctx, "the new session that passes", tasks+`.includes("task 10")`, 30*time.Second)
	if got := webtest.Eval[string](t, ctx, tasks); got != "task 1; task 10" {
		t.Fatalf("filtered by %q, the list holds %q", "task 1", got)
	}
}

// A session whose record cannot be read, chosen after another, shows as
// such, with no button: the pane kept the other's story and buttons, which
// then acted on the session chosen.
func TestAnUnreadableSessionChosenShowsNothingOfTheLast(t *testing.T) {
	sv := serve(t)
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/#token="+sv.full)); err != nil {
		t.Fatal(err)
	}
	one, two := sessionstest.SessionID(1), sessionstest.SessionID(2)
	webtest.WaitFor(t, ctx, "the sessions listed", `document.querySelectorAll("#sessions tbody tr").length === 3`, 30*time.Second)
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+one+`"]`), "the session selected", `state.selected === "`+one+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the first session's story", `document.getElementById("detail-title").textContent === "`+one[:8]+` · completed" && !document.getElementById("actions").hidden`, 30*time.Second)
	if err := os.WriteFile(filepath.Join(sv.st.SessionDir(two), "meta.json"), []byte(`{"version":`), 0o600); err != nil {
		t.Fatal(err)
	}
	webtest.ClickUntil(t, ctx, chromedp.CSS(`tr[data-id="`+two+`"]`), "the session selected", `state.selected === "`+two+`"`, 30*time.Second)
	webtest.WaitFor(t, ctx, "the second said unreadable, its buttons hidden", `document.getElementById("detail-title").textContent === "`+two[:8]+` · could not be read" && document.getElementById("actions").hidden && document.getElementById("story").children.length === 0`, 30*time.Second)
}

// The printed link opened in a tab already on the page (a fragment
// change, which reloads nothing) takes its token: the page stayed asking
// for one, with the token left in the address bar.
func TestTheLinkOpenedInATabOnThePageTakesItsToken(t *testing.T) {
	sv := serve(t)
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(sv.base+"/")); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the page to ask for a token", `document.getElementById("live").textContent.startsWith("no token")`, 30*time.Second)
	webtest.Eval[string](t, ctx, `location.hash = "token=`+sv.full+`"`)
	webtest.WaitFor(t, ctx, "the sessions listed with the token", `document.querySelectorAll("#sessions tbody tr").length === 3 && !location.href.includes("token")`, 30*time.Second)
}
