package claude

import (
	"github.com/tidwall/gjson"

	"github.com/zwarm/zwarm/sessions"
)

// toolUse maps claude's tools onto the normalized steps: Bash is a
// command, file tools are file changes, TodoWrite and the task tools are
// the plan. It remembers the call until its result comes.
func (p *Parser) toolUse(bl *block) {
	id, name := text(bl.id), text(bl.name)
	in := readInput(bl.input)
	tu := toolUse{name: name}
	ev := sessions.Event{Phase: sessions.PhaseStarted, ItemID: id, Status: "in_progress"}
	switch {
	case name == "Bash":
		tu.command = text(in.command)
		ev.Type, ev.Command = sessions.EventCommand, tu.command
	case fileTools[name]:
		tu.path = text(in.filePath)
		kind := "update"
		if name == "Write" {
			kind = "add"
		}
		path := firstNonEmpty(tu.path, text(in.notebookPath))
		ev.Type, ev.Changes = sessions.EventFileChange, []sessions.FileChange{{Path: path, Kind: kind}}
	case name == "TodoWrite":
		ev.Type, ev.Phase = sessions.EventTodoList, sessions.PhaseCompleted
		if isArray(in.todos) {
			in.todos.ForEach(func(_, t gjson.Result) bool {
				ev.Todos = append(ev.Todos, sessions.Todo{Text: text(last(t, "content")), Completed: last(t, "status").Str == "completed"})
				return true
			})
		}
	case taskTools[name]:
		// The plan changes when the result says it did: see taskResult.
		tu.task = taskInput{subject: text(in.subject), taskID: text(in.taskID), status: text(in.status)}
		p.tools[id] = tu
		return
	default:
		ev.Type, ev.Tool, ev.Input = sessions.EventToolCall, name, compact(bl.input)
	}
	p.tools[id] = tu
	p.emit(ev)
}

// input is what the parser reads of a tool's input. Only strings count,
// and of duplicate keys the last one, as they did when the input was
// decoded into a map.
type input struct {
	command, filePath, notebookPath gjson.Result
	todos                           gjson.Result
	subject, taskID, status         gjson.Result
}

func readInput(v gjson.Result) input {
	var in input
	if !isObject(v) {
		return in
	}
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "command":
			in.command = v
		case "file_path":
			in.filePath = v
		case "notebook_path":
			in.notebookPath = v
		case "todos":
			in.todos = v
		case "subject":
			in.subject = v
		case "taskId":
			in.taskID = v
		case "status":
			in.status = v
		}
		return true
	})
	return in
}
