package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
)

// client is an MCP client connected in memory to a server over a real
// state dir whose codex workers are the scripted fake agent.
type client struct {
	t  *testing.T
	w  *testenv.World
	cs *mcp.ClientSession

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	notified chan struct{} // closed and replaced at each notification
}

func connect(t *testing.T, cfg *Config, heartbeat time.Duration) *client {
	t.Helper()
	return connectTo(t, testenv.New(t, bins, ""), cfg, heartbeat)
}

// connectTo connects a client to a server over world w.
func connectTo(t *testing.T, w *testenv.World, cfg *Config, heartbeat time.Duration) *client {
	t.Helper()
	return connectWith(t, w, Options{Sessions: w.Manager, Dir: w.Work, Config: cfg, Heartbeat: heartbeat, Version: "test"})
}

// connectWith connects a client to a server of opt over world w.
func connectWith(t *testing.T, w *testenv.World, opt Options) *client {
	t.Helper()
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, w: w, notified: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.mcp.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			close(c.notified)
			c.notified = make(chan struct{})
			c.mu.Unlock()
		},
	})
	if c.cs, err = cl.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.cs.Close()
		ss.Wait()
	})
	return c
}

// call calls a tool with a deadline; with a token, it asks for progress.
func (c *client) call(name string, args any, token any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := c.cs.CallTool(ctx, p)
	if err != nil {
		c.t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// ok calls a tool that must succeed and decodes its JSON answer into out.
func (c *client) ok(name string, args any, out any) string {
	c.t.Helper()
	res := c.call(name, args, nil)
	if res.IsError {
		c.t.Fatalf("%s(%v) is an error: %s", name, args, text(res))
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text(res)), out); err != nil {
			c.t.Fatalf("%s: %v in %s", name, err, text(res))
		}
	}
	return text(res)
}

func (c *client) spawn(task string) string {
	c.t.Helper()
	var r struct {
		SessionID string `json:"session_id"`
	}
	c.ok("spawn", map[string]any{"task": task}, &r)
	if r.SessionID == "" {
		c.t.Fatal("spawn returned no session_id")
	}
	return r.SessionID
}

// awaitProgress blocks until n progress notifications have arrived.
func (c *client) awaitProgress(ctx context.Context, n int) []*mcp.ProgressNotificationParams {
	c.t.Helper()
	for {
		c.mu.Lock()
		got, wake := append([]*mcp.ProgressNotificationParams(nil), c.progress...), c.notified
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-wake:
		case <-ctx.Done():
			c.t.Fatalf("waiting for %d progress notifications: got %d", n, len(got))
		}
	}
}

type waitResult struct {
	Finished []struct {
		SessionID   string `json:"session_id"`
		Status      string `json:"status"`
		Turn        int    `json:"turn"`
		LastMessage string `json:"last_message"`
	} `json:"finished"`
	Running []struct {
		SessionID string `json:"session_id"`
	} `json:"running"`
	TimedOut bool   `json:"timed_out"`
	Note     string `json:"note"`
}
