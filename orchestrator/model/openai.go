package model

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// OpenAIOptions configure the Responses API client.
type OpenAIOptions struct {
	// BaseURL of the API, e.g. "http://127.0.0.1:8080/v1"; "" means
	// OPENAI_BASE_URL, else api.openai.com.
	BaseURL string
	// APIKey; "" means OPENAI_API_KEY.
	APIKey string
	// MaxRetries bounds the SDK's retries of 408, 409, 429, 5xx and
	// connection errors (Retry-After honoured). 0 tries once.
	MaxRetries int
	// MaxRetryDelay bounds one wait between retries, the server's
	// Retry-After included: a longer Retry-After ends the retries. 0 means
	// the SDK's default.
	MaxRetryDelay time.Duration
	// RequestTimeout bounds one HTTP attempt, streaming included; 0 means
	// none.
	RequestTimeout time.Duration
	// HTTPClient replaces the SDK's default client.
	HTTPClient *http.Client
	// OnAttempt sees every failed attempt, retried or not.
	OnAttempt func(Attempt)
}

// OpenAI calls a Responses API through the official Go SDK.
type OpenAI struct {
	svc        responses.ResponseService
	onAttempt  func(Attempt)
	maxRetries int
	maxDelay   time.Duration // the longest Retry-After the SDK waits for
}

// NewOpenAI returns a client. It reads the usual environment
// (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID,
// OPENAI_CUSTOM_HEADERS) as the SDK's client does; options given here win.
func NewOpenAI(opt OpenAIOptions) *OpenAI {
	opts := append(sdkDefaults(), option.WithMaxRetries(max(opt.MaxRetries, 0)))
	if opt.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(opt.BaseURL))
	}
	if opt.APIKey != "" {
		opts = append(opts, option.WithAPIKey(opt.APIKey))
	}
	if opt.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(opt.MaxRetryDelay))
	}
	if opt.RequestTimeout > 0 {
		opts = append(opts, option.WithRequestTimeout(opt.RequestTimeout))
	}
	if opt.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(opt.HTTPClient))
	}
	c := &OpenAI{onAttempt: opt.OnAttempt, maxRetries: max(opt.MaxRetries, 0), maxDelay: opt.MaxRetryDelay}
	if c.maxDelay <= 0 {
		c.maxDelay = sdkMaxRetryAfter
	}
	opts = append(opts, option.WithMiddleware(c.observe))
	c.svc = responses.NewResponseService(opts...)
	return c
}

// observe reports failed attempts; the SDK decides about retrying.
func (c *OpenAI) observe(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	hook, _ := req.Context().Value(attemptKey{}).(func(Attempt))
	if c.onAttempt == nil && hook == nil || err == nil && res.StatusCode < 400 {
		return res, err
	}
	n, _ := strconv.Atoi(req.Header.Get("X-Stainless-Retry-Count"))
	a := Attempt{N: n, Err: err}
	if res != nil {
		a.Status, a.RetryAfter = res.StatusCode, res.Header.Get("Retry-After")
	}
	a.Retried = n < c.maxRetries && retryable(res) && !retryAfterTooLong(res, c.maxDelay) && req.Context().Err() == nil
	switch {
	case a.Retried || !retryable(res) || req.Context().Err() != nil:
	case retryAfterTooLong(res, c.maxDelay):
		a.NotRetried = fmt.Sprintf("the server asks to wait longer than [orchestrator] retry_max_delay (%s)", c.maxDelay)
	default:
		a.NotRetried = fmt.Sprintf("its %d retries are used up ([orchestrator] retries)", c.maxRetries)
	}
	if c.onAttempt != nil {
		c.onAttempt(a)
	}
	if hook != nil {
		hook(a)
	}
	return res, err
}

// retryable is the SDK's rule for what it tries again: a connection
// error, 408, 409, 429 and 5xx, unless the server says otherwise
// (x-should-retry).
func retryable(res *http.Response) bool {
	if res == nil {
		return true
	}
	switch res.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// sdkMaxRetryAfter is the SDK's longest wait for a Retry-After when no
// MaxRetryDelay is set (requestconfig's defaultMaxRetryAfterDelay).
const sdkMaxRetryAfter = 2 * time.Minute

// retryAfterTooLong reports a Retry-After (or Retry-After-Ms) the SDK
// will not wait for: it gives up on the call instead.
func retryAfterTooLong(res *http.Response, maxDelay time.Duration) bool {
	if res == nil {
		return false
	}
	if v := res.Header.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return ms > float64(maxDelay)/float64(time.Millisecond)
		}
	}
	v := res.Header.Get("Retry-After")
	if v == "" {
		return false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return s > maxDelay.Seconds()
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		return time.Until(t) > maxDelay
	}
	return false
}

