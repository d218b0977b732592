package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// These tests run the real Claude Code and Codex CLIs as the orchestrator,
// with zwarm mcp registered as their MCP server the way a user does it:
// only the remote model is fake (it plays the orchestrating model) and so
// is the worker's agent (the scripted fake agent).

// mcpTools are the served tools as both CLIs name them for their model.
var mcpTools = []string{"mcp__zwarm__diff", "mcp__zwarm__get_trajectory", "mcp__zwarm__inject", "mcp__zwarm__kill",
	"mcp__zwarm__land", "mcp__zwarm__list", "mcp__zwarm__show", "mcp__zwarm__spawn", "mcp__zwarm__update", "mcp__zwarm__wait"}

// mcpWorld is a world whose fake worker is found through config.toml, as
// the MCP server (started by the CLI, with the CLI's environment) finds
// it, and a fake model for the orchestrating CLI.
func mcpWorld(t *testing.T) (w *world, srv *fakemodel.Server, env []string, codex, claude string) {
	t.Helper()
	codex, claude = realAgents(t)
	w = newWorld(t)
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	root := filepath.Dir(w.State)
	worker := filepath.Join(root, "worker-agent")
	writeFile(t, worker, fmt.Sprintf("#!/bin/sh\nFAKEAGENT_SCRIPT=%s exec %s \"$@\"\n", shellWord(w.ScriptFile), shellWord(bins.fake)))
	os.Chmod(worker, 0o700)
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), fmt.Sprintf("kill_grace = \"1s\"\n[adapters.codex]\nbinary = %q\n", worker))
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(home, "codex"), 0o700)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "ZWARM_") && !strings.HasPrefix(e, "FAKEAGENT_") {
			env = append(env, e)
		}
	}
	env = append(env, "HOME="+home, "CODEX_HOME="+filepath.Join(home, "codex"), "MOCK_KEY=dummy",
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "IS_SANDBOX=1", "CLAUDE_CODE_MAX_RETRIES=1",
		// In print mode Claude Code connects MCP servers in the background:
		// its first model request offers zwarm's tools only if zwarm mcp
		// answered in time. A real model calls only the tools it is offered;
		// the fake one calls them regardless, so the CLI waits for the
		// server first, as docs/mcp.md tells a user scripting it to.
		"MCP_CONNECTION_NONBLOCKING=false")
	return w, srv, env, codex, claude
}

// orchestratorCommand is the CLI run on a prompt with zwarm mcp as its
// MCP server zwarm: claude with --mcp-config, codex with mcp_servers
// overrides (what `claude mcp add` and `codex mcp add` write).
func orchestratorCommand(ctx context.Context, kind, bin string, w *world, srv *fakemodel.Server, prompt string, extra ...string) *exec.Cmd {
	return orchestratorServedBy(ctx, bins.zwarm, kind, bin, w, srv, prompt, extra...)
}

// orchestratorServedBy is orchestratorCommand with zwarm as the program
// that serves it.
func orchestratorServedBy(ctx context.Context, zwarm, kind, bin string, w *world, srv *fakemodel.Server, prompt string, extra ...string) *exec.Cmd {
	server := []string{"--state-dir", w.State, "mcp"}
	var cmd *exec.Cmd
	switch kind {
	case "claude":
		cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"zwarm": map[string]any{"command": zwarm, "args": server}}})
		cmd = exec.CommandContext(ctx, bin, "-p", "--output-format", "stream-json", "--verbose", "--strict-mcp-config",
			"--mcp-config", string(cfg), "--allowedTools", "mcp__zwarm")
	case "codex":
		args, _ := json.Marshal(server)
		cmd = exec.CommandContext(ctx, bin, "-c", `model_provider="mock"`, "-c", `model_providers.mock.name="mock"`,
			"-c", fmt.Sprintf("model_providers.mock.base_url=%q", srv.URL+"/v1"), "-c", `model_providers.mock.wire_api="responses"`,
			"-c", `model_providers.mock.env_key="MOCK_KEY"`, "-c", "model_providers.mock.request_max_retries=0",
			"-c", fmt.Sprintf("mcp_servers.zwarm.command=%q", zwarm), "-c", "mcp_servers.zwarm.args="+string(args),
			// codex exec asks for no approval: zwarm's tools must be approved.
			"-c", `mcp_servers.zwarm.default_tools_approval_mode="approve"`,
			"exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.5")
	}
	cmd.Args = append(append(cmd.Args, extra...), "--", prompt)
	cmd.Dir = w.Work
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// mcpCall is the model calling a zwarm tool, in the name each CLI gives
// it: claude's mcp__zwarm__TOOL, codex's TOOL in the namespace mcp__zwarm.
func mcpCall(kind, tool, args string) fakemodel.Reply {
	if kind == "codex" {
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: tool, Namespace: "mcp__zwarm", Args: args}}}
	}
	return fakemodel.Reply{Tool: "mcp__zwarm__" + tool, Args: args}
}

