package model

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// sdkDefaults are the options the SDK's root client (openai.NewClient)
// starts from, for the one service zwarm calls. The root package is not
// linked: it holds every API's types, and their registration alone made
// each zwarm command start 0.75 ms later and the binary 21 MB larger
// (docs/performance.md), whether or not it ever called a model.
func sdkDefaults() []option.RequestOption {
	opts := []option.RequestOption{option.WithEnvironmentProduction(), option.WithHTTPClient(defaultHTTPClient())}
	for _, env := range []struct {
		name string
		opt  func(string) option.RequestOption
	}{
		{"OPENAI_BASE_URL", option.WithBaseURL},
		{"OPENAI_API_KEY", option.WithAPIKey},
		{"OPENAI_ORG_ID", option.WithOrganization},
		{"OPENAI_PROJECT_ID", option.WithProject},
	} {
		if v, ok := os.LookupEnv(env.name); ok {
			opts = append(opts, env.opt(v))
		}
	}
	// One "Name: value" a line, as the SDK reads it.
	for line := range strings.SplitSeq(os.Getenv("OPENAI_CUSTOM_HEADERS"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			opts = append(opts, option.WithHeader(strings.TrimSpace(k), strings.TrimSpace(v)))
		}
	}
	return opts
}

// sdkHeaderTimeout is how long the SDK's own client waits for a
// response's headers (a stream's first byte comes long before).
const sdkHeaderTimeout = 10 * time.Minute

// defaultHTTPClient is the SDK's default client: the default transport
// with a bound on waiting for headers.
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = sdkHeaderTimeout
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport}
}
