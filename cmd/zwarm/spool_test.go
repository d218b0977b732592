package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A spool gives back what was written to it, byte for byte, whether it
// stayed in memory or moved to its file.
func TestSpoolGivesBackWhatWasWritten(t *testing.T) {
	for _, size := range []int{0, 10, spoolMem, spoolMem + 1, 3 * spoolMem} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var s spool
			defer s.close()
			var want bytes.Buffer
			for i := 0; want.Len() < size; i++ {
				piece := []byte(fmt.Sprintf("message %d, ", i))
				piece = piece[:min(len(piece), size-want.Len())]
				want.Write(piece)
				if _, err := s.Write(piece); err != nil {
					t.Fatal(err)
				}
			}
			if moved := s.file != nil; moved != (size > spoolMem) {
				t.Fatalf("%d bytes: in a file %v", size, moved)
			}
			var got bytes.Buffer
			if err := s.copyTo(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("got %d bytes back of %d, or different ones", got.Len(), want.Len())
			}
		})
	}
}

// show --json of a turn with more messages than a spool keeps in memory
// lists every one of them, in order, in a valid document.
func TestShowJSONListsManyMessages(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setScript(append([]fakeagent.Step{{"out_lines": 200_000}}, fakeagent.Completes("the last one", 10)...))
	id := w.spawn("talk a lot")
	w.ok("wait", id)
	var doc struct {
		Messages []struct {
			Turn int
			Role string
			Text string
		}
	}
	if err := json.Unmarshal([]byte(w.ok("show", "--json", id)), &doc); err != nil {
		t.Fatal(err)
	}
	msgs := doc.Messages
	if len(msgs) != 50_002 || msgs[0].Role != "user" || msgs[0].Text != "talk a lot" ||
		msgs[1].Text != "Step 3 done; the tests pass." || msgs[len(msgs)-1].Text != "the last one" {
		t.Fatalf("%d messages, first %+v, last %+v", len(msgs), msgs[0], msgs[len(msgs)-1])
	}
}
