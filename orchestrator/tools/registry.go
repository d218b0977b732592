package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
)

// Result is what a tool call returns to the model.
type Result struct {
	Text string
	// IsError marks a call that did not do what was asked: bad arguments,
	// an unknown session, a refusal. The text says why.
	IsError bool
}

// Errorf is an error result.
func Errorf(format string, a ...any) Result {
	return Result{Text: fmt.Sprintf(format, a...), IsError: true}
}

// JSON is a result holding v as compact JSON.
func JSON(v any) Result {
	b, err := json.Marshal(v)
	if err != nil {
		return Errorf("internal error: cannot encode the result: %v", err)
	}
	return Result{Text: string(b)}
}

// Handler runs a tool on its JSON arguments (an object).
type Handler func(ctx context.Context, args json.RawMessage) Result

// Tool is one tool: what the model is told about it and what runs it.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments object.
	Schema  json.RawMessage
	Handler Handler
}

// Registry is a set of tools with unique names, in the order added.
type Registry struct {
	tools  []Tool
	byName map[string]int
}

// NewRegistry returns a registry of the given tools.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]int{}}
	return r, r.Add(tools...)
}

// Add registers more tools. A name already taken is an error.
func (r *Registry) Add(tools ...Tool) error {
	for _, t := range tools {
		if t.Name == "" || t.Handler == nil || len(t.Schema) == 0 {
			return fmt.Errorf("tool %q: a tool needs a name, a schema and a handler", t.Name)
		}
		if _, dup := r.byName[t.Name]; dup {
			return fmt.Errorf("tool %q is registered twice", t.Name)
		}
		r.byName[t.Name] = len(r.tools)
		r.tools = append(r.tools, t)
	}
	return nil
}

// Tools returns the tools in the order they were added.
func (r *Registry) Tools() []Tool { return append([]Tool(nil), r.tools...) }

// Get finds a tool by name.
func (r *Registry) Get(name string) (Tool, bool) {
	i, ok := r.byName[name]
	if !ok {
		return Tool{}, false
	}
	return r.tools[i], true
}

// Names lists the tool names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// Call runs a tool. An unknown tool, arguments that are not a JSON object
// and a handler that panics all become error results: nothing a model
// sends can end the caller.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (res Result) {
	t, ok := r.Get(name)
	if !ok {
		return Errorf("there is no tool %q; the tools are: %s", name, strings.Join(r.Names(), ", "))
	}
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage(`{}`)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(args, &probe); err != nil {
		return Errorf("the arguments of %s must be a JSON object matching its schema (%v); got: %s", name, err, clipBytes(args, 200))
	}
	defer func() {
		if p := recover(); p != nil {
			res = Errorf("tool %s failed unexpectedly (%v); this is a bug in zwarm, not in your arguments:\n%s", name, p, clipBytes(debug.Stack(), 2000))
		}
	}()
	return t.Handler(ctx, args)
}

func clipBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
