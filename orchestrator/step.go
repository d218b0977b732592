package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"github.com/zwarm/zwarm/watchers"
)

// call makes the step's model call: compaction if the conversation nears
// the context window, the observation, and new calls after a stream broke
// off (at most StreamRetries).
func (r *Run) call(ctx context.Context) (*model.Response, error) {
	step := r.rec.Steps + 1
	text, news := r.observe(step)
	obs := message("developer", text)
	if err := r.compactIfNeeded(step, obs); err != nil {
		return nil, err
	}
	input := make([]json.RawMessage, 0, len(r.items)+1)
	input = append(append(input, r.items...), obs)
	req := &model.Request{Model: r.set.Model, Input: input, Tools: r.modelTools(), ReasoningEffort: r.set.ReasoningEffort}
	size := inputBytes(input)
	r.emit(runs.Event{Type: runs.EventModelCall, Step: step, InputItems: len(input), EstimatedTokens: r.estimate(size), Observation: inspect(obs).text()})
	actx := model.ObserveAttempts(ctx, func(a model.Attempt) {
		if ctx.Err() != nil {
			return // the run or the turn was stopped: the API did nothing wrong
		}
		text := "the model API answered with an error, which is not retried"
		switch {
		case a.Retried:
			text = "the model API answered with an error; trying again"
		case a.NotRetried != "":
			text = "the model API answered with an error, and it is not tried again: " + a.NotRetried
		}
		ev := runs.Event{Type: runs.EventRetry, Step: step, Attempt: a.N + 1, Status: a.Status, Text: text}
		if a.Err != nil {
			ev.Error = a.Err.Error()
		}
		if a.RetryAfter != "" {
			ev.Text += " (Retry-After: " + a.RetryAfter + ")"
		}
		r.emit(ev)
	})
	for attempt := 1; ; attempt++ {
		began := time.Now()
		resp, err := r.opt.Client.Respond(actx, req)
		if err == nil {
			r.announced(news)
			if resp.Usage.InputTokens > 0 {
				r.overhead = max(0, resp.Usage.InputTokens-int64(size+3)/4)
			}
			r.emit(runs.Event{Type: runs.EventModelResponse, Step: step, DurationMS: time.Since(began).Milliseconds(),
				Items: itemTypes(resp.Output), Text: texts(resp.Output, false), Reasoning: texts(resp.Output, true)})
			return resp, nil
		}
		if !errors.Is(err, model.ErrStreamBroken) || attempt > r.set.StreamRetries || ctx.Err() != nil {
			return nil, err
		}
		r.emit(runs.Event{Type: runs.EventRetry, Step: step, Attempt: attempt, Error: err.Error(), Text: "the response stream broke off; calling the model again"})
	}
}

func (r *Run) modelTools() []model.Tool {
	ts := r.reg.Tools()
	out := make([]model.Tool, len(ts))
	for i, t := range ts {
		out[i] = model.Tool{Name: t.Name, Description: t.Description, Parameters: t.Schema}
	}
	return out
}

// estimate is the tokens of a request whose items are size bytes: bytes/4
// for the items, plus what the last call showed the rest of a request
// (tool definitions, formatting) costs.
func (r *Run) estimate(size int) int64 { return r.overhead + int64(size+3)/4 }

func inputBytes(items []json.RawMessage) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	return n
}

// compactIfNeeded compacts the conversation when, with the observation,
// it passes CompactAt of the context window, down to CompactTo.
func (r *Run) compactIfNeeded(step int, obs json.RawMessage) error {
	window := float64(r.set.ContextWindow)
	size := inputBytes(r.items) + len(obs)
	if float64(r.estimate(size)) <= r.set.CompactAt*window {
		return nil
	}
	target := int64(r.set.CompactTo*window) - r.overhead - bytesEstimate(obs)
	out, info := compact(r.items, 2, target, bytesEstimate)
	if info == nil {
		r.emit(runs.Event{Type: runs.EventNotice, Step: step, Text: "the conversation is near the context window and nothing more can be dropped"})
		return nil
	}
	if err := runs.RewriteJournal(r.convo, out); err != nil {
		return err
	}
	r.items = out
	r.mu.Lock()
	r.rec.Compactions++
	r.mu.Unlock()
	r.emit(runs.Event{Type: runs.EventCompaction, Step: step, Compaction: info})
	return nil
}

