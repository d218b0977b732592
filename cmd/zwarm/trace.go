package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

type traceOptions struct {
	f        *factory
	id       string
	endpoint string
	content  bool
}

func newTraceCmd(f *factory) *cobra.Command {
	o := &traceOptions{f: f}
	c := &cobra.Command{
		Use:   "trace RUN|ID",
		Short: "Send a run's or a session's trace to an OpenTelemetry collector, rebuilt from its records",
		Long: `Send the trace of a run (its steps, model calls, tool calls and workers) or
of a session (its turns and their commands) to an OpenTelemetry collector,
rebuilt from the records: the same spans, ids and times that zwarm sends as
it works when telemetry is on, so a run made without a collector can be
looked at later. The collector is --endpoint (an OTLP/HTTP base URL such as
http://127.0.0.1:4318), else OTEL_EXPORTER_OTLP_ENDPOINT, else [telemetry]
endpoint in config.toml. Prompts, messages and command output are left
out unless --content or [telemetry] content = true.

It prints the trace id, which is the run's (or session's) id without its
dashes. Exit status: 0 when the collector took every span, 1 when it did
not, 2 when there is no such run or session or no collector is set.`,
		Example: `  zwarm trace 7c1e --endpoint http://127.0.0.1:4318
  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 zwarm trace 3f2a`,
		Args: exactArgs(1, "a run or session id (a unique prefix is enough)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runTrace(c, o)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.endpoint, "endpoint", "", "the collector's OTLP/HTTP base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, else [telemetry] endpoint)")
	fl.BoolVar(&o.content, "content", false, "send prompts, messages and command output too")
	return c
}

func runTrace(c *cobra.Command, o *traceOptions) error {
	m, cfg, err := o.f.configured()
	if err != nil {
		return err
	}
	set, url, err := cfg.Telemetry()
	if err != nil {
		return config.Invalidf("%v", err)
	}
	if o.endpoint != "" {
		if url, err = config.TracesURL("--endpoint", o.endpoint); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	if url == "" {
		return cli.Usagef("no collector to send to: give --endpoint http://HOST:4318, or set OTEL_EXPORTER_OTLP_ENDPOINT or [telemetry] endpoint")
	}
	content := o.content || set.Content
	id, spans, err := orchestrator.RebuildTrace(c.Context(), m, m.Store().Dir(), o.id, content)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if len(spans) == 0 {
		// Nothing sent is no trace sent: said, not "0 spans sent".
		return fmt.Errorf("trace %s has nothing to send yet: no step or turn of it has ended", id)
	}
	tr, err := telemetry.OpenURL(url, set.Headers, content, nil)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	progress := cli.StartProgress(o.f.io, fmt.Sprintf("sending %d spans to %s", len(spans), url))
	tr.Emit(spans...)
	// Sending is the work: it is done when the collector has answered for
	// every span, not when the spans are handed to it.
	ctx, cancel := context.WithTimeout(c.Context(), telemetry.SendLimit)
	taken, serr := tr.Send(ctx)
	cancel()
	progress.Stop()
	tr.Close()
	if c.Context().Err() != nil {
		return c.Context().Err()
	}
	if missing := int64(len(spans)) - taken; missing > 0 {
		return fmt.Errorf("the collector at %s did not take %d of the %d spans of trace %s: %v", url, missing, len(spans), id, serr)
	}
	io := o.f.io
	if io.OutTTY {
		fmt.Fprintf(io.Out, "trace %s: %d spans sent to %s\n", id, len(spans), url)
		return nil
	}
	fmt.Fprintf(io.Out, "%s\t%d\t%s\n", id, len(spans), url)
	return nil
}
