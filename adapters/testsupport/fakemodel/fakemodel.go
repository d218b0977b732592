// Package fakemodel is a scripted stand-in for the remote model APIs the
// agent CLIs call: the OpenAI Responses API (codex) and the Anthropic
// Messages API (claude), both as Server-Sent Events, on 127.0.0.1. Tests
// script the replies (text, reasoning, tool calls, HTTP errors, stalls) per
// conversation and inspect every request the agents made. Only the remote
// model is fake: the agents, their tools and processes are real.
package fakemodel

import (
	"bytes"
	"encoding/json"
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
	// Usage reported with the response; zero values get small defaults.
	InputTokens, CachedTokens, OutputTokens, ReasoningTokens int64
}

// Request is one request an agent made.
type Request struct {
	Method, Path string
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
	seq      int
}

// Start serves on a free loopback port until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, done: make(chan struct{}),
		scripts: map[string][]Reply{}, fallback: Reply{Text: "done"}}
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
// a resumed conversation comes after the older ones).
func (s *Server) next(r *http.Request, body []byte, userText string) (Reply, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Body: body, Time: time.Now()})
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
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Body: body, Time: time.Now()})
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
