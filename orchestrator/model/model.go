// Package model is the orchestrator's view of a language model: one call
// takes the whole conversation as raw Responses API items and returns the
// new output items, verbatim, with the call's token usage.
//
// Items travel as raw JSON (json.RawMessage) from the API to disk and back:
// a typed struct would drop fields the client does not know, and a
// reasoning item must go back exactly as it came (its encrypted_content
// included) with the call that followed it. The run is stateless on the
// server side: store is false, encrypted reasoning is asked for, and no
// previous_response_id is ever sent.
//
// OpenAI talks to any Responses-compatible server through the official Go
// SDK; Recorded (package recorded) plays a recorded conversation for the
// demo.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/sessions/record"
)

// Tool is a function tool offered to the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage
}

// Request is one model call.
type Request struct {
	Model string
	// Input is the whole conversation, oldest first, each item verbatim.
	Input []json.RawMessage
	Tools []Tool
	// ReasoningEffort, if set, is sent as reasoning.effort (with an
	// automatic summary); "" leaves the model's default.
	ReasoningEffort string
}

// Response is what one call produced.
type Response struct {
	ID string
	// Output is the new items, in order, each exactly as the API sent it.
	Output []json.RawMessage
	Usage  record.Usage
	// Incomplete is why the model stopped early (e.g. max_output_tokens);
	// "" for a complete response.
	Incomplete string
}

// Client calls a model.
type Client interface {
	Respond(ctx context.Context, req *Request) (*Response, error)
}

// ErrStreamBroken says the response stream ended before the response was
// complete (a connection cut midway). The call may be made again.
var ErrStreamBroken = errors.New("the model's response stream broke off before the response was complete")

// APIError is a final error of the model API: the SDK's retries (if any)
// are spent, or the error is one a retry cannot fix.
type APIError struct {
	// Status is the HTTP status; 0 when no response came (a connection
	// error, with no Type or Code) or when the stream itself reported the
	// failure.
	Status  int
	Type    string
	Code    string
	Message string // the API's own words
}

func (e *APIError) Error() string {
	kind := e.Type
	if e.Code != "" {
		kind = e.Code
	}
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" %d", e.Status)
	}
	switch {
	case e.Status == 0 && kind == "":
		return fmt.Sprintf("model API unreachable: %s", e.Message)
	case kind != "":
		return fmt.Sprintf("model API error%s (%s): %s", status, kind, e.Message)
	}
	return fmt.Sprintf("model API error%s: %s", status, e.Message)
}

// Attempt is one failed HTTP attempt of a call, which the SDK may retry.
type Attempt struct {
	N          int    // 0 for the first attempt
	Status     int    // 0 for a connection error
	RetryAfter string // the server's Retry-After, if any
	Err        error  // a connection error
	// Retried says the client tries the call again: the failure is one
	// it retries (a connection error, 408, 409, 429, 5xx) and retries are
	// left. A Retry-After longer than the client's longest wait still
	// ends the retries.
	Retried bool
	// NotRetried says why a failure the client would retry is not, ""
	// otherwise: its retries are used up, or the server asks for a wait
	// longer than the client's longest.
	NotRetried string
}
