package web_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui/web"
)

func request(t testing.TB, sv *serving, method, path, token, origin, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, sv.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Every request needs a token in its header; a read-only one looks but
// does not act; a request that acts from another site is refused even
// with the full token; the event stream takes a ticket once.
func TestTheAPIsDoors(t *testing.T) {
	sv := serve(t)
	id := sessionstest.SessionID(1)
	for _, tc := range []struct {
		name, method, path, token, origin string
		code                              int
	}{
		{"no token", "GET", "/api/sessions", "", "", 401},
		{"a token in the URL is no token", "GET", "/api/sessions?token=" + sv.full, "", "", 401},
		{"a wrong token", "GET", "/api/sessions", "0123", "", 401},
		{"read-only looks", "GET", "/api/sessions/" + id, sv.ro, "", 200},
		{"read-only does not act", "POST", "/api/sessions/" + id + "/kill", sv.ro, sv.base, 403},
		{"another site does not act", "POST", "/api/sessions/" + id + "/kill", sv.full, "http://evil.example", 403},
		{"a follow-up without text", "POST", "/api/sessions/" + id + "/inject", sv.full, sv.base, 400},
		// Behind a proxy that ends TLS the page is https, the request
		// to zwarm plain http: it acts (it was refused, every action and
		// the live feed).
		{"the page behind a TLS proxy acts", "POST", "/api/sessions/" + id + "/inject", sv.full, "https://" + strings.TrimPrefix(sv.base, "http://"), 400},
		{"another https site does not act", "POST", "/api/sessions/" + id + "/kill", sv.full, "https://evil.example", 403},
		{"an origin that is no origin does not act", "POST", "/api/sessions/" + id + "/kill", sv.full, "null", 403},
		{"no such session", "GET", "/api/sessions/ffffffff", sv.full, "", 404},
		{"an id that is no id", "GET", "/api/sessions/..%2f..", sv.full, "", 400},
		{"the event stream without a ticket", "GET", "/api/events", "", "", 401},
		{"a cursor that is none", "GET", "/api/sessions?after=yesterday", sv.full, "", 400},
		{"a status that is none", "GET", "/api/sessions?status=bogus", sv.full, "", 400},
		{"a limit that is no number", "GET", "/api/sessions?limit=abc", sv.full, "", 400},
		{"a limit below one", "GET", "/api/sessions?limit=-5", sv.full, "", 400},
		{"a limit above the most", "GET", "/api/sessions?limit=6000", sv.full, "", 400},
		{"a status", "GET", "/api/sessions?status=completed", sv.full, "", 200},
		{"a run's story without a ticket", "GET", "/api/runs/" + id + "/story", sv.full, "", 401},
		// A run is answered as a session is.
		{"no such run", "GET", "/api/runs/0123abcd", sv.full, "", 404},
		{"a run id that is no id", "GET", "/api/runs/zz", sv.full, "", 400},
		{"an unreadable run", "GET", "/api/runs/" + unreadableRun(t, sv), sv.full, "", 500},
	} {
		if code, body := request(t, sv, tc.method, tc.path, tc.token, tc.origin, ""); code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.code)
		}
	}
	code, body := request(t, sv, "POST", "/api/stream", sv.ro, sv.base, "")
	var tk struct{ Ticket string }
	if json.Unmarshal([]byte(body), &tk); code != 200 || tk.Ticket == "" {
		t.Fatalf("a ticket: %d %s", code, body)
	}
	if code, _ := request(t, sv, "GET", "/api/events?ticket=bogus", "", "", ""); code != 401 {
		t.Errorf("a bogus ticket: %d", code)
	}
	// A body over the bound, a body that is not JSON, a path the API does
	// not have: each answered in JSON, with its own status.
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
	}{
		{"a follow-up over 1 MiB", "POST", "/api/sessions/" + id + "/inject", `{"text":"` + strings.Repeat("x", 1<<20) + `"}`, 413},
		{"a follow-up that is not JSON", "POST", "/api/sessions/" + id + "/inject", `text=hi`, 400},
		// A field the request does not take is refused, not ignored (a
		// spawn asked for "isolation" ran in a worktree all the same),
		// and so is anything after the object.
		{"a field the request does not take", "POST", "/api/spawn", `{"task":"t","working_dir":"/elsewhere"}`, 400},
		{"a misspelt field", "POST", "/api/sessions/" + id + "/inject", `{"txt":"hi"}`, 400},
		{"more after the object", "POST", "/api/sessions/" + id + "/inject", `{"text":"hi"} and more`, 400},
		{"two objects", "POST", "/api/runs/" + id + "/say", `{"text":"a"}{"text":"b"}`, 400},
		// Names are matched exactly, each once (a "TEXT" was taken for
		// the text, and the last of two won), and the body is an object.
		{"a field in capitals", "POST", "/api/sessions/" + id + "/inject", `{"text":"x","TEXT":"y"}`, 400},
		{"a spawn in capitals", "POST", "/api/spawn", `{"Task":"t"}`, 400},
		{"a field given twice", "POST", "/api/sessions/" + id + "/inject", `{"text":"x","text":"y"}`, 400},
		{"a null body", "POST", "/api/sessions/" + id + "/land", `null`, 400},
		{"an array body", "POST", "/api/sessions/" + id + "/land", `[]`, 400},
		// A kill takes no field: its body is checked all the same.
		{"a kill with a body that is not JSON", "POST", "/api/sessions/" + id + "/kill", `garbage{`, 400},
		{"a kill with a field", "POST", "/api/sessions/" + id + "/kill", `{"force":true}`, 400},
		{"a kill over 1 MiB", "POST", "/api/sessions/ffffffff/kill", `{"x":"` + strings.Repeat("x", 1<<20) + `"}`, 413},
		{"no such path", "GET", "/api/nothing", "", 404},
		{"an action's path looked at", "GET", "/api/sessions/" + id + "/kill", "", 405},
		{"a list put", "PUT", "/api/sessions", "", 405},
		{"a list deleted", "DELETE", "/api/sessions", "", 405},
		{"the event stream posted to", "POST", "/api/events", "", 405},
		{"no such path put", "PUT", "/api/nothing", "", 404},
		{"an action traced", "TRACE", "/api/sessions/" + id + "/kill", "", 405},
		{"a list asked its properties", "PROPFIND", "/api/sessions", "", 405},
		{"a story of what names no run", "GET", "/api/runs/a%20b/story?ticket=" + ticket(t, sv), "", 400},
	} {
		code, body := request(t, sv, tc.method, tc.path, sv.full, sv.base, tc.body)
		var answer struct{ Error string }
		if code != tc.code || json.Unmarshal([]byte(body), &answer) != nil || answer.Error == "" {
			t.Errorf("%s: %d %.200s, want %d with a JSON error", tc.name, code, body, tc.code)
		}
	}
	// The scheme is case-insensitive (RFC 9110); the token is not.
	for header, want := range map[string]int{"bearer " + sv.ro: 200, "BEARER " + sv.ro: 200, "Basic " + sv.ro: 401, "bearer " + strings.ToUpper(sv.ro): 401} {
		req, _ := http.NewRequest("GET", sv.base+"/api/sessions", nil)
		req.Header.Set("Authorization", header)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Authorization: %s…: %d, want %d", header[:8], res.StatusCode, want)
		}
	}
}

