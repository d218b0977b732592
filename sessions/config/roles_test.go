package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestRolesLoadAndAreCheckedStrictly(t *testing.T) {
	dir := writeConfig(t, `
[roles.reviewer]
adapter = "codex"
model = "gpt-5.1-codex"
reasoning_effort = "high"
sandbox = "read-only"
instructions = """
Review only: change no file.
"""
max_cost_usd = 2
`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Role("reviewer")
	if err != nil || r.Model != "gpt-5.1-codex" || r.ReasoningEffort != "high" || r.Sandbox != "read-only" ||
		r.Instructions != "Review only: change no file.\n" || r.MaxCostUSD != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	if err := c.CheckAdapters(dir, []string{"codex", "claude"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckAdapters(dir, []string{"claude"}); err == nil || !strings.Contains(err.Error(), "[roles.reviewer] adapter \"codex\"") {
		t.Fatalf("a role with an unknown adapter: %v", err)
	}
	_, err = c.Role("tester")
	if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), `no role "tester"`) || !strings.Contains(err.Error(), "reviewer") {
		t.Fatalf("unknown role: %v", err)
	}
	empty, _ := Load(t.TempDir())
	if _, err := empty.Role("tester"); err == nil || !strings.Contains(err.Error(), "[roles.tester]") {
		t.Fatalf("unknown role, none configured: %v", err)
	}

	for body, want := range map[string]string{
		"[roles.reviewer]\nmodle = \"x\"\n":            "roles.reviewer.modle",
		"[roles.reviewer]\nmax_cost_usd = -1.0\n":      "max_cost_usd = -1",
		"[roles.reviewer]\nmax_cost_usd = \"cheap\"\n": "roles",
		"[roles.\"a b\"]\nmodel = \"x\"\n":             "a role's name",
	} {
		_, err := Load(writeConfig(t, body))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want a config error with %q, got %v", body, want, err)
		}
		if want == "roles.reviewer.modle" && !strings.Contains(err.Error(), "reasoning_effort") {
			t.Errorf("an unknown key in a role does not list a role's keys: %v", err)
		}
	}
}

// The example role in .zwarm-example/config.toml, uncommented, loads and
// says what the documentation says.
func TestExampleRoleLoads(t *testing.T) {
	b, err := os.ReadFile("../../.zwarm-example/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if l == "# [roles.reviewer]" {
			in = true
		}
		if in && !strings.HasPrefix(l, "# ") {
			break
		}
		if in {
			body = append(body, strings.TrimPrefix(l, "# "))
		}
	}
	c, err := Load(writeConfig(t, strings.Join(body, "\n")))
	if err != nil || len(body) == 0 {
		t.Fatalf("%v in:\n%s", err, strings.Join(body, "\n"))
	}
	r, err := c.Role("reviewer")
	if err != nil || r.Adapter != "codex" || r.ReasoningEffort != "high" || r.MaxCostUSD != 2 || r.Instructions == "" {
		t.Fatalf("%+v %v", r, err)
	}
}