// findTools is what the model does first to reach zwarm's tools: codex
// defers MCP tools behind its tool search; claude lists them at once.
func findTools(kind string) []fakemodel.Reply {
	if kind == "codex" {
		return []fakemodel.Reply{{ToolSearch: "zwarm spawn and wait for workers"}}
	}
	return nil
}

// resultJSON reads a tool's JSON answer out of its result text (codex
// puts a "Wall time" header before it).
func resultJSON(text string, into any) error {
	i := strings.Index(text, "{")
	if i < 0 {
		return fmt.Errorf("no JSON in %q", text)
	}
	return json.Unmarshal([]byte(text[i:]), into)
}

// lastResult is the newest result of the named tool in a request body.
func lastResult(body []byte, name string) (fakemodel.ToolResult, bool) {
	rs := fakemodel.ToolResults(body)
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Name() == name {
			return rs[i], true
		}
	}
	return fakemodel.ToolResult{}, false
}

// The orchestrating agent spawns a worker through zwarm mcp, waits for it,
// and its next model request carries the worker's result.
func TestRealAgentDelegatesOverMCP(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"claude", "codex"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w, srv, env, codex, claude := mcpWorld(t)
			bin := map[string]string{"claude": claude, "codex": codex}[kind]
			w.setScript(fakeagent.Completes("done", 700), "compute the answer",
				append([]fakeagent.Step{{"sleep_ms": 1500}}, fakeagent.Completes("the answer is 42", 500)...))

			call := func(tool, args string) fakemodel.Reply { return mcpCall(kind, tool, args) }
			replies := append(findTools(kind), call("spawn", `{"task":"compute the answer"}`),
				fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
					var sp struct {
						SessionID string `json:"session_id"`
					}
					r, _ := lastResult(body, "mcp__zwarm__spawn")
					if err := resultJSON(r.Output, &sp); err != nil {
						return fakemodel.Reply{Text: "spawn gave no id: " + r.Output}
					}
					return call("wait", fmt.Sprintf(`{"session_ids":[%q],"timeout_s":45}`, sp.SessionID))
				}},
				fakemodel.Reply{Text: "the worker found the answer"})
			srv.On("delegate the answer", replies...)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := orchestratorCommand(ctx, kind, bin, w, srv, "delegate the answer to a worker and report it")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", kind, err, out)
			}
			if !strings.Contains(string(out), "the worker found the answer") {
				t.Fatalf("%s did not finish with the model's answer:\n%s", kind, out)
			}

			// The CLI showed its model zwarm's tools under these names.
			reqs := srv.Requests()
			// Claude lists them all; codex shows what its tool search found
			// for the query, spawn and wait among them.
			exposed := exposedTools(kind, reqs)
			subset := slices.Contains(exposed, "mcp__zwarm__spawn") && slices.Contains(exposed, "mcp__zwarm__wait")
			for _, e := range exposed {
				subset = subset && slices.Contains(mcpTools, e)
			}
			if kind == "claude" && !slices.Equal(exposed, mcpTools) || !subset {
				t.Errorf("%s exposes %v, want %v", kind, exposed, mcpTools)
			}
			// The request right after the wait call carries its result: the
			// worker's last message.
			next := -1
			for i, r := range reqs {
				if _, ok := lastResult(r.Body, "mcp__zwarm__wait"); ok {
					next = i
					break
				}
			}
			if next < 0 {
				t.Fatalf("no request carries wait's result; %d requests:\n%s", len(reqs), out)
			}
			r, _ := lastResult(reqs[next].Body, "mcp__zwarm__wait")
			var wr struct {
				Finished []struct {
					SessionID string `json:"session_id"`
					Status    string `json:"status"`
				} `json:"finished"`
				TimedOut bool `json:"timed_out"`
			}
			if err := resultJSON(r.Output, &wr); err != nil || r.IsError || wr.TimedOut || len(wr.Finished) != 1 ||
				wr.Finished[0].Status != "completed" || !strings.Contains(r.Output, "the answer is 42") {
				t.Fatalf("wait's result as the model got it: %q (%v)", r.Output, err)
			}

			// The worker is a zwarm session, started over MCP in the
			// directory the CLI ran in.
			list := w.ls()
			if len(list) != 1 || list[0].ID != wr.Finished[0].SessionID || list[0].Source != (record.Source{Kind: record.SourceMCP}) ||
				list[0].Status() != record.StatusCompleted || list[0].LastMessage != "the answer is 42" || list[0].WorkingDir != w.Work {
				t.Fatalf("sessions: %+v", list)
			}
			// The CLI stopped its server when it quit.
			sessionstest.Eventually(t, "zwarm mcp to exit", func() bool { return len(mcpServers(w.State)) == 0 })
		})
	}
}

