package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions/record"
)

// Source is the source of every worker started over MCP.
var Source = record.Source{Kind: record.SourceMCP}

// DefaultHeartbeat is how often a blocking wait reports progress.
const DefaultHeartbeat = 5 * time.Second

// Options configure a Server.
type Options struct {
	Sessions tools.Sessions
	// Dir is the directory the server was started in: relative working
	// dirs start there, and workers may run in it and below (and in the
	// config's allowed_dirs).
	Dir string
	// Config is the [mcp] table (nil: the defaults).
	Config *Config
	// Log receives the server's log (nil: none). It must not write to
	// stdout, which carries the protocol.
	Log     *slog.Logger
	Version string
	// Heartbeat is how often a blocking wait tells a client that asked for
	// progress that it still waits (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// SeenPath, if set, is where what clients were shown of each worker
	// is kept from one server to the next (SeenFile in the state dir).
	SeenPath string
}

// Server serves the worker tools over MCP.
type Server struct {
	opt  Options
	cfg  *Config
	log  *slog.Logger
	seen *tools.Seen
	reg  *tools.Registry
	mcp  *mcp.Server
	// ended is Run's context: a call under way ends with it (the SDK
	// gives handlers a context of their own, which a signal does not
	// reach), so that a signal stops a landing's verify, not only the
	// reading of requests.
	ended atomic.Pointer[context.Context]
	// saving serializes keepSeen; saved is the snapshot it last wrote.
	saving sync.Mutex
	saved  map[string]time.Time
}

// keepSeen saves what the client has been shown, when that changed.
func (s *Server) keepSeen() {
	if s.opt.SeenPath == "" {
		return
	}
	s.saving.Lock()
	defer s.saving.Unlock()
	now := s.seen.Snapshot()
	if maps.Equal(now, s.saved) {
		return
	}
	if err := saveSeen(s.opt.SeenPath, s.seen); err != nil {
		s.log.Warn("keep what the client was shown", "err", err)
		return
	}
	s.saved = now
}

// New builds a server; Run serves it.
func New(opt Options) (*Server, error) {
	if opt.Sessions == nil {
		return nil, errors.New("mcp server: no session manager")
	}
	if !filepath.IsAbs(opt.Dir) {
		return nil, fmt.Errorf("mcp server: dir %q is not absolute", opt.Dir)
	}
	if fi, err := os.Stat(opt.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("mcp server: dir %s is not a directory", opt.Dir)
	}
	cfg := opt.Config
	if cfg == nil {
		cfg = DefaultConfig()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = DefaultHeartbeat
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var shown map[string]time.Time
	if opt.SeenPath != "" {
		shown = loadSeen(opt.SeenPath)
	}
	s := &Server{opt: opt, cfg: cfg, log: log, seen: tools.NewSeen(shown), saved: shown}
	reg, err := s.registry()
	if err != nil {
		return nil, err
	}
	s.reg = reg
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "zwarm", Title: "zwarm workers", Version: opt.Version},
		&mcp.ServerOptions{Instructions: s.instructions(), Logger: log})
	for _, t := range reg.Tools() {
		s.mcp.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema, Annotations: annotations[t.Name]},
			s.handler(t.Name))
	}
	return s, nil
}

// Run serves one client over t until it disconnects or ctx ends. Workers
// keep running after it returns.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.log.Info("mcp server starting", "dir", s.opt.Dir, "max_workers", s.cfg.MaxWorkers, "wait_cap", s.cfg.WaitCap.Duration)
	s.ended.Store(&ctx)
	err := s.mcp.Run(ctx, answerAll(t))
	s.log.Info("mcp server stopped", "err", err)
	return err
}

// registry holds the served tools: the orchestrator's worker tools, renamed.
func (s *Server) registry() (*tools.Registry, error) {
	byName := map[string]tools.Tool{}
	for _, t := range tools.Workers(s.workerOptions(nil)) {
		byName[t.Name] = t
	}
	reg, _ := tools.NewRegistry()
	for _, n := range names {
		t, ok := byName[n.orchestrator]
		if !ok {
			return nil, fmt.Errorf("mcp server: the orchestrator has no worker tool %q to serve as %s", n.orchestrator, n.mcp)
		}
		var override map[string]string
		if n.orchestrator == "wait" {
			t.Description += fmt.Sprintf(" Each call returns within %s (MCP clients give up on longer calls): "+
				"while timed_out is true, call wait again.", s.cfg.WaitCap.Duration)
			override = map[string]string{"timeout_s": fmt.Sprintf("Longest wait in seconds, from %g to %g (the default).",
				s.cfg.minWait().Seconds(), s.cfg.WaitCap.Seconds())}
			t.Handler = s.wait
		}
		st, err := served(t, n.mcp, override)
		if err != nil {
			return nil, fmt.Errorf("mcp server: %w", err)
		}
		if err := reg.Add(st); err != nil {
			return nil, fmt.Errorf("mcp server: %w", err)
		}
	}
	return reg, nil
}

