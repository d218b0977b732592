package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// ShortResult is the gist of a tool's result on one line ("" when there is
// nothing worth a line, as for finish).
func ShortResult(tool, output string) string {
	var m map[string]any
	isJSON := json.Unmarshal([]byte(output), &m) == nil
	str := func(k string) string { s, _ := m[k].(string); return s }
	switch {
	case tool == "finish", tool == "ask_user":
		return "" // the answer's own line says it
	case tool == "delegate" && isJSON:
		return fmt.Sprintf("started %s (%s, %s)", record.ShortID(str("session_id")), str("adapter"), str("model"))
	case tool == "wait" && isJSON:
		return waitGist(m)
	case tool == "check_session" && isJSON:
		text := fmt.Sprintf("%s %s", record.ShortID(str("session_id")), str("status"))
		if files, _ := m["files_changed"].([]any); len(files) > 0 {
			text += fmt.Sprintf(" · %d files changed", len(files))
		}
		if msg := str("last_message"); msg != "" {
			text += " · “" + render.Clip(msg, 100) + "”"
		}
		return text
	case tool == "list_sessions" && isJSON:
		ws, _ := m["workers"].([]any)
		attention := 0
		for _, w := range ws {
			if wm, _ := w.(map[string]any); wm["needs_attention"] == true {
				attention++
			}
		}
		return fmt.Sprintf("%d workers, %d need attention", len(ws), attention)
	case (tool == "converse" || tool == "end_session") && isJSON:
		if n := str("note"); n != "" {
			return render.Clip(n, 140)
		}
		return fmt.Sprintf("%s %v", record.ShortID(str("session_id")), m["status"])
	case tool == "land_session" && isJSON:
		if m["landed"] == true {
			return fmt.Sprintf("landed %s into %s as %s (%s)", record.ShortID(str("session_id")), str("into"), workspace.Abbrev(str("commit")), str("changes"))
		}
		return render.Clip(str("note"), 140)
	case tool == "update_session" && isJSON:
		return render.Clip(str("note"), 140)
	case tool == "diff_session":
		// Its first line says whose change it is, how big, and if landed.
		head, _, _ := strings.Cut(output, "\n")
		if f := strings.Fields(head); len(f) > 1 && f[0] == "worker" {
			head = strings.Replace(head, "worker "+f[1], record.ShortID(f[1]), 1)
		}
		return render.Clip(head, 160)
	case tool == "exec_command" || tool == "write_stdin":
		return shellGist(output)
	}
	return render.Clip(output, 140)
}

func waitGist(m map[string]any) string {
	var parts []string
	fin, _ := m["finished"].([]any)
	for _, f := range fin {
		fm, _ := f.(map[string]any)
		id, _ := fm["session_id"].(string)
		parts = append(parts, fmt.Sprintf("%s %v", record.ShortID(id), fm["status"]))
	}
	text := "finished: none"
	if len(parts) > 0 {
		text = "finished: " + strings.Join(parts, ", ")
	}
	if run, _ := m["running"].([]any); len(run) > 0 {
		text += fmt.Sprintf(" · %d running", len(run))
	}
	if m["timed_out"] == true {
		text += " · timed out"
	}
	return text
}

// shellGist is the exit (or session) and the last line of output.
func shellGist(out string) string {
	var status, last string
	body := out
	if i := strings.Index(out, "\nOutput:\n"); i >= 0 {
		body = out[i+len("\nOutput:\n"):]
	}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Process exited with code "):
			status = "exit " + strings.TrimPrefix(line, "Process exited with code ")
		case strings.HasPrefix(line, "Process running with session ID "):
			status = "running as session " + strings.TrimPrefix(line, "Process running with session ID ")
		}
	}
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			last = t
			break
		}
	}
	if last != "" {
		return status + " · " + render.Clip(last, 120)
	}
	return status
}
