package telemetry

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// ItemTime is when a turn's item was first and last reported: the span of a
// command or a tool call, the moment of a message. The supervisor notes
// them as the agent's lines arrive (Clock) and keeps them beside the turn
// file, so a trace rebuilt later has the times a live one had.
type ItemTime struct {
	Item  string    `json:"item"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// MaxItems bounds the items kept for one turn: an agent that reports
// millions of items has the rest at the turn's own times. One costs about
// 150 bytes (its words aside, which only Words keeps).
const MaxItems = 10000

// Clock notes the times of a turn's items, and what each item is (its
// latest event, without its output). Words keeps, for spans that may
// carry them, the first KiB of each item's text and command.
type Clock struct {
	Words bool
	at    map[string]int32
	items []noted
}

// noted is one item, kept small: a turn may have thousands.
type noted struct {
	id, status, tool string
	typ              record.EventType
	start, end       int64 // unix nanoseconds
	exit             int32
	hasExit          bool
	changes          []record.FileChange
	text, command    string // with Words only
}

// Observe notes events parsed at now.
func (c *Clock) Observe(evs []record.Event, now time.Time) {
	at := now.UnixNano()
	for i := range evs {
		ev := &evs[i]
		if ev.ItemID == "" {
			continue
		}
		if k, ok := c.at[ev.ItemID]; ok {
			n := &c.items[k]
			n.end = at
			if ev.Phase != record.PhaseUpdated || ev.Type != n.typ {
				c.note(n, ev) // an update adds output, which a span leaves out
			}
			continue
		}
		if len(c.items) >= MaxItems {
			continue
		}
		if c.at == nil {
			c.at = map[string]int32{}
		}
		n := noted{id: strings.Clone(ev.ItemID), start: at, end: at}
		c.note(&n, ev)
		c.at[n.id] = int32(len(c.items))
		c.items = append(c.items, n)
	}
}

// note keeps what a span needs of an item's event, in strings of its own
// (a parser's may share the memory of the whole line they came from).
func (c *Clock) note(n *noted, ev *record.Event) {
	n.typ, n.status, n.tool = ev.Type, strings.Clone(ev.Status), strings.Clone(ev.Tool)
	if ev.ExitCode != nil {
		n.exit, n.hasExit = int32(*ev.ExitCode), true
	}
	n.changes = n.changes[:0]
	for _, ch := range ev.Changes {
		n.changes = append(n.changes, record.FileChange{Path: strings.Clone(ch.Path), Kind: strings.Clone(ch.Kind)})
	}
	if c.Words {
		n.text, n.command = strings.Clone(clip(ev.Text, 1024)), strings.Clone(clip(ev.Command, 1024))
	}
}

// Times are the items' times, in the order they began.
func (c *Clock) Times() []ItemTime {
	out := make([]ItemTime, len(c.items))
	for i, n := range c.items {
		out[i] = ItemTime{Item: n.id, Start: time.Unix(0, n.start).UTC(), End: time.Unix(0, n.end).UTC()}
	}
	return out
}

// Items are the items, each as its latest event (without its output), in
// the order they began.
func (c *Clock) Items() []record.Event {
	out := make([]record.Event, len(c.items))
	for i, n := range c.items {
		out[i] = record.Event{Type: n.typ, ItemID: n.id, Status: n.status, Tool: n.tool, Changes: n.changes, Text: n.text, Command: n.command}
		if n.hasExit {
			code := int(n.exit)
			out[i].ExitCode = &code
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// WriteTimes writes times, one JSON object a line.
func WriteTimes(w io.Writer, times []ItemTime) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, t := range times {
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadTimes reads what WriteTimes wrote, by item id; a line it cannot read
// (the end of a file cut short) ends it.
func ReadTimes(r io.Reader) map[string]ItemTime {
	out := map[string]ItemTime{}
	dec := json.NewDecoder(r)
	for {
		var t ItemTime
		if dec.Decode(&t) != nil {
			return out
		}
		out[t.Item] = t
	}
}
