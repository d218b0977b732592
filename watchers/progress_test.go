package watchers

import (
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

func progressCfg() ProgressConfig {
	c := DefaultConfig().Progress
	c.Repeats, c.AbortRepeats = 3, 5
	return c
}

func TestProgressSameCallNudgesThenAborts(t *testing.T) {
	w := newProgress(progressCfg())
	h := newHistory("fix the bug")
	// The same arguments written in another key order are the same call.
	h.step("", call("check_session", map[string]any{"session_id": "ab12", "full": true}))
	ask(t, w, h, Continue)
	h.step("", callOut("check_session", map[string]any{"full": true, "session_id": "ab12"}, "other text"))
	ask(t, w, h, Continue)
	h.step("", call("check_session", map[string]any{"session_id": "ab12", "full": true}))
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "check_session with the same arguments 3 times in a row") {
		t.Errorf("message %q", v.Message)
	}
	// Asked again with nothing new: nothing new to say.
	ask(t, w, h, Continue)
	h.step("", call("check_session", map[string]any{"session_id": "ab12", "full": true}))
	ask(t, w, h, Nudge)
	h.step("", call("check_session", map[string]any{"session_id": "ab12", "full": true}))
	v = ask(t, w, h, Abort)
	if !strings.Contains(v.Message, "5 times in a row") {
		t.Errorf("message %q", v.Message)
	}
}

func TestProgressQuietWhileCallsChange(t *testing.T) {
	w := newProgress(progressCfg())
	h := newHistory("fix the bug")
	for i := 0; i < 12; i++ {
		// Two calls that alternate, and waits, which are meant to repeat.
		h.step("", callOut("peek_session", map[string]any{"session_id": []string{"ab12", "cd34"}[i%2]}, []string{"a", "b"}[i%2]),
			callOut("wait", map[string]any{"timeout_s": 60}, `{"finished":[{"session_id":"x"}],"running":[]}`))
		ask(t, w, h, Continue)
	}
	for i := 0; i < 6; i++ {
		h.step("", callOut("sleep", map[string]any{"seconds": 5}, "slept 5s"))
		ask(t, w, h, Continue)
	}
}

func TestProgressSameOutput(t *testing.T) {
	w := newProgress(progressCfg())
	h := newHistory("fix the bug")
	h.step("", callOut("peek_session", map[string]any{"session_id": "ab12"}, "running · turn 1"))
	h.step("", callOut("check_session", map[string]any{"session_id": "ab12"}, "running · turn 1"))
	ask(t, w, h, Continue)
	h.step("", callOut("get_trajectory", map[string]any{"session_id": "ab12"}, "running · turn 1"))
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "last 3 tool calls returned the same output") {
		t.Errorf("message %q", v.Message)
	}
}

func TestProgressEmptyWaits(t *testing.T) {
	const empty = `{"finished":[],"running":[{"session_id":"ab12","status":"running","turn":1}],"timed_out":true,"waited_s":60}`
	w := newProgress(progressCfg())
	h := newHistory("fix the bug")
	h.step("", callOut("wait", map[string]any{}, empty))
	h.step("", callOut("wait", map[string]any{}, empty))
	ask(t, w, h, Continue)
	h.step("", callOut("wait", map[string]any{}, empty))
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "last 3 waits returned no finished worker") {
		t.Errorf("message %q", v.Message)
	}

	// A wait that brings news, or a look at the workers, breaks the row.
	w = newProgress(progressCfg())
	h = newHistory("fix the bug")
	for i := 0; i < 4; i++ {
		h.step("", callOut("wait", map[string]any{}, empty), callOut("peek_session", map[string]any{"session_id": "ab12"}, "step "+string(rune('a'+i))))
		ask(t, w, h, Continue)
	}
	h.step("", callOut("wait", map[string]any{}, empty), callOut("wait", map[string]any{}, `{"finished":[{"session_id":"ab12"}],"running":[]}`))
	ask(t, w, h, Continue)
}

// delegatedOne is the progress watcher, idle after 4 steps, over a run
// whose first step delegated one worker, w1.
func delegatedOne() (*progress, *history, *record.Session) {
	cfg := progressCfg()
	cfg.IdleSteps = 4
	h := newHistory("fix the bug")
	h.step("", call("delegate", map[string]any{"task": "a"}))
	return newProgress(cfg), h, h.worker("w1")
}

func TestProgressWorkersNeverFinishing(t *testing.T) {
	w, h, _ := delegatedOne()
	h.step("", call("delegate", map[string]any{"task": "b"}))
	h.worker("w2")
	for i := 0; i < 2; i++ {
		h.step("", callOut("peek_session", map[string]any{"session_id": "w1"}, "x"+string(rune('a'+i))))
		ask(t, w, h, Continue)
	}
	h.step("", callOut("exec_command", map[string]any{"cmd": "ls"}, "a b"))
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "2 worker(s) running and none finished in the 4 steps") {
		t.Errorf("message %q", v.Message)
	}
	h.step("", callOut("exec_command", map[string]any{"cmd": "ls -l"}, "a b c"))
	ask(t, w, h, Continue) // said once for this worker
}

func TestProgressQuietWhenWorkersFinish(t *testing.T) {
	w, h, w1 := delegatedOne()
	h.step("", call("delegate", map[string]any{"task": "b"}))
	h.worker("w2")
	h.step("", callOut("exec_command", map[string]any{"cmd": "ls"}, "1"))
	h.end(w1, "completed")
	for i := 0; i < 6; i++ {
		h.step("", callOut("exec_command", map[string]any{"cmd": "ls"}, "out "+string(rune('a'+i))), callOut("check_session", map[string]any{"session_id": "w1"}, "c"+string(rune('a'+i))))
		ask(t, w, h, Continue)
	}
}

// Workers waiting in their cluster's queue have not begun: the steps the
// model takes while they wait are no lack of progress. Once one begins,
// its steps count from then.
func TestProgressQuietWhileWorkersAreQueued(t *testing.T) {
	w, h, w1 := delegatedOne()
	sessionstest.SetStatus(w1, record.StatusPending)
	w1.Owner, w1.Job = nil, &record.Job{Runner: "slurm", ID: "51"}
	for i := 0; i < 8; i++ {
		h.step("", callOut("exec_command", map[string]any{"cmd": "squeue " + string(rune('a'+i))}, "queued "+string(rune('a'+i))))
		ask(t, w, h, Continue)
	}
	sessionstest.SetStatus(w1, record.StatusRunning)
	w1.Turns = []record.Turn{{N: 1, StartedAt: h.t}}
	h.t = h.t.Add(time.Second)
	for i := 0; i < 3; i++ {
		h.step("", callOut("exec_command", map[string]any{"cmd": "cat " + string(rune('a'+i))}, "running "+string(rune('a'+i))))
		ask(t, w, h, Continue)
	}
	h.step("", callOut("exec_command", map[string]any{"cmd": "ls"}, "a b"))
	if v := ask(t, w, h, Nudge); !strings.Contains(v.Message, "1 worker(s) running and none finished in the 4 steps") {
		t.Errorf("message %q", v.Message)
	}
}
