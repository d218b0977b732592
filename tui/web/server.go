package web

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions"
)

//go:embed static
var static embed.FS

// Options configure a Server.
type Options struct {
	Manager *sessions.Manager
	// Token may look and act; ReadOnlyToken, if set, only look.
	Token, ReadOnlyToken string
	Log                  *slog.Logger
	// Dir is where workers spawned from the page work ("": the current
	// directory).
	Dir string
	// IdleTimeout closes a connection that has asked nothing for that
	// long (0: a minute): connections that made a request, with or
	// without a token, and then sat open would use up the server's files.
	IdleTimeout time.Duration
	// BodyTimeout bounds how long an action's body may take to arrive (0:
	// 30 s): a client that sends it a byte at a time holds its handler and
	// its connection no longer.
	BodyTimeout time.Duration
	// MaxStories is how many runs' stories are streamed at once (0: 16):
	// each holds an inotify instance, of which a user has few.
	MaxStories int
}

// Server serves the page and its API.
type Server struct {
	opt     Options
	handler http.Handler
	tickets tickets
	hub     *hub
	stories chan struct{} // a token for each story streamed (MaxStories)
}

// New makes a server; Serve runs it.
func New(opt Options) (*Server, error) {
	if opt.Token == "" {
		return nil, errors.New("web: a server needs a token")
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.MaxStories <= 0 {
		opt.MaxStories = 16
	}
	s := &Server{opt: opt, hub: newHub(), stories: make(chan struct{}, opt.MaxStories)}
	files, _ := fs.Sub(static, "static")
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(files))
	s.api(mux)
	s.handler = secure(s.bounded(apiOnly(mux)))
	return s, nil
}

// Handler is the server's handler (for a test's server).
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on ln until ctx ends, feeding the pages' event streams from
// one subscription to the state dir; it returns once every request and
// the subscription are done.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tls func(net.Listener) net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.hub.run(ctx, s.opt.Manager, s.opt.Log)
	}()
	idle := s.opt.IdleTimeout
	if idle <= 0 {
		idle = time.Minute
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer stop()
		if srv.Shutdown(sctx) != nil {
			// A request still under way after the wait (a diff git is
			// slow to give) is cut off: Serve's caller is leaving.
			srv.Close()
		}
	}()
	if tls != nil {
		ln = tls(ln)
	}
	err := srv.Serve(ln)
	cancel()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
