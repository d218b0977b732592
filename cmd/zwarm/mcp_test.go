package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

// mcpConn is a raw JSON-RPC conversation with `zwarm mcp` over its stdin
// and stdout. Every line the server prints must be a protocol message.
type mcpConn struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte // stdout, line by line; closed at its end
	stderr bytes.Buffer
	id     int
	notes  []map[string]any // notifications received
}

func startMCP(t *testing.T, w *world, args ...string) *mcpConn {
	t.Helper()
	c := &mcpConn{t: t, lines: make(chan []byte, 64)}
	c.cmd = exec.Command(bins.zwarm, append(args, "mcp")...)
	c.cmd.Dir, c.cmd.Env, c.cmd.Stderr = w.Work, w.env(), &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		c.in.Close()
		if c.cmd.ProcessState == nil {
			c.exit(30 * time.Second)
		}
	})
	return c
}

// exit closes stdin, as a client that quits does, and returns the exit
// code; the server must end by itself within d.
func (c *mcpConn) exit(d time.Duration) int {
	c.t.Helper()
	c.in.Close()
	for range c.lines {
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			c.t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		c.cmd.Process.Kill()
		<-done
		c.t.Fatalf("zwarm mcp did not exit within %s of its stdin closing", d)
		return -1
	}
}

func (c *mcpConn) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and reads until its response, keeping the
// notifications that come before it.
func (c *mcpConn) call(ctx context.Context, method string, params any) json.RawMessage {
	c.t.Helper()
	c.id++
	c.send(map[string]any{"id": c.id, "method": method, "params": params})
	for {
		var line []byte
		var ok bool
		select {
		case line, ok = <-c.lines:
		case <-ctx.Done():
			c.t.Fatalf("%s: no answer (stderr: %s)", method, c.stderr.String())
		}
		if !ok {
			c.t.Fatalf("%s: the server closed stdout (stderr: %s)", method, c.stderr.String())
		}
		var m struct {
			JSONRPC string           `json:"jsonrpc"`
			ID      *int             `json:"id"`
			Method  string           `json:"method"`
			Result  json.RawMessage  `json:"result"`
			Error   *json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
			c.t.Fatalf("stdout carries something else than the protocol: %q", line)
		}
		switch {
		case m.ID == nil && m.Method != "":
			var n map[string]any
			json.Unmarshal(line, &n)
			c.notes = append(c.notes, n)
		case m.ID != nil && *m.ID == c.id && m.Error != nil:
			c.t.Fatalf("%s: protocol error %s", method, *m.Error)
		case m.ID != nil && *m.ID == c.id:
			return m.Result
		}
	}
}

// tool calls a tool and returns its text and isError.
func (c *mcpConn) tool(ctx context.Context, name string, args any, meta map[string]any) (string, bool) {
	c.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(c.call(ctx, "tools/call", params), &res); err != nil || len(res.Content) != 1 {
		c.t.Fatalf("%s: result %+v %v", name, res, err)
	}
	return res.Content[0].Text, res.IsError
}

func (c *mcpConn) initialize(ctx context.Context) {
	c.t.Helper()
	c.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	c.send(map[string]any{"method": "notifications/initialized"})
}

func TestMCPServesWorkersOverStdio(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := startMCP(t, w)
	c.initialize(ctx)
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	json.Unmarshal(c.call(ctx, "tools/list", map[string]any{}), &tools)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, " ") != "diff get_trajectory inject kill land list show spawn update wait" { // the SDK lists them sorted
		t.Fatalf("tools %v", names)
	}

	out, isErr := c.tool(ctx, "spawn", map[string]any{"task": "stdio task"}, nil)
	var sp struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(out), &sp); isErr || sp.SessionID == "" {
		t.Fatalf("spawn: %s", out)
	}
	out, isErr = c.tool(ctx, "wait", map[string]any{"session_ids": []string{sp.SessionID}}, map[string]any{"progressToken": "p1"})
	if isErr || !strings.Contains(out, `"last_message":"done"`) || !strings.Contains(out, `"timed_out":false`) {
		t.Fatalf("wait: %s", out)
	}
	out, isErr = c.tool(ctx, "show", map[string]any{"session_id": "no-such"}, nil)
	if !isErr || !strings.Contains(out, "spawn or list") {
		t.Fatalf("show of an unknown id: %v %s", isErr, out)
	}
	if code := c.exit(30 * time.Second); code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, c.stderr.String())
	}
	if c.stderr.Len() > 0 {
		t.Errorf("stderr: %s", c.stderr.String())
	}
	// The worker is an ordinary session, marked as started over MCP; the
	// server logged to the state dir.
	list := w.ls()
	if len(list) != 1 || list[0].ID != sp.SessionID || list[0].Source.String() != "mcp" || list[0].WorkingDir != w.Work {
		t.Fatalf("ls: %+v", list)
	}
	log, err := os.ReadFile(filepath.Join(w.State, "logs", "zwarm.log"))
	if err != nil || !bytes.Contains(log, []byte("mcp server starting")) || !bytes.Contains(log, []byte("tool=spawn")) {
		t.Fatalf("log: %v\n%s", err, log)
	}
}

