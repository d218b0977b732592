package model

import (
	"encoding/json"
	"fmt"
	"sort"
)

// accumulator gathers a streamed response: the output items as each is
// done, verbatim, and the usage of the final event.
type accumulator struct {
	started bool // some event arrived: a failure now is a broken stream
	done    bool
	id      string
	items   map[int]json.RawMessage
	order   []int
	final   []json.RawMessage // the final event's output, if the server sent it
	usage   apiUsage
	reason  string
	failure *APIError
}

// event is the part of a stream event the accumulator reads.
type event struct {
	Type        string          `json:"type"`
	OutputIndex int             `json:"output_index"`
	Item        json.RawMessage `json:"item"`
	Code        string          `json:"code"`
	Message     string          `json:"message"`
	Response    struct {
		ID                string            `json:"id"`
		Output            []json.RawMessage `json:"output"`
		Usage             apiUsage          `json:"usage"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"response"`
}

func (a *accumulator) add(raw string) error {
	a.started = true
	var ev event
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		return fmt.Errorf("%w: unreadable event: %v", ErrStreamBroken, err)
	}
	switch ev.Type {
	case "response.created", "response.in_progress":
		a.id = ev.Response.ID
	case "response.output_item.done":
		if a.items == nil {
			a.items = map[int]json.RawMessage{}
		}
		if _, seen := a.items[ev.OutputIndex]; !seen {
			a.order = append(a.order, ev.OutputIndex)
		}
		a.items[ev.OutputIndex] = append(json.RawMessage(nil), ev.Item...)
	case "response.completed", "response.incomplete":
		a.done = true
		a.id = firstNonEmpty(ev.Response.ID, a.id)
		a.final, a.usage = ev.Response.Output, ev.Response.Usage
		if d := ev.Response.IncompleteDetails; d != nil {
			a.reason = firstNonEmpty(d.Reason, "incomplete")
		} else if ev.Type == "response.incomplete" {
			a.reason = "incomplete"
		}
	case "response.failed":
		a.done = true
		msg, code := "the model failed to respond", ""
		if e := ev.Response.Error; e != nil {
			msg, code = firstNonEmpty(e.Message, msg), e.Code
		}
		a.failure = &APIError{Code: firstNonEmpty(code, "response.failed"), Message: msg}
	case "error":
		a.done = true
		a.failure = &APIError{Code: firstNonEmpty(ev.Code, "error"), Message: firstNonEmpty(ev.Message, "the model reported an error")}
	}
	return nil
}

func (a *accumulator) response() (*Response, error) {
	if a.failure != nil {
		return nil, a.failure
	}
	r := &Response{ID: a.id, Usage: a.usage.usage(), Incomplete: a.reason}
	sort.Ints(a.order)
	for _, i := range a.order {
		r.Output = append(r.Output, a.items[i])
	}
	if len(r.Output) == 0 {
		// A server that sends the items only with the final event.
		for _, it := range a.final {
			r.Output = append(r.Output, append(json.RawMessage(nil), it...))
		}
	}
	return r, nil
}
