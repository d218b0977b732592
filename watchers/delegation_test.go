package watchers

import (
	"strings"
	"testing"
)

func TestDelegationCatchesCodeWrittenByHand(t *testing.T) {
	for _, cmd := range []string{
		"cat > parser.go <<'EOF'\npackage parser\nEOF",
		"cat <<EOF > src/app.py\nprint(1)\nEOF",
		"mkdir -p x && tee -a x/main.rs <<-END\nfn main(){}\nEND",
		`echo "export const x = 1" >> web/x.ts`,
		`printf 'int main(){}\n' > main.c`,
		"sed -i 's/foo/bar/g' lib/util.go",
		"sed -E -i.bak 's/a/b/' app.js",
		"perl -pi -e 's/a/b/' script.sh",
	} {
		w := newDelegation(DefaultConfig().Delegation)
		h := newHistory("build it")
		ask(t, w, h, Continue)
		h.step("", call("exec_command", map[string]any{"cmd": cmd}))
		v := ask(t, w, h, Nudge)
		if !strings.Contains(v.Message, "Delegate implementation to a worker") {
			t.Errorf("%q: %q", cmd, v.Message)
		}
		ask(t, w, h, Continue) // once per call
	}
}

func TestDelegationLetsVerificationBe(t *testing.T) {
	w := newDelegation(DefaultConfig().Delegation)
	h := newHistory("build it")
	for _, cmd := range []string{
		"go test ./... > test.log 2>&1",
		"cat parser.go",
		"sed -n 1,40p main.go",
		"echo done",
		"git diff --stat > /tmp/diff.txt",
		"cat > notes.md <<EOF\nplan\nEOF",
		"grep -rn TODO src/ | tee todo.txt",
	} {
		h.step("", call("exec_command", map[string]any{"cmd": cmd}))
		ask(t, w, h, Continue)
	}
	// A worker writing code is what should happen.
	h.step("", call("delegate", map[string]any{"task": "cat > parser.go <<EOF"}))
	ask(t, w, h, Continue)
}

func TestReminderAfterStepsWithoutDelegating(t *testing.T) {
	cfg := DefaultConfig().DelegationReminder
	cfg.Steps = 4
	w := newReminder(cfg)
	h := newHistory("build it")
	h.step("", call("delegate", map[string]any{"task": "a"}))
	for i := 0; i < 3; i++ {
		h.step("", call("exec_command", map[string]any{"cmd": "ls"}))
		ask(t, w, h, Continue)
	}
	h.step("", call("exec_command", map[string]any{"cmd": "ls"}))
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "4 steps without delegating") {
		t.Errorf("message %q", v.Message)
	}
	for i := 0; i < 3; i++ {
		h.step("", call("exec_command", map[string]any{"cmd": "ls"}))
		ask(t, w, h, Continue)
	}
	h.step("", call("exec_command", map[string]any{"cmd": "ls"}))
	ask(t, w, h, Nudge) // again after as many steps
}

func TestReminderQuietWhileWorkersAreLookedAfter(t *testing.T) {
	cfg := DefaultConfig().DelegationReminder
	cfg.Steps = 4
	w := newReminder(cfg)
	h := newHistory("build it")
	h.step("", call("delegate", map[string]any{"task": "a"}))
	for i, name := range []string{"exec_command", "wait", "exec_command", "exec_command", "check_session", "exec_command", "peek_session",
		"exec_command", "exec_command", "exec_command", "get_trajectory", "exec_command", "list_sessions", "exec_command", "end_session"} {
		h.step("", call(name, map[string]any{"i": i}))
		ask(t, w, h, Continue)
	}
}
