package claude

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/adapters/internal/parsertest"
)

// initLine is a system/init line as claude 2.1.197 prints it, with one MCP
// server connected.
const initLine = `{"type":"system","subtype":"init","cwd":"/home/dev/project/work","session_id":"df1112b1-54ee-466b-9fdb-fa09c5eee464","tools":["Task","Bash","CronCreate","CronDelete","CronList","Edit","EnterWorktree","ExitWorktree","NotebookEdit","Read","ReportFindings","ScheduleWakeup","SendMessage","Skill","TaskCreate","TaskGet","TaskList","TaskOutput","TaskStop","TaskUpdate","WebFetch","WebSearch","Workflow","Write","mcp__docs__search","mcp__docs__fetch","mcp__docs__list"],"mcp_servers":[{"name":"docs","status":"connected"}],"model":"claude-sonnet-5","permissionMode":"bypassPermissions","slash_commands":["deep-research","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","loop","claude-api","run","run-skill-generator","clear","compact","config","context","heapdump","init","reload-skills","review","security-review","usage","insights","goal","team-onboarding","mcp__docs__search_prompt"],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197","output_style":"default","agents":["claude","Explore","general-purpose","Plan","statusline-setup"],"skills":["deep-research","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","loop","claude-api","run","run-skill-generator"],"plugins":[],"analytics_disabled":true,"product_feedback_disabled":true,"uuid":"d0777510-5dd4-436b-ab65-928f07666c42","memory_paths":{"auto":"/home/dev/project/.claude/projects/-home-dev-project-work/memory/"},"fast_mode_state":"off"}`

// sourceFile is n lines of Go source, as Write and Edit carry it.
func sourceFile(i, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package p%d\n\nimport \"fmt\"\n\n", i)
	for l := range n {
		fmt.Fprintf(&b, "func f%d() string {\n\treturn fmt.Sprintf(\"%%q → %%d\", \"naïve\\t\", %d) // café\n}\n", l, l)
	}
	return b.String()
}

// numbered is a file as the Read tool returns it: numbered lines.
func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, l)
	}
	return b.String()
}

type benchWriter struct {
	bytes.Buffer
	tool int
}

func (w *benchWriter) assistant(msg int, block string) {
	fmt.Fprintf(w, `{"type":"assistant","message":{"content":[%s],"id":"msg_%d","model":"claude-sonnet-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":1200,"cache_read_input_tokens":24000,"input_tokens":12,"output_tokens":300},"context_management":null},"parent_tool_use_id":null,"session_id":"df1112b1-54ee-466b-9fdb-fa09c5eee464","uuid":"494d702e-2a38-4a01-8067-a1e8b097aa6a"}`+"\n", block, msg)
}

