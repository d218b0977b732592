package orchestrator

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// history builds conversations the way a run writes them.
type history struct {
	items []json.RawMessage
	n     int
}

func newHistory() *history {
	return &history{items: []json.RawMessage{message("developer", "SYSTEM PROMPT"), message("user", "THE TASK")}}
}

func (h *history) raw(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// response appends one model response: reasoning items, an optional
// message and calls; the calls' outputs follow, in the order given.
func (h *history) response(rng *rand.Rand, reasoning int, msg bool, calls int, outBytes func() int) {
	h.n++
	msg = msg || calls == 0 // a response says or calls something
	for r := 0; r < reasoning; r++ {
		h.items = append(h.items, h.raw(map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d_%d", h.n, r),
			"summary": []any{}, "encrypted_content": strings.Repeat("e", 50+rng.Intn(400))}))
	}
	if msg {
		h.items = append(h.items, h.raw(map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", h.n),
			"content": []any{map[string]any{"type": "output_text", "text": "thinking aloud"}}}))
	}
	var ids []string
	for c := 0; c < calls; c++ {
		id := fmt.Sprintf("call_%d_%d", h.n, c)
		ids = append(ids, id)
		args := fmt.Sprintf(`{"session_id":"%08x-0000-4000-8000-%012d"}`, h.n, c)
		h.items = append(h.items, h.raw(map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": []string{"wait", "delegate", "exec_command"}[c%3], "arguments": args}))
	}
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for i, id := range ids {
		if i == 1 && rng.Intn(4) == 0 {
			// A nudge between the outputs of one response.
			h.items = append(h.items, message("developer", "[watcher:test] keep going"))
		}
		h.items = append(h.items, output(id, strings.Repeat("o", outBytes())))
	}
	if calls == 0 {
		h.items = append(h.items, message("developer", "Use a tool."))
	}
}

func randomStep(h *history, rng *rand.Rand) {
	outBytes := func() int {
		if rng.Intn(20) == 0 {
			return 20000 + rng.Intn(80000) // a huge tool output
		}
		return rng.Intn(600)
	}
	h.response(rng, rng.Intn(3), rng.Intn(4) == 0, rng.Intn(4), outBytes)
	if rng.Intn(8) == 0 {
		h.items = append(h.items, message("developer", "[watcher:x] a nudge"))
	}
}

// checkPairs fails unless every output has its call before it, every call
// its output after it, and every reasoning item is followed by more of its
// response.
func checkPairs(items []json.RawMessage) error {
	called, answered := map[string]bool{}, map[string]bool{}
	infos := make([]item, len(items))
	for i, raw := range items {
		infos[i] = inspect(raw)
	}
	for i, it := range infos {
		switch {
		case it.isCall():
			if called[it.CallID] {
				return fmt.Errorf("item %d: call %s twice", i, it.CallID)
			}
			called[it.CallID] = true
		case it.isOutput():
			if !called[it.CallID] {
				return fmt.Errorf("item %d: output of %s without its call before it", i, it.CallID)
			}
			answered[it.CallID] = true
		}
		if it.Type == "reasoning" {
			j := i + 1
			for j < len(items) && infos[j].Type == "reasoning" {
				j++
			}
			if j == len(items) || !infos[j].isModel() {
				return fmt.Errorf("item %d: reasoning without the item that followed it", i)
			}
		}
	}
	for id := range called {
		if !answered[id] {
			return fmt.Errorf("call %s without its output", id)
		}
	}
	return nil
}

func TestCompactKeepsPairsWhateverTheShape(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		h := newHistory()
		window := int64(2000 + rng.Intn(30000))
		at, to := window*8/10, window*6/10
		compactions := 0
		for step := 0; step < 40+rng.Intn(80); step++ {
			randomStep(h, rng)
			if estimateAll(h.items, bytesEstimate) <= at {
				continue
			}
			before := append([]json.RawMessage(nil), h.items...)
			if err := checkPairs(before); err != nil {
				t.Fatalf("seed %d: the generator made a bad history: %v", seed, err)
			}
			out, info := compact(h.items, 2, to, bytesEstimate)
			if info == nil {
				t.Fatalf("seed %d step %d: over the threshold and nothing compacted", seed, step)
			}
			compactions++
			if err := checkPairs(out); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if string(out[0]) != string(before[0]) || string(out[1]) != string(before[1]) {
				t.Fatalf("seed %d: the system prompt or the task was lost", seed)
			}
			if m := inspect(out[2]); !strings.HasPrefix(m.text(), markerPrefix) {
				t.Fatalf("seed %d: no marker after the task: %s", seed, out[2])
			}
			if err := subsequence(before, out[3:]); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			got := estimateAll(out, bytesEstimate)
			if got > to && !onlyNewest(before, out[3:]) {
				t.Fatalf("seed %d step %d: %d tokens after compaction, target %d, %d items kept", seed, step, got, to, len(out)-3)
			}
			if info.AfterTokens != got || info.BeforeTokens <= info.AfterTokens {
				t.Fatalf("seed %d: info %+v, got %d", seed, info, got)
			}
			h.items = out
		}
		if compactions == 0 && seed%10 == 0 {
			t.Logf("seed %d never compacted", seed)
		}
	}
}

