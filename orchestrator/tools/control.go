package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxSleepSeconds bounds sleep.
const MaxSleepSeconds = 300

// Sleep returns the sleep tool: a pause of at most MaxSleepSeconds.
func Sleep() Tool {
	schema := object(map[string]prop{
		"seconds": num(fmt.Sprintf("How long, at most %d.", MaxSleepSeconds)),
	}, "seconds")
	return Tool{
		Name: "sleep",
		Description: "Pause for a number of seconds. Rarely right: wait returns as soon as workers finish. " +
			"Use sleep only for something wait cannot express, such as a server warming up.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				Seconds *float64 `json:"seconds"`
			}
			if err := decode("sleep", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			if a.Seconds == nil || math.IsNaN(*a.Seconds) || *a.Seconds < 0 {
				return Errorf("seconds must be a number from 0 to %d", MaxSleepSeconds)
			}
			s, note := *a.Seconds, ""
			if s > MaxSleepSeconds {
				s, note = MaxSleepSeconds, fmt.Sprintf(" (%g lowered to the maximum, %d)", *a.Seconds, MaxSleepSeconds)
			}
			t := time.NewTimer(time.Duration(s * float64(time.Second)))
			defer t.Stop()
			select {
			case <-t.C:
				return Result{Text: fmt.Sprintf("slept %gs%s", s, note)}
			case <-ctx.Done():
				return Errorf("the sleep was interrupted: %v", context.Cause(ctx))
			}
		},
	}
}

// Finish returns the finish tool; done receives the summary. The caller
// ends its run after the call.
func Finish(done func(summary string)) Tool {
	schema := object(map[string]prop{
		"summary": str("What was done and how it was verified, for the user: the result, the tests run, anything left open."),
	}, "summary")
	return Tool{
		Name:        "finish",
		Description: "End the run as completed, once the task is done and verified. Nothing runs after this.",
		Schema:      schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				Summary string `json:"summary"`
			}
			if err := decode("finish", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			if strings.TrimSpace(a.Summary) == "" {
				return Errorf("summary is empty: say what was done and how it was verified")
			}
			done(a.Summary)
			return Result{Text: "The run is finished."}
		},
	}
}
