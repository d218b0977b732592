// Package fakemodel is a scripted stand-in for the remote model APIs that
// zwarm's agents call: the OpenAI Responses API (codex, and zwarm's own
// orchestrator through the official Go SDK) and the Anthropic Messages API
// (claude), both as Server-Sent Events, on 127.0.0.1. Tests script the
// replies (text, reasoning with encrypted content, parallel function calls,
// usage, HTTP errors with headers such as Retry-After, stalls, streams cut
// midway) per conversation and inspect every request made. Only the remote
// model is fake: the clients, their tools and processes are real.
package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Reply is one model response.
type Reply struct {
	Text      string
	Reasoning string
	// Tool, with Args (JSON), makes the model call a tool: codex's
	// exec_command ({"cmd": ...}) or claude's Bash ({"command": ...}).
	Tool string
	Args string
	// Status, if set, answers with this HTTP error and Body instead.
	Status int
	Body   string
	// Stall holds the response until the channel is closed or the client
	// goes away.
	Stall <-chan struct{}

	// Calls are function calls made together in one response (parallel
	// tool calls), after Tool if that is set too. Responses API only.
	Calls []Call
	// ToolSearch, if set, is the query of a client-executed tool_search
	// call, made first: how a Responses model loads deferred tools (codex
	// defers every MCP server's tools behind it). Responses API only.
	ToolSearch string
	// Encrypted is the reasoning item's encrypted_content, as the API
	// returns it when asked to include reasoning.encrypted_content.
	Encrypted string
	// Extra fields are added to every output item, as a newer API would
	// send fields a client does not know.
	Extra map[string]any
	// Header is sent with the reply, e.g. Retry-After with an error.
	Header map[string]string
	// Cut breaks the connection after the output items were streamed and
	// before the response completed: a stream broken midway.
	Cut bool
	// Incomplete ends the response with response.incomplete and this
	// reason (e.g. "max_output_tokens") instead of response.completed.
	Incomplete string
	// Dynamic, if set, computes the reply when the request arrives, from
	// its body (to refer to ids a tool returned earlier, say).
	Dynamic func(body []byte) Reply
	// Usage reported with the response; zero values get small defaults.
	InputTokens, CachedTokens, OutputTokens, ReasoningTokens int64
}

// Call is one function call of a response.
type Call struct {
	Name string
	Args string // JSON
	// Namespace is the namespace of the function, for tools served in
	// one: codex serves an MCP server's tools as functions of the
	// namespace mcp__SERVER.
	Namespace string
	// CallID, if set, is the call's call_id instead of a fresh one: a
	// model that repeats one.
	CallID string
}

// Request is one request an agent made.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Time         time.Time
}

// Server is the fake. Replies are scripted per conversation: On(key, ...)
// queues replies for requests whose newest user message contains key.
type Server struct {
	URL string

	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	mu       sync.Mutex
	scripts  map[string][]Reply
	keys     []string
	fallback Reply
	requests []Request
	arrived  chan struct{} // closed and replaced when a request arrives
	seq      int
}

// Start serves on a free loopback port until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, done: make(chan struct{}),
		scripts: map[string][]Reply{}, fallback: Reply{Text: "done"}, arrived: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("/", s.other)
	s.srv = &http.Server{Handler: mux}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.srv.Close()
	<-s.done
}

// On queues replies for the conversation whose newest user message contains
// key. Once they are used up, that conversation gets the fallback reply.
func (s *Server) On(key string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.scripts[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.scripts[key] = append(s.scripts[key], replies...)
}

// Fallback sets the reply for requests no script matches.
func (s *Server) Fallback(r Reply) {
	s.mu.Lock()
	s.fallback = r
	s.mu.Unlock()
}

// Requests returns every model request so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// next records the request and picks its reply: the script of the key that
// appears last in the user text of the request (the newest user message of
// a resumed conversation comes after the older ones). A Dynamic reply is
// computed after the server's lock is released, so it may call the server.
func (s *Server) next(r *http.Request, body []byte, userText string) (Reply, int) {
	rep, n := s.pick(r, body, userText)
	if rep.Dynamic != nil {
		rep = rep.Dynamic(body)
	}
	return rep, n
}

func (s *Server) pick(r *http.Request, body []byte, userText string) (Reply, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Time: time.Now()})
	s.seq++
	best, at := "", -1
	for _, k := range s.keys {
		if i := strings.LastIndex(userText, k); i > at {
			best, at = k, i
		}
	}
	if at < 0 || len(s.scripts[best]) == 0 {
		return s.fallback, s.seq
	}
	rep := s.scripts[best][0]
	s.scripts[best] = s.scripts[best][1:]
	return rep, s.seq
}

// record keeps a request and wakes WaitRequests. Callers hold s.mu.
func (s *Server) record(r Request) {
	s.requests = append(s.requests, r)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// WaitRequests blocks until at least n requests have arrived (of any kind)
// or ctx ends, and returns them.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		if len(s.requests) >= n {
			out := append([]Request(nil), s.requests...)
			s.mu.Unlock()
			return out, nil
		}
		wake := s.arrived
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d model requests: %w", n, ctx.Err())
		}
	}
}

// Pending reports how many scripted replies of key are still queued.
func (s *Server) Pending(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scripts[key])
}

// stall waits for the reply's gate or the client's departure; it reports
// whether to go on answering.
func stall(r *http.Request, rep Reply) bool {
	if rep.Stall == nil {
		return true
	}
	select {
	case <-rep.Stall:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.record(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Time: time.Now()})
	s.mu.Unlock()
	http.NotFound(w, r)
}

// sse writes one Server-Sent Event and flushes it.
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	var buf bytes.Buffer
	buf.WriteString("event: " + event + "\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	w.Write(buf.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}