// The headers of every answer forbid inline script, framing and sniffing.
func TestTheHeadersOfACarefulWebApp(t *testing.T) {
	sv := serve(t)
	for _, path := range []string{"/", "/app.js", "/api/sessions"} {
		res, err := http.Get(sv.base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		h := res.Header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: %v", path, h)
		}
	}
}

// The page itself holds no script of its own inline, and no secret.
func TestThePageHasNoInlineScript(t *testing.T) {
	sv := serve(t)
	res, err := http.Get(sv.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(b)
	if strings.Count(page, "<script") != 1 || !strings.Contains(page, `<script src="app.js" defer></script>`) || strings.Contains(page, sv.full) {
		t.Fatalf("the page: %s", page)
	}
}

// unreadableRun makes a run whose record is not JSON and returns its id.
func unreadableRun(t *testing.T, sv *serving) string {
	t.Helper()
	const id = "7c1e0000-0000-4000-8000-000000000001"
	dir := filepath.Join(sv.st.Dir(), "runs", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{half"), 0o600); err != nil {
		t.Fatal(err)
	}
	return id
}

// ticket is a fresh ticket for a stream.
func ticket(t *testing.T, sv *serving) string {
	t.Helper()
	code, body := request(t, sv, "POST", "/api/stream", sv.ro, sv.base, "")
	var tk struct{ Ticket string }
	if json.Unmarshal([]byte(body), &tk); code != 200 || tk.Ticket == "" {
		t.Fatalf("a ticket: %d %s", code, body)
	}
	return tk.Ticket
}

// A connection that asked once and then sat open, with a token or none,
// is closed once idle for the idle timeout: 20,000 such used up the
// server's files, and the page could no longer reach it.
func TestAnIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	sv := serveOptions(t, st, web.Options{Token: web.NewToken(), IdleTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", strings.TrimPrefix(sv.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/nothing HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the request: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the idle connection: read %d, %v; want it closed", n, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("closed after %s", d)
	}
}

// An action's body that arrives too slowly is given up on (408), and a
// request refused before its body is read is answered all the same.
func TestAnActionsBodyHasADeadline(t *testing.T) {
	t.Parallel()
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	sv := serveOptions(t, st, web.Options{Token: web.NewToken(), BodyTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", strings.TrimPrefix(sv.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/sessions/ffffffff/kill HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nOrigin: %s\r\nContent-Length: 10\r\n\r\n{",
		strings.TrimPrefix(sv.base, "http://"), sv.full, sv.base)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a body that never came: %v %v", res, err)
	}
	// Refused before its body is read (no token): the server would wait
	// to read the body out before answering, and so hold the connection.
	c2, err := net.Dial("tcp", strings.TrimPrefix(sv.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "POST /api/sessions/ffffffff/kill HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err = http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without a token, its body never sent: %v %v", res, err)
	}
}
