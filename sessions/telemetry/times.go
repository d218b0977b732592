package telemetry

import (
	"bufio"
	"encoding/json"
	"io"
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

// MaxItems bounds the times kept for one turn: an agent that reports
// millions of items has the rest at the turn's own times.
const MaxItems = 20000

// Clock notes the times of a turn's items, and what each item is (its
// latest event, without its output).
type Clock struct {
	at    map[string]int
	times []ItemTime
	items []record.Event
}

// Observe notes events parsed at now.
func (c *Clock) Observe(evs []record.Event, now time.Time) {
	for _, ev := range evs {
		if ev.ItemID == "" {
			continue
		}
		if i, ok := c.at[ev.ItemID]; ok {
			c.times[i].End = now
			if ev.Phase != record.PhaseUpdated || ev.Type != c.items[i].Type {
				c.items[i] = trimmed(ev) // an update adds output, which a span leaves out
			}
			continue
		}
		if len(c.times) >= MaxItems {
			continue
		}
		if c.at == nil {
			c.at = map[string]int{}
		}
		c.at[ev.ItemID] = len(c.times)
		c.times = append(c.times, ItemTime{Item: ev.ItemID, Start: now, End: now})
		c.items = append(c.items, trimmed(ev))
	}
}

// Items are the items noted, each as its latest event, in the order they
// began.
func (c *Clock) Items() []record.Event { return c.items }

// trimmed is what a span needs of an item's event: not its output, and
// at most a few KiB of its text.
func trimmed(ev record.Event) record.Event {
	ev.Output, ev.Input, ev.Usage = "", "", nil
	ev.Text = clip(ev.Text, 4096)
	ev.Command = clip(ev.Command, 4096)
	return ev
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Times are the items noted, in the order they began.
func (c *Clock) Times() []ItemTime { return c.times }

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