// workerOptions are the worker tools' settings, with progress going to
// the given hook.
func (s *Server) workerOptions(progress func(tools.Progress)) tools.WorkerOptions {
	return tools.WorkerOptions{
		Sessions: s.opt.Sessions, Source: Source, Dir: s.opt.Dir, AllowedDirs: s.cfg.AllowedDirs,
		MaxWorkers: s.cfg.MaxWorkers, DefaultAdapter: s.cfg.Adapter, DefaultModel: s.cfg.Model,
		WaitCap: s.cfg.WaitCap.Duration, MinWait: s.cfg.minWait(), Seen: s.seen, Progress: progress,
		OnSpawn: func(_ context.Context, w *record.Session) {
			s.log.Info("worker spawned", "id", w.ID, "adapter", w.Adapter, "model", w.Model, "dir", w.WorkingDir)
		},
	}
}

// handler runs one served tool for a client. Whatever the tool answers,
// the call succeeds at the protocol level: a refusal is a result flagged
// isError, which the client shows its model.
func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		began := time.Now()
		if ended := s.ended.Load(); ended != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(*ended, cancel)()
		}
		p := newProgress(req, s.log)
		if p != nil && name != "wait" {
			// wait says what it waits for; any other call that takes
			// long (a landing's verify) says it still works.
			stop := p.heartbeat(ctx, s.opt.Heartbeat, func(_ context.Context, took time.Duration) string {
				return fmt.Sprintf("%s: still working after %s", adapt(name), took.Round(time.Second))
			})
			defer stop()
		}
		res := s.reg.Call(withProgress(ctx, p), name, req.Params.Arguments)
		s.keepSeen()
		if res.IsError {
			res.Text = adapt(res.Text)
			s.log.Info("tool call refused", "tool", name, "took", time.Since(began), "progress", p != nil, "answer", clip(res.Text, 500))
		} else {
			s.log.Info("tool call", "tool", name, "took", time.Since(began), "progress", p != nil)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, IsError: res.IsError}, nil
	}
}

func (s *Server) instructions() string {
	return fmt.Sprintf("zwarm runs coding agents (Codex, Claude Code) as supervised background workers. "+
		"spawn starts one on a self-contained task and returns its id at once; start several to work in parallel. "+
		"wait blocks until workers finish, %s at most per call: while timed_out is true, call it again. "+
		"show reads a worker's final message, files changed, usage and cost; get_trajectory what it did step by step; "+
		"inject sends a follow-up into its thread; kill stops it; list shows your workers. "+
		"Inside a git repository each worker works in a git worktree of its own, on branch zwarm/<id>: "+
		"diff shows its change, land commits it onto the branch checked out in %s (refusing a running worker or a conflict), "+
		"update merges that branch into the worker's when they conflict. "+
		"Workers run in %s and below; they keep running if this conversation ends.", s.cfg.WaitCap.Duration, s.opt.Dir, s.opt.Dir)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var yes, no = true, false

// annotations tell clients which tools only read.
var annotations = map[string]*mcp.ToolAnnotations{
	"spawn":          {Title: "Start a worker", DestructiveHint: &no, OpenWorldHint: &yes},
	"wait":           {Title: "Wait for workers", ReadOnlyHint: true},
	"show":           {Title: "Show a worker", ReadOnlyHint: true},
	"inject":         {Title: "Send a worker a follow-up", DestructiveHint: &no, OpenWorldHint: &yes},
	"list":           {Title: "List your workers", ReadOnlyHint: true},
	"kill":           {Title: "Stop a worker", DestructiveHint: &yes},
	"get_trajectory": {Title: "A worker's steps", ReadOnlyHint: true},
	"diff":           {Title: "A worker's change", ReadOnlyHint: true},
	// Landing commits onto the user's branch and updates its files, never
	// losing a change; landing again says it is landed already.
	"land":   {Title: "Land a worker's change", DestructiveHint: &no, IdempotentHint: true},
	"update": {Title: "Merge into a worker's branch", DestructiveHint: &no, OpenWorldHint: &yes},
}
