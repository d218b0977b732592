package orchestrator

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/zwarm/zwarm/orchestrator/runs"
)

// markerPrefix starts the message compaction leaves in place of what it
// dropped.
const markerPrefix = "[zwarm: compacted]"

// estimator approximates the tokens of an item.
type estimator func(json.RawMessage) int64

// bytesEstimate is tokens as ceil(bytes / 4).
func bytesEstimate(raw json.RawMessage) int64 { return (int64(len(raw)) + 3) / 4 }

func estimateAll(items []json.RawMessage, est estimator) int64 {
	var n int64
	for _, it := range items {
		n += est(it)
	}
	return n
}

// compact brings a conversation under target tokens. It keeps the first
// head items (the system prompt and the task) and the newest units that
// fit, drops older units whole (see units), and puts a marker after the
// head saying what was dropped. If the newest unit alone is too large, the
// longest call outputs in what is kept are cut in the middle. It returns
// the items unchanged (and nil) when they already fit.
func compact(items []json.RawMessage, head int, target int64, est estimator) ([]json.RawMessage, *runs.Compaction) {
	before := estimateAll(items, est)
	if before <= target || len(items) <= head {
		return items, nil
	}
	infos := make([]item, len(items))
	for i, raw := range items {
		infos[i] = inspect(raw)
	}
	// An earlier marker right after the head is kept, folded into the new.
	var earlier string
	if head < len(items) && infos[head].isInput() && strings.HasPrefix(infos[head].text(), markerPrefix) {
		earlier = strings.TrimSpace(strings.TrimPrefix(infos[head].text(), markerPrefix))
		head++
	}
	us := units(items, infos, head)
	// Newest first: by the position of each unit's last item.
	sort.Slice(us, func(i, j int) bool { return us[i][len(us[i])-1] > us[j][len(us[j])-1] })
	budget := target - estimateAll(items[:head], est)
	us, pinned, budget := pinUserMessages(items, infos, us, budget, est)
	sizes := make([]int64, len(us))
	for k, u := range us {
		for _, i := range u {
			sizes[k] += est(items[i])
		}
	}
	// Keep the newest units that fit, then fewer while the marker does not
	// fit with them; the newest unit is always kept.
	n := 0
	for used := int64(0); n < len(us) && (n == 0 || used+sizes[n] <= budget); n++ {
		used += sizes[n]
	}
	ids := workerIDs(infos, head)
	var out []json.RawMessage
	var info *runs.Compaction
	for ; n >= 1; n-- {
		out, info = dropAllBut(items, infos, ids, head, append(us[:n:n], pinned...), earlier)
		if estimateAll(out, est) <= target || n == 1 {
			break
		}
	}
	if over := estimateAll(out, est) - target; over > 0 {
		over += 32 // the marker's sentence about the cut
		markerAt := head - boolInt(earlier != "")
		info.ClippedItems = clipOutputs(out[markerAt+1:], over, est)
		out[markerAt] = message("developer", markerText(info, earlier))
	}
	if info.DroppedItems == 0 && info.ClippedItems == 0 {
		return items, nil // nothing could be done; the caller goes on as is
	}
	info.BeforeTokens, info.AfterTokens = before, estimateAll(out, est)
	return out, info
}

// dropAllBut keeps the head and the given units, and puts the marker of
// what else was dropped right after the head (in place of an earlier one).
func dropAllBut(items []json.RawMessage, infos []item, ids [][]string, head int, kept [][]int, earlier string) ([]json.RawMessage, *runs.Compaction) {
	keep := make([]bool, len(items))
	for _, u := range kept {
		for _, i := range u {
			keep[i] = true
		}
	}
	info := &runs.Compaction{}
	tools := map[string]int{}
	workers := map[string]bool{}
	for i := head; i < len(items); i++ {
		if keep[i] {
			continue
		}
		info.DroppedItems++
		if it := infos[i]; it.isCall() {
			info.DroppedCalls++
			tools[it.Name]++
		}
		for _, id := range ids[i] {
			workers[id] = true
		}
	}
	for name, n := range tools {
		info.Tools = append(info.Tools, fmt.Sprintf("%s ×%d", name, n))
	}
	sort.Strings(info.Tools)
	for id := range workers {
		info.Workers = append(info.Workers, id)
	}
	sort.Strings(info.Workers)
	out := make([]json.RawMessage, 0, len(items)-info.DroppedItems+1)
	out = append(out, items[:head-boolInt(earlier != "")]...)
	out = append(out, message("developer", markerText(info, earlier)))
	for i := head; i < len(items); i++ {
		if keep[i] {
			out = append(out, items[i])
		}
	}
	return out, info
}

// workerIDs finds, per item, the workers it concerns: those a call names
// in its arguments, and those delegate's results started.
func workerIDs(infos []item, head int) [][]string {
	ids := make([][]string, len(infos))
	delegates := map[string]bool{}
	for i := head; i < len(infos); i++ {
		it := infos[i]
		var a struct {
			SessionID  string   `json:"session_id"`
			SessionIDs []string `json:"session_ids"`
		}
		switch {
		case it.isCall():
			if it.Name == "delegate" {
				delegates[it.CallID] = true
			}
			if json.Unmarshal([]byte(it.Arguments), &a) == nil {
				ids[i] = append(a.SessionIDs, a.SessionID)
			}
		case it.isOutput() && delegates[it.CallID] && len(it.Output) < 4096: // a result of delegate is small JSON
			if json.Unmarshal([]byte(it.outputText()), &a) == nil {
				ids[i] = []string{a.SessionID}
			}
		}
		ids[i] = slices.DeleteFunc(ids[i], func(id string) bool { return !sessionIDRE().MatchString(id) })
	}
	return ids
}