// subsequence checks kept items appear in the original order (outputs
// may have been cut, so they are matched by call id).
func subsequence(orig, kept []json.RawMessage) error {
	j := 0
	for _, k := range kept {
		ki := inspect(k)
		for ; j < len(orig); j++ {
			oi := inspect(orig[j])
			if string(orig[j]) == string(k) || ki.isOutput() && oi.isOutput() && oi.CallID == ki.CallID {
				break
			}
		}
		if j == len(orig) {
			return fmt.Errorf("kept item not in the original order: %.200s", k)
		}
		j++
	}
	return nil
}

// onlyNewest reports whether kept is at most the newest unit of orig: the
// one case where the target may be missed (nothing left to drop).
func onlyNewest(orig, kept []json.RawMessage) bool {
	infos := make([]item, len(orig))
	for i, raw := range orig {
		infos[i] = inspect(raw)
	}
	us := units(orig, infos, 2)
	last := us[0]
	for _, u := range us {
		if u[len(u)-1] > last[len(last)-1] {
			last = u
		}
	}
	return len(kept) <= len(last)
}

func TestCompactHugeNewestOutputIsCut(t *testing.T) {
	h := newHistory()
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 5; i++ {
		h.response(rng, 1, false, 1, func() int { return 100 })
	}
	h.response(rng, 1, false, 2, func() int { return 200_000 })
	out, info := compact(h.items, 2, 10_000, bytesEstimate)
	if info == nil || info.ClippedItems != 2 || info.DroppedCalls != 5 {
		t.Fatalf("info %+v", info)
	}
	if err := checkPairs(out); err != nil {
		t.Fatal(err)
	}
	if got := estimateAll(out, bytesEstimate); got > 10_000 {
		t.Errorf("%d tokens", got)
	}
	if !strings.Contains(string(out[len(out)-1]), "bytes cut to fit the context window") {
		t.Errorf("not cut: %.300s", out[len(out)-1])
	}
	marker := inspect(out[2]).text()
	for _, want := range []string{"among them 5 tool calls", "(wait ×5)", "00000001-0000-4000-8000-000000000000", "were cut in the middle"} {
		if !strings.Contains(marker, want) {
			t.Errorf("marker lacks %q: %s", want, marker)
		}
	}
	// A second compaction folds the first marker in.
	for i := 0; i < 30; i++ {
		h.response(rng, 1, false, 1, func() int { return 2000 })
	}
	again, info2 := compact(append(out, h.items[len(h.items)-60:]...), 2, 10_000, bytesEstimate)
	if info2 == nil || !strings.Contains(inspect(again[2]).text(), "Earlier: To keep") || strings.HasPrefix(inspect(again[3]).text(), markerPrefix) {
		t.Fatalf("second compaction: %+v %.300s", info2, again[2])
	}
}