type attemptKey struct{}

// ObserveAttempts returns a context whose calls report each failed HTTP
// attempt to fn, as well as to OpenAIOptions.OnAttempt.
func ObserveAttempts(ctx context.Context, fn func(Attempt)) context.Context {
	return context.WithValue(ctx, attemptKey{}, fn)
}

// requestBody is the JSON of a call. Input items are embedded verbatim.
type requestBody struct {
	Model             string            `json:"model"`
	Input             []json.RawMessage `json:"input"`
	Tools             []toolJSON        `json:"tools,omitempty"`
	Store             bool              `json:"store"`
	Include           []string          `json:"include"`
	ParallelToolCalls bool              `json:"parallel_tool_calls"`
	Reasoning         *reasoningJSON    `json:"reasoning,omitempty"`
}

type toolJSON struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type reasoningJSON struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// Body is the JSON request body of req (without "stream", which the SDK
// adds).
func Body(req *Request) ([]byte, error) {
	b := requestBody{Model: req.Model, Input: req.Input, Store: false,
		Include: []string{"reasoning.encrypted_content"}, ParallelToolCalls: true}
	if b.Input == nil {
		b.Input = []json.RawMessage{}
	}
	for _, t := range req.Tools {
		b.Tools = append(b.Tools, toolJSON{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if req.ReasoningEffort != "" {
		b.Reasoning = &reasoningJSON{Effort: req.ReasoningEffort, Summary: "auto"}
	}
	return json.Marshal(b)
}

// Respond implements Client: one streamed call.
func (c *OpenAI) Respond(ctx context.Context, req *Request) (*Response, error) {
	body, err := Body(req)
	if err != nil {
		return nil, fmt.Errorf("encode the model request: %w", err)
	}
	var httpRes *http.Response
	stream := c.svc.NewStreaming(ctx, responses.ResponseNewParams{},
		option.WithRequestBody("application/json", body), option.WithResponseInto(&httpRes))
	defer stream.Close()
	var acc accumulator
	for stream.Next() {
		if err := acc.add(stream.Current().RawJSON()); err != nil {
			return nil, err
		}
		if acc.done {
			break
		}
	}
	if err := stream.Err(); err != nil && !acc.done {
		return nil, c.fail(ctx, err, httpRes, acc.started)
	}
	if !acc.done {
		if ct := contentType(httpRes); !acc.started && httpRes != nil && ct != "text/event-stream" {
			// Not a stream that broke: an answer of another kind (a
			// proxy's page, another API), which no new call mends.
			return nil, &APIError{Status: httpRes.StatusCode, Message: fmt.Sprintf("the model API answered with %s, not an event stream: is base_url the Responses API's?", cmp.Or(ct, "no content type"))}
		}
		return nil, ErrStreamBroken
	}
	return acc.response()
}

func contentType(res *http.Response) string {
	if res == nil {
		return ""
	}
	ct, _, _ := strings.Cut(res.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(ct)
}

// fail turns an error of the SDK into what the run acts on: the caller's
// own cancellation, a broken stream (worth another call), or a final
// APIError with the API's message.
func (c *OpenAI) fail(ctx context.Context, err error, res *http.Response, started bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *responses.Error
	if errors.As(err, &apiErr) {
		return &APIError{Status: apiErr.StatusCode, Type: apiErr.Type, Code: apiErr.Code,
			Message: firstNonEmpty(apiErr.Message, http.StatusText(apiErr.StatusCode))}
	}
	if started {
		return fmt.Errorf("%w: %v", ErrStreamBroken, err)
	}
	if res != nil && res.StatusCode >= 400 {
		return &APIError{Status: res.StatusCode, Message: fmt.Sprintf("%s (%v)", http.StatusText(res.StatusCode), err)}
	}
	return &APIError{Message: err.Error()}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