// pinnedShare bounds the share of the budget the user's messages keep.
const pinnedShare = 4

// pinUserMessages takes the messages of the user (runs say) out of the
// units to choose from, newest first while they fit in a quarter of the
// budget: they steer the run, and are kept whatever goes. It returns the
// other units, the pinned ones and the budget left.
func pinUserMessages(items []json.RawMessage, infos []item, us [][]int, budget int64, est estimator) (rest, pinned [][]int, left int64) {
	room, all := budget/pinnedShare, budget
	for _, u := range us {
		if len(u) == 1 && infos[u[0]].isInput() && infos[u[0]].Role == "user" {
			if size := est(items[u[0]]); size <= room {
				room -= size
				budget -= size
				pinned = append(pinned, u)
				continue
			}
		}
		rest = append(rest, u)
	}
	if len(rest) == 0 {
		return us, nil, all // nothing else to drop: they go as any unit would
	}
	return rest, pinned, budget
}

// maxMarkerWorkers bounds the worker ids a marker names.
const maxMarkerWorkers = 12

var sessionIDRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func markerText(c *runs.Compaction, earlier string) string {
	var b strings.Builder
	b.WriteString(markerPrefix)
	fmt.Fprintf(&b, " To keep this conversation within the model's context window, %d older items were removed", c.DroppedItems)
	if c.DroppedCalls > 0 {
		fmt.Fprintf(&b, ", among them %d tool calls with their results (%s)", c.DroppedCalls, strings.Join(c.Tools, ", "))
	}
	b.WriteString(".")
	if len(c.Workers) > 0 {
		ids := c.Workers
		more := ""
		if len(ids) > maxMarkerWorkers {
			ids, more = ids[:maxMarkerWorkers], fmt.Sprintf(" and %d more", len(c.Workers)-maxMarkerWorkers)
		}
		fmt.Fprintf(&b, " They concerned the workers %s%s.", strings.Join(ids, ", "), more)
	}
	if c.ClippedItems > 0 {
		fmt.Fprintf(&b, " %d long tool results still here were cut in the middle.", c.ClippedItems)
	}
	b.WriteString(" The workers themselves are unaffected: list_sessions, check_session and get_trajectory show them.")
	if earlier != "" {
		if len(earlier) > 1500 {
			earlier = earlier[:1500] + "…"
		}
		b.WriteString("\nEarlier: " + earlier)
	}
	return b.String()
}

// clipOutputs cuts the longest string outputs among items, and the
// longest arguments of calls (a model that wrote a task of megabytes), in
// the middle, until over tokens are saved or none is left to cut. It
// returns how many it cut.
func clipOutputs(items []json.RawMessage, over int64, est estimator) int {
	type cand struct {
		i     int
		field string
		size  int64
	}
	var cands []cand
	for i, raw := range items {
		if len(raw) < 1600 {
			continue // too short to be worth a cut
		}
		it := inspect(raw)
		var fields map[string]json.RawMessage
		if !(it.isOutput() || it.isCall()) || json.Unmarshal(raw, &fields) != nil {
			continue
		}
		for _, f := range []string{"output", "arguments"} {
			var s string
			if json.Unmarshal(fields[f], &s) == nil && len(s) > 400 {
				cands = append(cands, cand{i, f, est(raw)})
			}
		}
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].size > cands[b].size })
	clipped := 0
	for _, c := range cands {
		if over <= 0 {
			break
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(items[c.i], &fields) != nil {
			continue
		}
		var s string
		json.Unmarshal(fields[c.field], &s)
		keepBytes := int64(len(s)) - over*4 - 64
		if keepBytes < 400 {
			keepBytes = 400
		}
		cut := middleCut(s, int(keepBytes))
		if c.field == "arguments" {
			cut = cutArguments(s, int(keepBytes))
		}
		fields[c.field], _ = json.Marshal(cut)
		b, err := json.Marshal(fields)
		if err != nil {
			continue
		}
		over -= est(items[c.i]) - est(b)
		items[c.i] = b
		clipped++
	}
	return clipped
}

// cutArguments is a call's arguments (a JSON object) in about n bytes,
// still JSON: its longest strings are cut in the middle. Arguments that
// are not an object of strings are cut as text.
func cutArguments(args string, n int) string {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil {
		return middleCut(args, n)
	}
	keys := make([]string, 0, len(obj))
	for k, v := range obj {
		if _, ok := v.(string); ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool { return len(obj[keys[a]].(string)) > len(obj[keys[b]].(string)) })
	over := len(args) - n
	for _, k := range keys {
		if over <= 0 {
			break
		}
		v := obj[k].(string)
		keep := max(len(v)-over, 200)
		cut := middleCut(v, keep)
		over -= len(v) - len(cut)
		obj[k] = cut
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return middleCut(args, n)
	}
	return string(b)
}

// middleCut keeps the first and last halves of n bytes of s, on rune
// boundaries, and says what it cut.
func middleCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := n / 2
	for h > 0 && s[h]&0xC0 == 0x80 {
		h--
	}
	t := len(s) - n/2
	for t < len(s) && s[t]&0xC0 == 0x80 {
		t++
	}
	return fmt.Sprintf("%s\n…[%d bytes cut to fit the context window]…\n%s", s[:h], t-h, s[t:])
}