// respond records the model's reply and runs the tools it called.
func (r *Run) respond(ctx context.Context, resp *model.Response) error {
	step := r.rec.Steps + 1
	out := resp.Output
	if resp.Incomplete != "" {
		text := fmt.Sprintf("the response was incomplete (%s)", resp.Incomplete)
		if kept := withoutDangling(out); len(kept) < len(out) {
			text += fmt.Sprintf("; dropped %d reasoning items that nothing followed", len(out)-len(kept))
			out = kept
		}
		r.emit(runs.Event{Type: runs.EventNotice, Step: step, Text: text})
	}
	if r.callIDs == nil {
		r.callIDs = map[string]bool{}
		for _, raw := range r.items {
			if it := inspect(raw); it.isCall() {
				r.callIDs[it.CallID] = true
			}
		}
	}
	if err := r.appendItems(out...); err != nil {
		return err
	}
	cost := r.addUsage(resp.Usage)
	if cost == nil && !r.unpriced {
		r.unpriced = true
		text := fmt.Sprintf("the price of model %s is unknown, so its cost is not counted", r.set.Model)
		if r.set.Limits.MaxCostUSD > 0 {
			text += " against max_cost"
		}
		r.emit(runs.Event{Type: runs.EventNotice, Step: step, Text: text + fmt.Sprintf(`; add [prices.%q] to config.toml`, r.set.Model)})
	}
	r.mu.Lock()
	r.rec.Steps = step
	r.mu.Unlock()
	for _, raw := range out {
		it := inspect(raw)
		if it.Type == "reasoning" || it.Type == "message" {
			if t := it.text(); t != "" {
				r.messages = append(r.messages, watchers.Message{Step: step, Kind: it.Type, Text: t})
			}
		}
	}
	u := resp.Usage
	r.emit(runs.Event{Type: runs.EventUsage, Step: step, Usage: &u, CostUSD: cost, Totals: r.totals()})
	var calls []item
	for _, raw := range out {
		if it := inspect(raw); it.isCall() {
			calls = append(calls, it)
		}
	}
	if len(calls) == 0 {
		if r.set.Pilot {
			// The model answered the person: the turn ends.
			text := texts(out, false)
			r.answer = &text
			return nil
		}
		if r.silent++; r.silent >= maxSilent {
			return nil // the loop ends the run
		}
		return r.appendItems(message("developer", reminder))
	}
	r.silent = 0
	for len(calls) > 0 {
		n := together(calls)
		if err := r.runCalls(ctx, step, calls[:n]); err != nil {
			return err
		}
		calls = calls[n:]
	}
	return nil
}

// maxSilent is how many replies in a row that call no tool end a run:
// reminded each time, a model that still only talks will not stop, and
// each reply is a step paid for.
const maxSilent = 10

// together is how many of calls, from the first, run at once: a reply's
// delegate calls in a row start their workers together (under a runner
// that submits many as one, one job array); any other call runs alone.
func together(calls []item) int {
	n := 1
	for n < len(calls) && calls[0].Name == "delegate" && calls[n].Name == "delegate" {
		n++
	}
	return n
}

// runCalls runs calls, at once when they are several, and records their
// results in order. Every call gets an output, so the conversation stays
// valid however the run goes on.
func (r *Run) runCalls(ctx context.Context, step int, calls []item) error {
	type done struct {
		args  json.RawMessage
		began time.Time
		text  string
		isErr bool
	}
	out := make([]done, len(calls))
	again := make([]bool, len(calls))
	for i, c := range calls {
		// A call_id the conversation already has cannot be answered on its
		// own: the model is told so instead of the call being run.
		again[i] = r.callIDs[c.CallID]
		r.callIDs[c.CallID] = true
		out[i].args = clipArgs(c.Arguments)
		r.emit(runs.Event{Type: runs.EventToolCall, Step: step, CallID: c.CallID, Tool: c.Name, Args: out[i].args})
		out[i].began = time.Now()
	}
	if len(calls) == 1 {
		out[0].text, out[0].isErr = r.callOutput(ctx, step, calls[0], again[0])
	} else {
		order := &spawnOrder{ids: make([]string, len(calls))}
		sessions.Together(ctx, len(calls), func(i int, ctx context.Context) {
			ctx = context.WithValue(ctx, spawnAtKey{}, spawnAt{order, i})
			out[i].text, out[i].isErr = r.callOutput(ctx, step, calls[i], again[i])
		})
		r.addWorkers(order.ids...)
	}
	for i, c := range calls {
		d := out[i]
		if err := r.appendItems(outputFor(c, d.text)); err != nil {
			return err
		}
		r.calls = append(r.calls, watchers.Call{Step: step, ID: c.CallID, Name: c.Name, Args: d.args, Output: render.Clip(d.text, outputBound), IsError: d.isErr, At: d.began})
		r.emit(runs.Event{Type: runs.EventToolResult, Step: step, CallID: c.CallID, Tool: c.Name, Output: clipOutput(d.text), IsError: d.isErr,
			DurationMS: time.Since(d.began).Milliseconds()})
	}
	return nil
}

