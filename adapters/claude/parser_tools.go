package claude

import "github.com/zwarm/zwarm/sessions"

// toolUse maps claude's tools onto the normalized steps: Bash is a
// command, file tools are file changes, TodoWrite and the task tools are
// the plan. It remembers the call until its result comes.
func (p *Parser) toolUse(bl *block) {
	id, name := p.s.text(bl.id), p.s.text(bl.name)
	in := readInput(&p.s, bl.input)
	tu := toolUse{name: name}
	ev := sessions.Event{Phase: sessions.PhaseStarted, ItemID: id, Status: "in_progress"}
	switch {
	case name == "Bash":
		tu.command = p.s.text(in.command)
		ev.Type, ev.Command = sessions.EventCommand, tu.command
	case fileTools[name]:
		tu.path = p.s.text(in.filePath)
		kind := "update"
		if name == "Write" {
			kind = "add"
		}
		path := firstNonEmpty(tu.path, p.s.text(in.notebookPath))
		ev.Type, ev.Changes = sessions.EventFileChange, []sessions.FileChange{{Path: path, Kind: kind}}
	case name == "TodoWrite":
		ev.Type, ev.Phase = sessions.EventTodoList, sessions.PhaseCompleted
		for t := range p.s.each(in.todos) {
			ev.Todos = append(ev.Todos, sessions.Todo{Text: p.s.text(p.t.last(t, "content")), Completed: peek(p.t.last(t, "status")) == "completed"})
		}
	case taskTools[name]:
		// The plan changes when the result says it did: see taskResult.
		tu.task = taskInput{subject: p.s.text(in.subject), taskID: p.s.text(in.taskID), status: p.s.text(in.status)}
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
	command, filePath, notebookPath []byte
	todos                           []byte
	subject, taskID, status         []byte
}

// readInput reads a tool's input, raw JSON that is valid.
func readInput(s *scanner, v []byte) input {
	var in input
	if !isObject(v) {
		return in
	}
	s.reset(v)
	s.enter()
	for s.more() {
		switch s.member() {
		case "command":
			in.command = s.value()
		case "file_path":
			in.filePath = s.value()
		case "notebook_path":
			in.notebookPath = s.value()
		case "todos":
			in.todos = s.value()
		case "subject":
			in.subject = s.value()
		case "taskId":
			in.taskID = s.value()
		case "status":
			in.status = s.value()
		default:
			s.skip()
		}
	}
	return in
}