// A worker that outlasts the client's tool timeout: wait returns before
// it (wait_cap) with timed_out and what still runs, the model waits again,
// and the second wait brings the result. No call fails.
func TestRealAgentOverMCPWaitsAgainAfterATimedOutWait(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"claude", "codex"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w, srv, env, codex, claude := mcpWorld(t)
			bin := map[string]string{"claude": claude, "codex": codex}[kind]
			f, err := os.OpenFile(filepath.Join(w.State, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			// A cap below the shortest one can set (10 s), served by a
			// zwarm that allows it, so that the test waits less.
			fmt.Fprintln(f, "[mcp]\nwait_cap = \"4s\"")
			f.Close()
			gate := filepath.Join(t.TempDir(), "gate")
			w.setScript(fakeagent.Completes("done", 700), "slow task",
				append([]fakeagent.Step{{"wait_file": gate}}, fakeagent.Completes("slow answer", 500)...))
			replies := append(findTools(kind), mcpCall(kind, "spawn", `{"task":"slow task"}`),
				mcpCall(kind, "wait", `{}`),
				// The model reads timed_out and waits again; the worker
				// can finish now.
				fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
					os.WriteFile(gate, nil, 0o600)
					return mcpCall(kind, "wait", `{}`)
				}},
				fakemodel.Reply{Text: "got the slow answer"})
			srv.On("run the slow task", replies...)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			// The client gives a tool call 15s: less than the
			// orchestrator's wait, more than the cap.
			var cmd *exec.Cmd
			if kind == "codex" {
				cmd = orchestratorServedBy(ctx, bins.quickWaits, kind, bin, w, srv, "run the slow task", "-c", "mcp_servers.zwarm.tool_timeout_sec=15")
				cmd.Env = env
			} else {
				cmd = orchestratorServedBy(ctx, bins.quickWaits, kind, bin, w, srv, "run the slow task")
				cmd.Env = append(env, "MCP_TOOL_TIMEOUT=15000")
			}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "got the slow answer") {
				t.Fatalf("%s: %v\n%s", kind, err, out)
			}
			var waits []fakemodel.ToolResult
			reqs := srv.Requests()
			for _, r := range fakemodel.ToolResults(reqs[len(reqs)-1].Body) {
				if r.Name() == "mcp__zwarm__wait" {
					waits = append(waits, r)
				}
			}
			type waitOut struct {
				Finished []struct {
					LastMessage string `json:"last_message"`
				} `json:"finished"`
				Running []struct {
					SessionID string `json:"session_id"`
				} `json:"running"`
				TimedOut bool `json:"timed_out"`
			}
			var first, second waitOut
			if len(waits) != 2 || resultJSON(waits[0].Output, &first) != nil || resultJSON(waits[1].Output, &second) != nil {
				t.Fatalf("wait results: %+v", waits)
			}
			if waits[0].IsError || !first.TimedOut || len(first.Running) != 1 || len(first.Finished) != 0 {
				t.Errorf("first wait: %q", waits[0].Output)
			}
			if waits[1].IsError || second.TimedOut || len(second.Finished) != 1 || second.Finished[0].LastMessage != "slow answer" {
				t.Errorf("second wait: %q", waits[1].Output)
			}
		})
	}
}

// exposedTools lists the zwarm tools a CLI offered its model: claude in
// each request's tools, codex in the namespace mcp__zwarm its tool search
// returned (among others it matched).
func exposedTools(kind string, reqs []fakemodel.Request) []string {
	var names []string
	for _, r := range reqs {
		var body struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Input []struct {
				Type  string `json:"type"`
				Tools []struct {
					Type, Name string
					Tools      []struct{ Name string } `json:"tools"`
				} `json:"tools"`
			} `json:"input"`
		}
		json.Unmarshal(r.Body, &body)
		switch kind {
		case "claude":
			for _, t := range body.Tools {
				if strings.HasPrefix(t.Name, "mcp__zwarm__") && !slices.Contains(names, t.Name) {
					names = append(names, t.Name)
				}
			}
		case "codex":
			for _, it := range body.Input {
				for _, ns := range it.Tools {
					for _, t := range ns.Tools {
						if it.Type == "tool_search_output" && ns.Type == "namespace" && ns.Name == "mcp__zwarm" && !slices.Contains(names, ns.Name+"__"+t.Name) {
							names = append(names, ns.Name+"__"+t.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// mcpServers lists the live zwarm mcp processes of a state dir.
func mcpServers(state string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "\x00"+state+"\x00mcp") && sessionstest.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
