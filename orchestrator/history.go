package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// units groups the items after head into the pieces that must be kept or
// dropped together: the items of one model response (its reasoning goes
// with what follows it), with the outputs of its calls wherever they are.
// Input messages stand alone. Dropping whole units never leaves a result
// without its call, a call without its result, or reasoning without the
// item it preceded, whatever the shape of the history.
func units(items []json.RawMessage, infos []item, head int) [][]int {
	n := len(items)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	calls := map[string]int{}
	for i := head; i < n; i++ {
		it := infos[i]
		if i > head && it.isModel() && infos[i-1].isModel() {
			union(i-1, i)
		}
		switch {
		case it.isCall():
			if j, ok := calls[it.CallID]; ok {
				union(j, i)
			}
			calls[it.CallID] = i
		case it.isOutput() && it.CallID != "":
			if j, ok := calls[it.CallID]; ok {
				union(j, i)
			} else {
				// An output before its call (never written by this run):
				// remember it so a later call joins it.
				calls[it.CallID] = i
			}
		}
	}
	byRoot := map[int][]int{}
	var roots []int
	for i := head; i < n; i++ {
		r := find(i)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	out := make([][]int, 0, len(roots))
	for _, r := range roots {
		out = append(out, byRoot[r])
	}
	return out
}

// repair makes a history the API accepts, whatever a crash left: the
// outputs of a response's calls follow it in the order of the calls (a
// call without an output gets one saying the run stopped before it
// returned), an output whose call is missing, or a second output for one
// call, is dropped, and reasoning with nothing after it in its response is
// dropped. A call_id the model used twice pairs each call with the outputs
// in the order they were written. It returns what it did, in words.
func repair(items []json.RawMessage) ([]json.RawMessage, []string) {
	infos := make([]item, len(items))
	for i, raw := range items {
		infos[i] = inspect(raw)
	}
	var notes []string
	// The outputs of each call id, by index, in the order written: only
	// as many as there were calls with that id before them.
	calls := map[string]int{}
	outs := map[string][]int{}
	for i, it := range infos {
		switch {
		case it.isCall():
			calls[it.CallID]++
		case it.isOutput() && (it.CallID == "" || calls[it.CallID] == 0):
			notes = append(notes, fmt.Sprintf("dropped a result for call %q, which is not in the conversation", it.CallID))
		case it.isOutput() && len(outs[it.CallID]) >= calls[it.CallID]:
			notes = append(notes, fmt.Sprintf("dropped a second result for call %q", it.CallID))
		case it.isOutput():
			outs[it.CallID] = append(outs[it.CallID], i)
		}
	}
	// Reasoning at the end of a response, with nothing of the response
	// after it, is dangling.
	dangling := make([]bool, len(items))
	for i := len(items) - 1; i >= 0; i-- {
		if infos[i].Type != "reasoning" {
			continue
		}
		next := i + 1
		for next < len(items) && dangling[next] {
			next++
		}
		dangling[i] = next == len(items) || !infos[next].isModel() || infos[next].Type == "reasoning" && dangling[next]
	}
	var out []json.RawMessage
	var pending []item // the calls of the current response, in order
	last, moved := -1, false
	flush := func() {
		for _, c := range pending {
			if q := outs[c.CallID]; len(q) > 0 {
				out = append(out, items[q[0]])
				outs[c.CallID] = q[1:]
				moved = moved || q[0] < last
				last = q[0]
				continue
			}
			out = append(out, outputFor(c, "No result: the run stopped before this call returned (its process ended). "+
				"Its effect is unknown: check before repeating it (list_sessions shows every worker the run started)."))
			notes = append(notes, fmt.Sprintf("gave %s call %s the result it never got", c.Name, c.CallID))
		}
		pending = nil
	}
	inResponse := false
	for i, raw := range items {
		it := infos[i]
		switch {
		case it.isOutput():
			// Written after its call's response, whatever came between.
			inResponse = false
			continue
		case dangling[i]:
			notes = append(notes, "dropped a reasoning item that nothing followed")
			continue
		}
		if !it.isModel() || !inResponse {
			flush() // the response before is over
		}
		inResponse = it.isModel()
		out = append(out, raw)
		if it.isCall() {
			pending = append(pending, it)
		}
	}
	flush()
	if !moved && len(out) == len(items) {
		for i := range out {
			moved = moved || !bytes.Equal(out[i], items[i])
		}
	}
	if moved {
		notes = append(notes, "put the results of the calls back in the order of the calls")
	}
	return out, notes
}

// withoutDangling drops the reasoning items of a response that nothing of
// the response follows (an incomplete response cut after its reasoning).
func withoutDangling(items []json.RawMessage) []json.RawMessage {
	end := len(items)
	for end > 0 && inspect(items[end-1]).Type == "reasoning" {
		end--
	}
	return items[:end]
}
