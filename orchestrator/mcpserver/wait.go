package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
)

// wait is the orchestrator's wait, with the cap as its default timeout and
// its progress sent to the client that asked for it: each worker that
// finishes, and a heartbeat saying what still runs.
func (s *Server) wait(ctx context.Context, args json.RawMessage) tools.Result {
	args = s.defaultTimeout(args)
	var hook func(tools.Progress)
	if p := progressFrom(ctx); p != nil {
		hook = func(pr tools.Progress) { p.send(ctx, pr.Text) }
		targets := waitTargets(args)
		stop := p.heartbeat(ctx, s.opt.Heartbeat, func(ctx context.Context, waited time.Duration) string {
			return s.stillRunning(ctx, waited, targets)
		})
		defer stop()
	}
	// The tools are built for this call, so that their progress goes to
	// this request; what the model has seen is shared by all calls.
	for _, t := range tools.Workers(s.workerOptions(hook)) {
		if t.Name == "wait" {
			return t.Handler(ctx, args)
		}
	}
	return tools.Errorf("internal error: zwarm has no wait tool")
}

// defaultTimeout sets timeout_s to the cap when the call gives none: the
// orchestrator's default is longer than an MCP client waits.
func (s *Server) defaultTimeout(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 && json.Unmarshal(args, &m) != nil {
		return args // the tool reports what is wrong with it
	}
	if m == nil {
		m = map[string]json.RawMessage{} // no arguments, or null: none
	}
	if v, ok := m["timeout_s"]; ok && strings.TrimSpace(string(v)) != "null" {
		return args
	}
	m["timeout_s"] = json.RawMessage(strconv.FormatFloat(s.cfg.WaitCap.Seconds(), 'f', -1, 64))
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// waitTargets are the ids (or prefixes) a wait's arguments name, as ids
// are written; none: it waits for any worker.
func waitTargets(args json.RawMessage) []string {
	var a struct {
		IDs []string `json:"session_ids"`
	}
	json.Unmarshal(args, &a)
	for i, id := range a.IDs {
		a.IDs[i] = listing.NormalPrefix(id)
	}
	return a.IDs
}

// stillRunning is the heartbeat's message: how long the wait has lasted
// and which of the workers it waits for (targets; none: any) still run.
func (s *Server) stillRunning(ctx context.Context, waited time.Duration, targets []string) string {
	msg := fmt.Sprintf("waited %s", waited.Round(time.Second))
	list, err := s.opt.Sessions.List(ctx, listing.Options{Source: Source})
	if err != nil && len(list) == 0 {
		return msg
	}
	var ids []string
	for _, w := range list {
		if w.Source == Source && !w.Settled() && waitsFor(targets, w.ID) {
			ids = append(ids, record.ShortID(w.ID))
		}
	}
	switch len(ids) {
	case 0:
		return msg + "; no worker is running"
	case 1:
		return msg + "; running: " + ids[0]
	}
	return fmt.Sprintf("%s; %d running: %s", msg, len(ids), strings.Join(ids, ", "))
}

func waitsFor(targets []string, id string) bool {
	for _, t := range targets {
		if strings.HasPrefix(id, t) {
			return true
		}
	}
	return len(targets) == 0
}
