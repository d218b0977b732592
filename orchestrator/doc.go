// Package orchestrator runs one task with an orchestrating model: the model
// plans, delegates pieces to workers (zwarm sessions) through tools, waits
// for them, reads what they did, verifies the result in a shell, and calls
// finish. A Run is started (Start) or taken up again (Resume), then
// Executed once.
//
// # The loop
//
// Each step is one model call. Before it, the run reads its workers (every
// session whose source is run:ID) and their costs, checks the limits
// (steps, cost and tokens of the model and its workers together; the wall
// clock cuts a call or a wait in progress), asks the Guard, compacts the
// conversation if it nears the context window, and refreshes the
// observation, which is sent as the last input item and never stored. The
// tools the model called run in order; each call gets an output, whatever
// happens, so the conversation stays valid for the API.
//
// # The person
//
// The person who runs the task may steer it and answer it. What they send
// waits in the run's inbox (runs.InboxDir) and is given to the model
// before its next call, as a user message tagged with its inbox number,
// once (inbox.go says how a crash cannot make it twice). With
// Settings.Ask the model may call ask_user: the run's status becomes
// waiting, with the question in run.json, until an answer comes from the
// terminal (Options.Prompt) or the inbox, whichever first, or AskTimeout
// passes ("no answer: decide yourself"). The question, the answer and
// each message are events (question, answer, user_message).
//
// # Pilot
//
// A pilot run (Settings.Pilot, run.json's pilot) is a conversation: the
// person's turns are user messages tagged with their number, the loop
// runs a turn (Work, Turn) until the model answers with a reply that
// calls no tool, and a stopped or failed turn leaves the run live for
// the next. It offers neither finish nor ask_user; Quit leaves it
// interrupted for Resume. The tags make the conversation its own list of
// checkpoints (Checkpoints), so Rewind cuts conversation.jsonl back to
// the end of a turn atomically, leaving the workers and every record.
//
// # Workers' changes
//
// In a git repository each worker works in a git worktree of its own
// (Settings.Isolation, delegate's isolation), and its change reaches the
// run's dir only through land_session. The system prompt then tells the
// model to review each change (diff_session), land what is good and verify
// in the run's dir after landing; the observation lists each worktree's
// change (its files until it is landed); the run's summary ends with what
// was landed and what was left on a worker's branch (runs.Record.Changes).
//
// # State
//
// A run lives in <state>/runs/<id>/. Its record (run.json), its events
// (events.jsonl), its conversation and the lock are package runs', which
// readers use without the loop; this package adds
//
//	cgroup              the path of the cgroup its shell commands run in, while it has one
//	                    (contain.go: swept by a resume, KillRun, SweepDeadRuns if the process died)
//
// The conversation and the events are append-only and made durable at
// each step's end, before run.json is replaced. A process killed at any
// instant leaves a run that Resume continues: a torn last line is dropped,
// a call whose output was never written gets one saying so, a reasoning
// item that nothing followed is dropped, and the step count and the
// model's usage are rebuilt from the events. A runs.Record whose owner
// process is gone reads as interrupted, never running (runs.Record.Current).
//
// Items are kept and sent as raw JSON: a typed struct would drop fields the
// client does not know, and the API wants each reasoning item back as it
// came, with the call that followed it. Compaction drops whole units (a
// model response with its reasoning, calls and their outputs) and leaves a
// marker saying what went.
//
// # Watchers
//
// A Guard is asked before every model call with a watchers.RunView of the
// run (steps, tool calls and their results, the model's messages, usage,
// limits, workers). It may nudge (a "[watcher:NAME] ..." message joins the
// conversation), pause (the run ends interrupted, resumable) or abort (the
// run fails); every verdict but continue is written to events.jsonl.
//
// The package imports only the session core, the run records
// (orchestrator/runs) and the watchers; the tools live in
// orchestrator/tools, the model client in orchestrator/model, the shell
// tools in orchestrator/shell.
package orchestrator
