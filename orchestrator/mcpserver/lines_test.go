package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zwarm/zwarm/sessions/config"
)

// The SDK answers nothing to a request whose id is null or is that of a
// request still under way, and takes 1.5 for 1: the client would wait
// for good, or take one answer for another. Each such line is answered
// with an error of its own, and the calls under way are answered.
func TestRequestIDsTheSDKWouldNotAnswer(t *testing.T) {
	release := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, Stdio(inR, outW)); outW.Close() }()
	answers := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not JSON: %q", sc.Text())
			}
			answers <- m
		}
		close(answers)
	}()
	send := func(line string) { io.WriteString(inW, line+"\n") }
	next := func() map[string]any {
		select {
		case m := <-answers:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer in 10 s")
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,    // 7 is under way
		`{"jsonrpc":"2.0","id":7.0,"method":"ping"}`,  // so is 7, spelt otherwise
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`, // a request the SDK would take for a notification
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,  // the SDK would answer it as 1
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
	} {
		send(bad)
		m := next()
		e, _ := m["error"].(map[string]any)
		if m["id"] != nil || e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "id") {
			t.Errorf("%s: answered %v, want an invalid request error naming the id", bad, m)
		}
	}
	send(`{"jsonrpc":"2.0","id":"7","method":"ping"}`) // a string is another id
	if m := next(); m["id"] != "7" || m["result"] == nil {
		t.Errorf(`ping "7" while 7 is under way: %v`, m)
	}
	close(release)
	if m := next(); m["id"] != float64(7) || m["result"] == nil {
		t.Errorf("the blocked call: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`) // 7 is answered: free again
	if m := next(); m["id"] != float64(7) || m["result"] == nil {
		t.Errorf("ping 7 once 7 was answered: %v", m)
	}
	inW.Close()
	if err := <-ran; err != nil && err != io.EOF {
		t.Logf("server: %v", err)
	}
}

// A wait called with no arguments, or null, waits the cap as one with {}
// does (and says nothing of a timeout it was not given).
func TestAWaitWithoutArgumentsWaitsTheCap(t *testing.T) {
	s := &Server{cfg: &Config{WaitCap: config.Duration{Duration: 50 * time.Second}}}
	for _, args := range []string{"", "null", " null ", "{}", `{"timeout_s": null}`} {
		var got map[string]any
		if err := json.Unmarshal(s.defaultTimeout(json.RawMessage(args)), &got); err != nil || got["timeout_s"] != float64(50) {
			t.Errorf("%q: %v (%v), want timeout_s 50", args, got, err)
		}
	}
	for _, args := range []string{`{"timeout_s": 5}`, `[1]`, `"x"`} {
		if got := string(s.defaultTimeout(json.RawMessage(args))); got != args {
			t.Errorf("%q became %q: the tool says what is wrong with it, or takes it as given", args, got)
		}
	}
}
