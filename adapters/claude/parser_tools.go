package claude

import (
	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/sessions/record"
)

// toolUse maps claude's tools onto the normalized steps: Bash is a
// command, file tools are file changes, TodoWrite and the task tools are
// the plan. It remembers the call until its result comes.
func (p *Parser) toolUse(bl *block) {
	id, name := p.s.Text(bl.id), p.s.Text(bl.name)
	in := readInput(&p.s, bl.input)
	tu := toolUse{name: name}
	ev := record.Event{Phase: record.PhaseStarted, ItemID: id, Status: "in_progress"}
	switch {
	case name == "Bash":
		tu.command = p.s.Text(in.command)
		ev.Type, ev.Command = record.EventCommand, tu.command
	case fileTools[name]:
		tu.path = p.s.Text(in.filePath)
		kind := "update"
		if name == "Write" {
			kind = "add"
		}
		path := firstNonEmpty(tu.path, p.s.Text(in.notebookPath))
		ev.Type, ev.Changes = record.EventFileChange, []record.FileChange{{Path: path, Kind: kind}}
	case name == "TodoWrite":
		ev.Type, ev.Phase = record.EventTodoList, record.PhaseCompleted
		for t := range p.s.Each(in.todos) {
			ev.Todos = append(ev.Todos, record.Todo{Text: p.s.Text(p.t.Last(t, "content")), Completed: jsonscan.Peek(p.t.Last(t, "status")) == "completed"})
		}
	case taskTools[name]:
		// The plan changes when the result says it did: see taskResult.
		tu.task = taskInput{subject: p.s.Text(in.subject), taskID: p.s.Text(in.taskID), status: p.s.Text(in.status)}
		p.tools[id] = tu
		return
	default:
		ev.Type, ev.Tool, ev.Input = record.EventToolCall, name, jsonscan.Compact(bl.input)
	}
	p.tools[id] = tu
	p.emit(ev)
}

// input is what the parser reads of a tool's input. Only strings count,
// and of duplicate keys the last one, as they did when the input was
// decoded into a map.
type input struct {
	command, filePath, notebookPath []byte
	todos                           []byte
	subject, taskID, status         []byte
}

// readInput reads a tool's input, raw JSON that is valid.
func readInput(s *jsonscan.Scanner, v []byte) input {
	var in input
	if !jsonscan.IsObject(v) {
		return in
	}
	s.Reset(v)
	s.Enter()
	for s.More() {
		switch s.Member() {
		case "command":
			in.command = s.Value()
		case "file_path":
			in.filePath = s.Value()
		case "notebook_path":
			in.notebookPath = s.Value()
		case "todos":
			in.todos = s.Value()
		case "subject":
			in.subject = s.Value()
		case "taskId":
			in.taskID = s.Value()
		case "status":
			in.status = s.Value()
		default:
			s.Skip()
		}
	}
	return in
}
