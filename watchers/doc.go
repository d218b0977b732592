// Package watchers keeps an orchestrator run and its workers on track:
// small policies that look at what happened and answer continue, nudge
// (guidance added to the run's next model call), pause (the run ends,
// resumable) or abort (the run fails); for workers they may also stop a
// session.
//
// # Run watchers
//
// An Engine holds the enabled run watchers of a Config (progress, budget,
// scope, pattern, delegation, delegation_reminder, quality, llm) and is
// asked before every step of a run with a RunView: the run's tool calls,
// the model's messages, usage, limits, workers and the files they changed.
// The watchers run concurrently, each with its own timeout; one that
// panics or overruns is reported in the Report's Problems and skipped,
// never blocking the step (a panicking watcher is not asked again). The
// most severe answer wins (abort > pause > nudge > continue), ties going
// to the higher configured priority. Watchers keep what they already
// reported, so a condition is reported once per new piece of evidence, not
// at every step.
//
// The package imports only the session core. Package orchestrator turns
// its View into a RunView and a Report into its Guard's verdicts; the llm
// watcher calls a model through the Model interface, which the
// orchestrator implements with its own client.
//
// # Worker watchers
//
// Workers runs the worker watchers (stall, failure, hollow, cost_guard,
// overlap) on the updates of a sessions subscription, with the agents'
// events: a stall is a timer that each event resets, never a polling loop;
// an overlap (two workers of one repository with changes still to land
// changing the same file) is found as their file_change events and
// finished turns come in. It
// emits typed Alerts on a channel, for any front end: zwarm watch prints
// them, a run hands them to its model as nudges, a dashboard may mark the
// rows. cost_guard stops a worker past its cap itself (KillBecause, with
// the reason recorded). StallConfig.Stalled tells, from a record alone,
// whether a session is stalled under the configured thresholds.
package watchers