// A model that wrote a call of megabytes (a task pasted whole into
// delegate) has the call's arguments cut, still JSON, so the run can go
// on: dropping older steps alone could never bring it under the window.
func TestCompactHugeCallArgumentsAreCut(t *testing.T) {
	h := newHistory()
	rng := rand.New(rand.NewSource(9))
	for i := 0; i < 3; i++ {
		h.response(rng, 1, false, 1, func() int { return 100 })
	}
	task := "BEGIN " + strings.Repeat("x", 2<<20) + " END"
	args, _ := json.Marshal(map[string]any{"task": task, "model": "gpt-5.1-codex-mini", "n": 1})
	h.items = append(h.items, h.raw(map[string]any{"type": "function_call", "id": "fc_big", "call_id": "call_big", "name": "delegate", "arguments": string(args)}),
		output("call_big", "started 0199"))
	out, info := compact(h.items, 2, 10_000, bytesEstimate)
	if info == nil || info.ClippedItems != 1 {
		t.Fatalf("info %+v", info)
	}
	if got := estimateAll(out, bytesEstimate); got > 10_000 {
		t.Fatalf("%d tokens after compaction, want at most 10,000", got)
	}
	if err := checkPairs(out); err != nil {
		t.Fatal(err)
	}
	var call struct{ Arguments string }
	if err := json.Unmarshal(out[len(out)-2], &call); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(call.Arguments), &got); err != nil {
		t.Fatalf("the cut arguments are not JSON: %v: %.200s", err, call.Arguments)
	}
	cut, _ := got["task"].(string)
	if !strings.HasPrefix(cut, "BEGIN ") || !strings.HasSuffix(cut, " END") || !strings.Contains(cut, "bytes cut to fit the context window") || got["model"] != "gpt-5.1-codex-mini" || got["n"] != 1.0 {
		t.Errorf("the arguments after the cut: %.300s", call.Arguments)
	}
}

func TestCompactUnderTargetIsANoop(t *testing.T) {
	h := newHistory()
	h.response(rand.New(rand.NewSource(1)), 1, true, 1, func() int { return 10 })
	out, info := compact(h.items, 2, 1_000_000, bytesEstimate)
	if info != nil || len(out) != len(h.items) {
		t.Fatalf("%+v", info)
	}
}

