package claude

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/sessions/record"
)

// Claude Code 2.x plans with task tools instead of TodoWrite: TaskCreate
// adds a task (claude picks its id, "1", "2", ...), TaskUpdate changes its
// subject or status (pending, in_progress, completed, deleted), TaskList
// lists them all. The tasks live in claude's session, not in its output,
// so the parser rebuilds the list from the calls it sees in its own turn
// file, and only from calls that succeeded:
//
//   - TaskCreate adds a pending task once its result names the new id;
//   - TaskUpdate changes the task, or removes it when it is deleted. A task
//     of an earlier turn that this turn has not listed is shown as
//     "task #N" until its subject is known;
//   - TaskList's result replaces the list with claude's own.
//
// Each change is one todo_list event carrying the whole list, all with the
// item id "tasks", so a trajectory shows the plan once, in its latest
// state. A failed call is a tool_result with the error instead.

var taskTools = map[string]bool{"TaskCreate": true, "TaskUpdate": true, "TaskList": true}

// planItemID is the item id of every event of the plan.
const planItemID = "tasks"

// taskInput is what a task tool's call asked for.
type taskInput struct{ subject, taskID, status string }

type plan struct {
	tasks []task // ordered by id
	shown bool   // an event showed the plan already
}

type task struct{ id, subject, status string }

// taskResult applies the result of a task tool call. ev is the result's
// event as far as the caller made it; structured is the line's
// tool_use_result, claude's own account of the call, when it is this
// result's.
func (p *Parser) taskResult(ev record.Event, tu toolUse, res string, isErr bool, structured []byte) {
	fail := func(msg string) {
		ev.Type, ev.Tool, ev.Output, ev.Text, ev.Status = record.EventToolResult, tu.name, res, msg, "failed"
		p.emit(ev)
	}
	if isErr {
		fail(res)
		return
	}
	switch tu.name {
	case "TaskCreate":
		created := p.s.Last(structured, "task")
		// Without an id the task cannot be updated, but it is still shown.
		id := firstNonEmpty(p.s.Text(p.s.Last(created, "id")), createdID(res), ev.ItemID)
		t := p.plan.task(id)
		t.subject = firstNonEmpty(p.s.Text(p.s.Last(created, "subject")), tu.task.subject, t.subject)
		if t.status == "" {
			t.status = "pending"
		}
	case "TaskUpdate":
		if ok := p.s.Last(structured, "success"); string(ok) == "false" {
			fail(firstNonEmpty(p.s.Text(p.s.Last(structured, "error")), res))
			return
		}
		if !jsonscan.IsObject(structured) && !strings.HasPrefix(res, "Updated task") {
			fail(res)
			return
		}
		p.plan.update(tu.task)
	case "TaskList":
		list := p.s.Last(structured, "tasks")
		if !jsonscan.IsArray(list) {
			ev.Type, ev.Tool, ev.Output = record.EventToolResult, tu.name, res
			p.emit(ev)
			return
		}
		p.plan.tasks = p.plan.tasks[:0]
		for v := range p.s.Each(list) {
			t := p.plan.task(p.s.Text(p.t.Last(v, "id")))
			t.subject, t.status = p.s.Text(p.t.Last(v, "subject")), p.s.Text(p.t.Last(v, "status"))
		}
	}
	p.emit(p.plan.event())
}

// createdID reads the id from TaskCreate's text, "Task #3 created ...".
func createdID(res string) string {
	_, rest, ok := strings.Cut(res, "Task #")
	if !ok {
		return ""
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	return rest[:end]
}

// task returns the task with the id, adding it in order if it is new.
func (pl *plan) task(id string) *task {
	i, found := slices.BinarySearchFunc(pl.tasks, id, func(t task, id string) int { return compareIDs(t.id, id) })
	if !found {
		pl.tasks = slices.Insert(pl.tasks, i, task{id: id})
	}
	return &pl.tasks[i]
}

func (pl *plan) update(in taskInput) {
	if in.status == "deleted" {
		pl.tasks = slices.DeleteFunc(pl.tasks, func(t task) bool { return t.id == in.taskID })
		return
	}
	t := pl.task(in.taskID)
	t.subject = firstNonEmpty(in.subject, t.subject, "task #"+in.taskID)
	t.status = firstNonEmpty(in.status, t.status, "pending")
}

// compareIDs orders task ids as numbers, the way claude numbers them, and
// anything else after them as text.
func compareIDs(a, b string) int {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(na, nb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// event shows the whole plan.
func (pl *plan) event() record.Event {
	ev := record.Event{Type: record.EventTodoList, Phase: record.PhaseUpdated, ItemID: planItemID}
	if !pl.shown {
		ev.Phase, pl.shown = record.PhaseStarted, true
	}
	for _, t := range pl.tasks {
		ev.Todos = append(ev.Todos, record.Todo{Text: t.subject, Completed: t.status == "completed"})
	}
	return ev
}
