package main

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strconv"
)

// recorded holds a real two-turn codex session (codex exec --json, then
// exec resume), as zwarm kept it: the worker ran ls, cat, grep, git log,
// go test and go build in a small Go module. Only this machine's paths
// were replaced.
//
//go:embed recorded/turn_1.jsonl recorded/turn_2.jsonl
var recorded embed.FS

var itemID = regexp.MustCompile(`"id":"item_([0-9]+)"`)

// grownTurn writes turn n of the recorded session (turn 1 or 2, in turn),
// its items repeated until the shape's size, each repetition's item ids
// new: the thread's start and the turn's start first, its usage last.
func grownTurn(w *bufio.Writer, shape turnShape, n int) error {
	data, err := recorded.ReadFile(fmt.Sprintf("recorded/turn_%d.jsonl", (n-1)%2+1))
	if err != nil {
		return err
	}
	var head, body, foot [][]byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		switch {
		case len(line) == 0:
		case bytes.Contains(line, []byte(`"type":"thread.started"`)), bytes.Contains(line, []byte(`"type":"turn.started"`)):
			head = append(head, line)
		case bytes.Contains(line, []byte(`"type":"turn.completed"`)):
			foot = append(foot, line)
		default:
			body = append(body, line)
		}
	}
	var written int64
	for _, l := range head {
		w.Write(l)
	}
	for k := 0; k == 0 || written < shape.size; k++ {
		for _, l := range body {
			if k > 0 {
				l = itemID.ReplaceAllFunc(l, func(m []byte) []byte {
					i, _ := strconv.Atoi(string(itemID.FindSubmatch(m)[1]))
					return []byte(fmt.Sprintf(`"id":"item_%d"`, i+k*len(body)))
				})
			}
			w.Write(l)
			written += int64(len(l))
		}
	}
	for _, l := range foot {
		w.Write(l)
	}
	return nil
}