func TestRepair(t *testing.T) {
	h := newHistory()
	rng := rand.New(rand.NewSource(3))
	h.response(rng, 1, false, 2, func() int { return 10 })
	good := len(h.items)
	// A crash after the response's items were written, before its outputs;
	// then a torn response with its reasoning alone; an orphan output.
	h.items = append(h.items,
		h.raw(map[string]any{"type": "reasoning", "id": "rs_x", "encrypted_content": "abc"}),
		h.raw(map[string]any{"type": "function_call", "call_id": "call_lost", "name": "delegate", "arguments": "{}"}),
		output("call_nobody", "orphan"),
		h.raw(map[string]any{"type": "reasoning", "id": "rs_dangling"}),
		h.raw(map[string]any{"type": "reasoning", "id": "rs_dangling2"}),
	)
	out, notes := repair(h.items)
	if err := checkPairs(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(out) != good+3 || len(notes) != 4 {
		t.Fatalf("%d items, notes %q", len(out), notes)
	}
	if !strings.Contains(string(out[len(out)-1]), "the run stopped before this call returned") {
		t.Errorf("last %s", out[len(out)-1])
	}
	again, notes := repair(out)
	if len(notes) != 0 || len(again) != len(out) {
		t.Errorf("repair is not idempotent: %q", notes)
	}
}

// A crash between the outputs of one response's calls: the outputs that
// were written and the ones made up for the rest follow the calls in the
// order of the calls, and so do outputs written out of order. A call_id
// used twice pairs each call with its own output.
func TestRepairKeepsTheOrderOfTheCalls(t *testing.T) {
	h := newHistory()
	call := func(id string) json.RawMessage {
		return h.raw(map[string]any{"type": "function_call", "call_id": id, "name": "wait", "arguments": "{}"})
	}
	base := len(h.items)
	h.items = append(h.items, call("call_a"), call("call_b"), call("call_c"), output("call_a", "a done"))
	out, notes := repair(h.items)
	if err := checkPairs(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := outputOrder(out[base:]); got != "call_a call_b call_c" {
		t.Fatalf("outputs in the order %s; notes %q", got, notes)
	}
	if !strings.Contains(string(out[base+3]), "a done") {
		t.Errorf("the output written was not kept: %s", out[base+3])
	}

	h.items = append(h.items[:base], call("call_a"), call("call_b"), call("call_c"),
		output("call_c", "c done"), message("developer", "[watcher:stall] in between"), output("call_a", "a done"),
		call("call_d"), output("call_d", "d"), call("call_d"), output("call_d", "d again"))
	out, notes = repair(h.items)
	if err := checkPairs(out[:base+7]); err != nil { // checkPairs refuses the call_id used twice
		t.Fatalf("%v\n%s", err, out)
	}
	if got := outputOrder(out[base:]); got != "call_a call_b call_c call_d call_d" {
		t.Fatalf("outputs in the order %s; notes %q", got, notes)
	}
	if !strings.Contains(strings.Join(notes, "; "), "back in the order of the calls") {
		t.Errorf("notes %q", notes)
	}
	if inspect(out[base+6]).Role != "developer" || !strings.Contains(string(out[len(out)-1]), "d again") {
		t.Errorf("history after repair:\n%s", out[base:])
	}
	if again, notes := repair(out); len(notes) != 0 || len(again) != len(out) {
		t.Errorf("repair is not idempotent: %q", notes)
	}
}

// outputOrder lists the call ids of the outputs among items, in order.
func outputOrder(items []json.RawMessage) string {
	var ids []string
	for _, raw := range items {
		if it := inspect(raw); it.isOutput() {
			ids = append(ids, it.CallID)
		}
	}
	return strings.Join(ids, " ")
}

// The user's messages survive a compaction that drops the steps around
// them, in their places; the conversation stays valid.
func TestCompactionKeepsTheUsersMessages(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	h := newHistory()
	for i := 0; i < 60; i++ {
		h.response(rng, 1, false, 2, func() int { return 800 })
		if i%15 == 3 {
			h.items = append(h.items, message("user", fromUser(i, fmt.Sprintf("steer %d", i))))
		}
	}
	out, info := compact(h.items, 2, estimateAll(h.items, bytesEstimate)/4, bytesEstimate)
	if info == nil || info.DroppedItems == 0 {
		t.Fatal("nothing was dropped")
	}
	if err := checkPairs(out); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, raw := range out[2:] {
		if it := inspect(raw); it.isInput() && it.Role == "user" {
			said = append(said, it.text())
		}
	}
	want := "[from the user, message 3] steer 3|[from the user, message 18] steer 18|[from the user, message 33] steer 33|[from the user, message 48] steer 48"
	if strings.Join(said, "|") != want {
		t.Errorf("kept %q", said)
	}
	// Only messages of the user's: nothing else can go, so they go too.
	only := newHistory()
	for i := 0; i < 5; i++ {
		only.items = append(only.items, message("user", strings.Repeat("x", 4000)))
	}
	if out, _ := compact(only.items, 2, 1500, bytesEstimate); len(out) >= len(only.items) {
		t.Errorf("kept %d of %d items", len(out), len(only.items))
	}
}
