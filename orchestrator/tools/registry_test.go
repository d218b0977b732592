package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func echoTool(name string) Tool {
	schema := object(map[string]prop{"text": str("what to echo"), "n": integer("a number")}, "text")
	return Tool{Name: name, Description: "echo", Schema: schema, Handler: func(ctx context.Context, args json.RawMessage) Result {
		var a struct {
			Text string `json:"text"`
			N    int    `json:"n"`
		}
		if err := decode(name, args, &a, schema); err != nil {
			return Errorf("%v", err)
		}
		if a.Text == "boom" {
			panic("kaboom")
		}
		return Result{Text: a.Text}
	}}
}

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(echoTool("echo"), echoTool("other"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(echoTool("echo")); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
	if names := r.Tools(); len(names) != 2 || names[0].Name != "echo" {
		t.Errorf("tools %v", names)
	}
	ctx := context.Background()
	cases := []struct {
		name, args string
		want       string
		isErr      bool
	}{
		{"echo", `{"text":"hi"}`, "hi", false},
		{"nope", `{}`, `there is no tool "nope"; the tools are: echo, other`, true},
		{"echo", `[1]`, "must be a JSON object", true},
		{"echo", `{"text":"hi","extra":1}`, `unknown field "extra" (its parameters: n, text)`, true},
		{"echo", `{"text":"hi","n":"three"}`, "parameter n must be of type integer, not a JSON string", true},
		{"echo", `{"text":"boom"}`, "tool echo failed unexpectedly (kaboom)", true},
		{"echo", ``, "", false},
	}
	for _, c := range cases {
		res := r.Call(ctx, c.name, json.RawMessage(c.args))
		if res.IsError != c.isErr || !strings.Contains(res.Text, c.want) {
			t.Errorf("%s(%s) = %+v, want error %v containing %q", c.name, c.args, res, c.isErr, c.want)
		}
	}
}

func TestSchemasAreObjects(t *testing.T) {
	var all []Tool
	all = append(all, Workers(WorkerOptions{})...)
	all = append(all, Shell(nil, Dirs{})...)
	all = append(all, Sleep(), Finish(func(string) {}), AskUser(nil))
	r, err := NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	want := "ask_user check_session converse delegate diff_session end_session exec_command finish get_trajectory land_session list_sessions " +
		"peek_session sleep update_session wait write_stdin"
	if got := strings.Join(r.Names(), " "); got != want {
		t.Errorf("tools %s", got)
	}
	for _, tl := range all {
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.Schema, &s); err != nil || s.Type != "object" || s.Properties == nil || s.Required == nil {
			t.Errorf("%s schema %s: %v", tl.Name, tl.Schema, err)
		}
		for _, req := range s.Required {
			if _, ok := s.Properties[req]; !ok {
				t.Errorf("%s requires unknown %s", tl.Name, req)
			}
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
	}
}

func TestDirs(t *testing.T) {
	root := t.TempDir()
	base, other, outside := filepath.Join(root, "base"), filepath.Join(root, "other"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(base, "sub"), other, outside} {
		os.MkdirAll(d, 0o700)
	}
	os.Symlink(outside, filepath.Join(base, "escape"))
	os.WriteFile(filepath.Join(base, "file"), nil, 0o600)
	d := Dirs{Base: base, Allowed: []string{other}}
	for dir, want := range map[string]string{
		"":                       base,
		"sub":                    filepath.Join(base, "sub"),
		filepath.Join(base):      base,
		other:                    other,
		"../other":               other,
		"escape":                 "outside the allowed directories",
		"../outside":             "outside the allowed directories",
		"/":                      "outside the allowed directories",
		"missing":                "does not exist",
		"file":                   "is not a directory",
		filepath.Join(root, "b"): "does not exist",
	} {
		got, err := d.Resolve(dir)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, want) {
			t.Errorf("Resolve(%q) = %q, want %q", dir, got, want)
		}
	}
}
