// Package telemetry sends zwarm's work to an OpenTelemetry collector as
// traces (OTLP over HTTP), following the GenAI semantic conventions: a run
// is an invoke_agent span, its model calls chat spans and its tools
// execute_tool spans; a worker session is an invoke_agent span of its
// agent, under the tool call that started it, with its turns beneath it
// and each turn's commands and tool calls beneath those (its messages,
// reasoning and file changes are the turn's events). zwarm's own
// attributes are under zwarm.*.
//
// Every span is made whole, with the timestamps recorded for it, when
// what it stands for has ended, and every id is derived from the records:
// a run's trace id is its id, a span's id a hash of what it stands for.
// So processes that never talk (the orchestrator, each worker's
// supervisor on whatever node runs it) each add their part to one trace,
// and zwarm trace rebuilds the same spans later from the same records.
//
// Off by default (a nil *Tracer does nothing and costs nothing). On, the
// spans are batched and sent in the background; a collector that is down
// or slow costs dropped spans and a line in the log, never a wait longer
// than FlushLimit at exit. Prompts, messages and command output stay out
// unless [telemetry] content = true; headers are never logged.
package telemetry
