package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

func server(t *testing.T) *fakemodel.Server {
	t.Helper()
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func client(srv *fakemodel.Server, retries int, onAttempt func(Attempt)) *OpenAI {
	return NewOpenAI(OpenAIOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-test", MaxRetries: retries,
		MaxRetryDelay: 5 * time.Second, OnAttempt: onAttempt})
}

func userItem(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}})
	return b
}

func call(t *testing.T, c Client, input ...json.RawMessage) (*Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Respond(ctx, &Request{Model: "gpt-test", Input: input,
		Tools: []Tool{{Name: "finish", Description: "end", Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)}}})
}

func TestRequestIsStatelessAndCarriesItemsVerbatim(t *testing.T) {
	srv := server(t)
	srv.On("task one", fakemodel.Reply{Text: "ok"})
	// An item with a field no SDK knows and odd spacing must reach the API
	// with that field.
	odd := json.RawMessage(`{"type":"reasoning","id":"rs_9","summary":[],"encrypted_content":"gAAA==","x_future":{"a":[1,2]}}`)
	if _, err := call(t, client(srv, 0, nil), userItem("task one"), odd, userItem("again task one")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"store": "false", "stream": "true", "include": `["reasoning.encrypted_content"]`, "model": `"gpt-test"`} {
		if got := string(body[key]); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	if _, ok := body["previous_response_id"]; ok {
		t.Error("previous_response_id was sent")
	}
	if !bytes.Contains(reqs[0].Body, odd) {
		t.Errorf("the reasoning item was not sent verbatim:\n%s", reqs[0].Body)
	}
	if !strings.Contains(string(body["tools"]), `"name":"finish"`) || !strings.Contains(string(body["tools"]), `"type":"function"`) {
		t.Errorf("tools: %s", body["tools"])
	}
}

func TestResponseItemsAreVerbatimWithUsage(t *testing.T) {
	srv := server(t)
	srv.On("do two things", fakemodel.Reply{Reasoning: "thinking", Encrypted: "enc-123",
		Calls: []fakemodel.Call{{Name: "a", Args: `{"x":1}`}, {Name: "b", Args: `{}`}},
		Extra: map[string]any{"x_new": "kept"}, InputTokens: 1000, CachedTokens: 400, OutputTokens: 50, ReasoningTokens: 20})
	r, err := call(t, client(srv, 0, nil), userItem("do two things"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 3 {
		t.Fatalf("%d items: %s", len(r.Output), r.Output)
	}
	var types []string
	for _, it := range r.Output {
		var v struct {
			Type, EncryptedContent, XNew string
		}
		json.Unmarshal(it, &v)
		types = append(types, v.Type)
		if !strings.Contains(string(it), `"x_new":"kept"`) {
			t.Errorf("unknown field dropped: %s", it)
		}
	}
	if strings.Join(types, ",") != "reasoning,function_call,function_call" {
		t.Errorf("types %v", types)
	}
	if !strings.Contains(string(r.Output[0]), `"encrypted_content":"enc-123"`) {
		t.Errorf("reasoning: %s", r.Output[0])
	}
	u := r.Usage
	if u.InputTokens != 1000 || u.CachedInputTokens != 400 || u.OutputTokens != 50 || u.ReasoningOutputTokens != 20 || u.TotalTokens != 1050 {
		t.Errorf("usage %+v", u)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	srv := server(t)
	fail := fakemodel.Reply{Status: 500, Header: map[string]string{"Retry-After-Ms": "1"}}
	srv.On("flaky", fail, fail, fail, fakemodel.Reply{Text: "finally"})
	var mu sync.Mutex
	var attempts []Attempt
	r, err := call(t, client(srv, 3, func(a Attempt) { mu.Lock(); attempts = append(attempts, a); mu.Unlock() }), userItem("flaky"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 1 || len(srv.Requests()) != 4 {
		t.Fatalf("%d items after %d requests", len(r.Output), len(srv.Requests()))
	}
	if len(attempts) != 3 || attempts[0].Status != 500 || attempts[2].N != 2 {
		t.Errorf("attempts %+v", attempts)
	}
}

func TestFinalErrorsCarryTheAPIMessage(t *testing.T) {
	srv := server(t)
	always := fakemodel.Reply{Status: 503, Body: `{"error":{"message":"overloaded, try later","type":"server_error"}}`, Header: map[string]string{"Retry-After": "0"}}
	srv.On("always down", always, always, always)
	srv.On("bad request", fakemodel.Reply{Status: 400, Body: `{"error":{"message":"Item 'fc_1' was provided without its required 'reasoning' item","type":"invalid_request_error"}}`})
	_, err := call(t, client(srv, 2, nil), userItem("always down"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || apiErr.Message != "overloaded, try later" {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests for 2 retries", n)
	}
	_, err = call(t, client(srv, 2, nil), userItem("bad request"))
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(err.Error(), "without its required 'reasoning' item") {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("a 400 was retried: %d requests", n)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv := server(t)
	srv.On("slow down", fakemodel.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}}, fakemodel.Reply{Text: "ok"})
	if _, err := call(t, client(srv, 1, nil), userItem("slow down")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 900*time.Millisecond {
		t.Errorf("retried after %v despite Retry-After: 1", gap)
	}
}

func TestBrokenStream(t *testing.T) {
	srv := server(t)
	srv.On("cut me", fakemodel.Reply{Reasoning: "r", Tool: "finish", Args: `{"summary":"x"}`, Cut: true})
	_, err := call(t, client(srv, 2, nil), userItem("cut me"))
	if !errors.Is(err, ErrStreamBroken) {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the SDK retried a stream that had started: %d requests", n)
	}
}

// An answer that is no event stream at all (a proxy's page, another API
// at base_url) says what it was, and is no broken stream to call again.
func TestAnAnswerThatIsNoStreamSaysWhatItIs(t *testing.T) {
	srv := server(t)
	srv.On("plain", fakemodel.Reply{Status: 200, Body: "this is not json"})
	_, err := call(t, client(srv, 2, nil), userItem("plain"))
	var ae *APIError
	if errors.Is(err, ErrStreamBroken) || !errors.As(err, &ae) || !strings.Contains(err.Error(), "answered with text/plain, not an event stream") {
		t.Fatalf("err %v", err)
	}
}

func TestCancelDuringCall(t *testing.T) {
	srv := server(t)
	gate := make(chan struct{})
	defer close(gate)
	srv.On("stall", fakemodel.Reply{Text: "late", Stall: gate})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := client(srv, 2, nil).Respond(ctx, &Request{Model: "m", Input: []json.RawMessage{userItem("stall")}})
		done <- err
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if _, err := srv.WaitRequests(wctx, 1); err != nil {
		t.Fatalf("the model request did not reach the server within a minute: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Respond should have returned context.Canceled; it returned %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Respond did not return within a minute of its context's cancel")
	}
}

// Each failed attempt says whether the SDK tries again, and what it says
// is what the server then sees: one more request, or none.
func TestAnAttemptSaysWhetherItIsRetried(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []fakemodel.Reply
		retries int
		want    []bool // Retried of each failed attempt
		why     string // the last one's NotRetried
	}{
		{"401", []fakemodel.Reply{{Status: 401, Body: `{"error":{"message":"bad key"}}`}}, 2, []bool{false}, ""},
		{"500 then ok", []fakemodel.Reply{{Status: 500, Header: map[string]string{"Retry-After-Ms": "1"}}, {Text: "ok"}}, 2, []bool{true}, ""},
		{"no retries left", []fakemodel.Reply{{Status: 503, Header: map[string]string{"Retry-After-Ms": "1"}}, {Status: 503, Header: map[string]string{"Retry-After-Ms": "1"}}}, 1, []bool{true, false},
			"its 1 retries are used up ([orchestrator] retries)"},
		{"Retry-After beyond the longest wait", []fakemodel.Reply{{Status: 429, Header: map[string]string{"Retry-After": "60"}}}, 2, []bool{false},
			"the server asks to wait longer than [orchestrator] retry_max_delay"},
		{"x-should-retry false", []fakemodel.Reply{{Status: 500, Header: map[string]string{"x-should-retry": "false"}}}, 2, []bool{false}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := server(t)
			srv.On("go", c.replies...)
			var mu sync.Mutex
			var got []bool
			var why string
			call(t, client(srv, c.retries, func(a Attempt) { mu.Lock(); got, why = append(got, a.Retried), a.NotRetried; mu.Unlock() }), userItem("go"))
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(got, c.want) {
				t.Errorf("retried %v, want %v", got, c.want)
			}
			// Why the last is not tried again, when the client would have.
			if c.why == "" && why != "" || !strings.HasPrefix(why, c.why) {
				t.Errorf("not retried because %q, want %q", why, c.why)
			}
			// Every failed attempt was a request; one said to be retried
			// last was followed by the request that succeeded.
			if n := len(srv.Requests()); n != len(got)+boolInt(len(got) > 0 && got[len(got)-1]) {
				t.Errorf("%d requests after attempts %v", n, got)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The client reads the environment the SDK's own client reads, and what
// zwarm's config gives wins over it.
func TestTheEnvironmentConfiguresTheClient(t *testing.T) {
	srv := server(t)
	srv.Fallback(fakemodel.Reply{Text: "ok"})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("OPENAI_ORG_ID", "org-1")
	t.Setenv("OPENAI_PROJECT_ID", "proj-1")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Team: infra\nX-Flag:on\nnot a header")
	if _, err := call(t, NewOpenAI(OpenAIOptions{}), userItem("hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, NewOpenAI(OpenAIOptions{APIKey: "sk-config"}), userItem("hi")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for name, want := range map[string]string{"Authorization": "Bearer sk-env", "Openai-Organization": "org-1",
		"Openai-Project": "proj-1", "X-Team": "infra", "X-Flag": "on"} {
		if got := reqs[0].Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := reqs[1].Header.Get("Authorization"); got != "Bearer sk-config" {
		t.Errorf("with a key configured, Authorization = %q, want the configured key", got)
	}
}