// call writes a tool_use and the user line with its result.
func (w *benchWriter) call(msg int, name, input, content, useResult string) {
	w.tool++
	id := fmt.Sprintf("toolu_%d", w.tool)
	w.assistant(msg, fmt.Sprintf(`{"id":%q,"input":%s,"name":%q,"type":"tool_use"}`, id, input, name))
	fmt.Fprintf(w, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%s,"is_error":false}]},"parent_tool_use_id":null,"session_id":"df1112b1-54ee-466b-9fdb-fa09c5eee464","uuid":"23152364-3a2b-429b-b9a8-e23bf9c05a15","timestamp":"2026-11-22T03:28:14.912Z","tool_use_result":%s}`+"\n",
		id, content, useResult)
}

// benchTurn is a realistic claude stream-json output of at least size
// bytes, every line of it valid: turns of system/init, thinking, text,
// Bash, Read, Write, Edit, MCP and task tool calls with their (big)
// results, and result lines.
func benchTurn(size int) []byte {
	w := &benchWriter{}
	lines := []int{3, 20, 80, 200}
	task := 0
	for i := 0; w.Len() < size; i++ {
		if i%25 == 0 {
			if i > 0 {
				w.WriteString(`{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":425,"duration_api_ms":139,"num_turns":25,"result":"done","stop_reason":"end_turn","session_id":"df1112b1-54ee-466b-9fdb-fa09c5eee464","total_cost_usd":0.00423,"usage":{"input_tokens":1100,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":60,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"},"modelUsage":{"claude-sonnet-5":{"inputTokens":1100,"outputTokens":60,"cacheReadInputTokens":100,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.00423,"contextWindow":200000,"maxOutputTokens":64000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"7a99659a-3a74-4cd4-8972-75462600d19f"}` + "\n")
			}
			w.WriteString(initLine + "\n")
		}
		w.assistant(i, fmt.Sprintf(`{"signature":"EqMBCkYIBxgCKkDx","thinking":%s,"type":"thinking"}`,
			parsertest.Quote(fmt.Sprintf("Step %d: the tests for `pkg/p%d` should run first; then I’ll look at \"failures\".", i, i))))
		w.assistant(i, fmt.Sprintf(`{"text":%s,"type":"text"}`, parsertest.Quote(fmt.Sprintf("Running the tests for step %d ✅", i))))
		out := parsertest.CommandOutput(i, lines[i%len(lines)])
		w.call(i, "Bash", fmt.Sprintf(`{"command":%s,"description":"Run the tests"}`, parsertest.Quote(fmt.Sprintf("go test ./pkg/p%d/... -run \"TestParse\"", i))),
			parsertest.Quote(out), fmt.Sprintf(`{"stdout":%s,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`, parsertest.Quote(out)))
		src := sourceFile(i, lines[(i+1)%len(lines)]/2)
		path := fmt.Sprintf("/home/dev/project/work/pkg/p%d/parse.go", i)
		if i%2 == 0 {
			w.call(i, "Read", fmt.Sprintf(`{"file_path":%q}`, path), parsertest.Quote(numbered(src)),
				fmt.Sprintf(`{"type":"text","file":{"filePath":%q,"content":%s,"numLines":%d,"startLine":1,"totalLines":%d}}`, path, parsertest.Quote(src), strings.Count(src, "\n"), strings.Count(src, "\n")))
		}
		if i%3 == 0 {
			w.call(i, "Write", fmt.Sprintf(`{"file_path":%q,"content":%s}`, path, parsertest.Quote(src)),
				parsertest.Quote("File created successfully at: "+path+" (file state is current in your context — no need to Read it back)"),
				fmt.Sprintf(`{"type":"create","filePath":%q,"content":%s,"structuredPatch":[],"originalFile":null,"userModified":false}`, path, parsertest.Quote(src)))
		}
		if i%4 == 0 {
			w.call(i, "Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"return \"a\"","new_string":"return \"b\" // naïve","replace_all":false}`, path),
				parsertest.Quote("The file "+path+" has been updated successfully."), fmt.Sprintf(`{"filePath":%q,"oldString":"return \"a\"","newString":"return \"b\" // naïve","userModified":false,"replaceAll":false}`, path))
		}
		if i%5 == 0 {
			text := parsertest.Quote("flag.Bool defines a bool flag.\n\tUsage: flag.Bool(\"v\", false, \"verbose\") — see pflag\n" + out[:min(len(out), 2000)])
			w.call(i, "mcp__docs__search", `{"q":"flag"}`, fmt.Sprintf(`[{"type":"text","text":%s}]`, text), fmt.Sprintf(`[{"type":"text","text":%s}]`, text))
		}
		// A plan of a task or two per turn: the parser keeps the plan for the
		// whole file, and each change shows all of it.
		if i%25 == 1 {
			task++
			w.call(i, "TaskCreate", fmt.Sprintf(`{"subject":"Fix step %d","description":"Make the tests of pkg/p%d pass","activeForm":"Fixing step %d"}`, i, i, i),
				parsertest.Quote(fmt.Sprintf("Task #%d created successfully: Fix step %d", task, i)), fmt.Sprintf(`{"task":{"id":"%d","subject":"Fix step %d"}}`, task, i))
		}
		if i%25 == 13 {
			w.call(i, "TaskUpdate", fmt.Sprintf(`{"taskId":"%d","status":"completed"}`, task),
				parsertest.Quote(fmt.Sprintf("Updated task #%d status", task)), fmt.Sprintf(`{"success":true,"taskId":"%d","updatedFields":["status"],"statusChange":{"from":"pending","to":"completed"}}`, task))
		}
	}
	return w.Bytes()
}

// BenchmarkParse100MB parses 100 MB of claude output through a TurnReader,
// as readers of a session do. Every line is valid claude output, so a raw
// or unknown event means the parser failed.
func BenchmarkParse100MB(b *testing.B) {
	parsertest.BenchParse(b, benchTurn(100<<20), NewParser)
}