// callOutput runs one tool call, or says why it is not run, and returns
// its output.
func (r *Run) callOutput(ctx context.Context, step int, c item, again bool) (text string, isErr bool) {
	switch {
	case again:
		text, isErr = fmt.Sprintf("Not run: call_id %q was already used by an earlier call in this conversation; "+
			"every call needs a call_id of its own. Call the tool again if it is still needed.", c.CallID), true
	case r.summary != nil:
		text, isErr = "Not run: an earlier call to finish ended the run.", true
	case c.Type != "function_call":
		text, isErr = fmt.Sprintf("Not run: %s items are not supported; call the function tools.", c.Type), true
	case ctx.Err() != nil && r.set.Pilot:
		// An earlier call of the reply was stopped: the person wants the
		// turn over, not its remaining calls started.
		text, isErr = "Not run: "+r.whatStopped(ctx, "before this call")+".", true
	default:
		cctx, stop := ctx, func() {}
		if interruptible[c.Name] {
			cctx, stop = r.untilMessage(ctx)
		}
		// The call's span is the parent of the workers it starts: they
		// record it, and their spans join the run's trace.
		cctx = telemetry.Context(cctx, runs.TraceOf(r.rec.ID), runs.ToolSpan(r.rec.ID, step, c.CallID))
		res := r.reg.Call(cctx, c.Name, json.RawMessage(c.Arguments))
		stop()
		text, isErr = res.Text, res.IsError
		if isErr && ctx.Err() != nil && (strings.Contains(text, context.DeadlineExceeded.Error()) || strings.Contains(text, context.Canceled.Error())) {
			text = r.cutShort(ctx, text)
		}
	}
	return text, isErr
}

// cutShort says what stopped a call that failed as the run's context
// ended: the bare "context deadline exceeded" names no cause.
func (r *Run) cutShort(ctx context.Context, text string) string {
	return fmt.Sprintf("Stopped: %s. (%s)", r.whatStopped(ctx, "during this call"), strings.TrimSpace(text))
}

// whatStopped says what ended ctx, for the output of a call it stopped
// (when: "during this call") or kept from running.
func (r *Run) whatStopped(ctx context.Context, when string) string {
	switch {
	case errors.Is(context.Cause(ctx), errWallClock) && r.set.Pilot:
		return fmt.Sprintf("the turn's %s timeout ended it %s", r.set.Limits.Timeout.Duration, when)
	case errors.Is(context.Cause(ctx), errWallClock):
		return fmt.Sprintf("the run's %s timeout ended this call", r.set.Limits.Timeout.Duration)
	case r.set.Pilot:
		return "the user stopped your turn (Ctrl+C) " + when
	}
	return "the run was interrupted (Ctrl+C or a signal) " + when + "; --resume continues the run"
}

// clipOutput bounds a tool result for events.jsonl, keeping its lines.
func clipOutput(s string) string {
	if len(s) <= outputBound {
		return s
	}
	return middleCut(s, outputBound)
}

// clipArgs is a call's arguments for events.jsonl and the watchers: as
// the model wrote them, a JSON string of them if they are not JSON, and
// with their longest strings cut in the middle past argsBound (a task of
// megabytes is not written again with each event, nor held by the run).
func clipArgs(args string) json.RawMessage {
	if len(args) > argsBound {
		args = cutArguments(args, argsBound)
	}
	if !json.Valid([]byte(args)) {
		b, _ := json.Marshal(args)
		return b
	}
	return json.RawMessage(args)
}

// argsBound is the most of a call's arguments an event keeps.
const argsBound = 8 << 10

func itemTypes(items []json.RawMessage) []string {
	out := make([]string, len(items))
	for i, raw := range items {
		it := inspect(raw)
		out[i] = it.Type
		if it.isCall() {
			out[i] += ":" + it.Name
		}
	}
	return out
}

// texts joins the model's messages, or its reasoning summaries.
func texts(items []json.RawMessage, reasoning bool) string {
	var parts []string
	for _, raw := range items {
		it := inspect(raw)
		if (it.Type == "reasoning") == reasoning && (it.Type == "reasoning" || it.Type == "message") {
			if t := strings.TrimSpace(it.text()); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// outputBound bounds a tool result in events.jsonl; the conversation keeps
// it whole.
const outputBound = 2000