func TestMCPRefusesABadConfig(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"[mcp]\nwait_cap = \"5s\"\n": "wait_cap is 5s: it must be from 10s",
		"[mcp]\nmax_worker = 3\n":    "max_worker",
		"[mcp]\nadapter = \"gpt\"\n": `[mcp] adapter: unknown adapter "gpt" (known: claude, codex)`,
	} {
		w := newWorld(t)
		os.MkdirAll(w.State, 0o700)
		writeFile(t, filepath.Join(w.State, "config.toml"), body)
		c := startMCP(t, w)
		if code := c.exit(30 * time.Second); code != cli.ExitUsage || !strings.Contains(c.stderr.String(), want) ||
			!strings.Contains(c.stderr.String(), "config.toml") {
			t.Errorf("%q: exit %d, stderr %q", body, code, c.stderr.String())
		}
	}
}

// A client that writes its requests and closes stdin at once (a script,
// a pipe) gets every answer before the server exits: the end of input
// ends the server only once what was read is answered. A line that is
// not a JSON-RPC message is answered with an error, and ends nothing.
func TestMCPAnswersEverythingReadBeforeEOF(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var in bytes.Buffer
	for _, m := range []map[string]any{
		{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "pipe", "version": "1"}}},
		{"method": "notifications/initialized"},
		{"id": 2, "method": "tools/list"},
		{"id": 3, "method": "tools/call", "params": map[string]any{"name": "spawn", "arguments": map[string]any{"task": "piped task"}}},
		{"id": 4, "method": "tools/call", "params": map[string]any{"name": "list", "arguments": map[string]any{}}},
	} {
		m["jsonrpc"] = "2.0"
		b, _ := json.Marshal(m)
		in.Write(append(b, '\n'))
		// Lines that are not JSON-RPC, among them, are answered with
		// errors and end nothing.
		in.WriteString("{bad\n" + "not json\n" + "{}\n" + "123\n" + "[]\n" + strings.Repeat("x", 17<<20) + "\n")
		// A batch, its ids repeated or not: MCP has none since
		// 2025-06-18, and one the SDK read would end the connection.
		in.WriteString(`[{"jsonrpc":"2.0","id":50,"method":"ping"},{"jsonrpc":"2.0","id":50,"method":"ping"}]` + "\n" +
			`[{"jsonrpc":"2.0","id":60,"method":"ping"}]` + "\n")
	}
	cmd := exec.Command(bins.zwarm, "mcp")
	cmd.Dir, cmd.Env, cmd.Stdin = w.Work, w.env(), &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zwarm mcp: %v\n%s", err, stderr.String())
	}
	var ids []string
	refused := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			ID     json.RawMessage     `json:"id"`
			Result json.RawMessage     `json:"result"`
			Error  *struct{ Code int } `json:"error"`
		}
		switch {
		case json.Unmarshal([]byte(line), &r) != nil:
			t.Fatalf("not JSON: %.300s", line)
		case r.Error != nil && string(r.ID) == "null":
			refused[r.Error.Code]++
		case r.Result == nil:
			t.Fatalf("not an answer: %.300s", line)
		default:
			ids = append(ids, string(r.ID))
		}
	}
	// Per request: two parse errors ({bad, not json), six invalid
	// requests ({}, 123, [], the line over 16 MiB, two batches).
	if refused[-32700] != 10 || refused[-32600] != 30 || len(refused) != 2 {
		t.Errorf("errors for the bad lines: %v, want 10 of -32700 and 30 of -32600", refused)
	}
	slices.Sort(ids) // calls may be answered in any order
	if strings.Join(ids, ",") != "1,2,3,4" {
		t.Fatalf("answered %v, want 1,2,3,4:\n%.2000s", ids, out)
	}
	if list := w.ls(); len(list) != 1 || list[0].Task != "piped task" {
		t.Fatalf("ls after the piped spawn: %+v", list)
	}
}
