// Package notify tells a person when something needs them: a worker
// completed, failed or stalled, a run finished or asks a question.
//
// The [notify] table of config.toml names a shell command and the events
// that run it:
//
//	[notify]
//	command = "notify-send 'zwarm' \"$ZWARM_TEXT\""
//	on = ["worker.completed", "worker.failed", "worker.stalled", "run.finished", "run.asks"]
//	terminal = true   # the dashboard and watch --notify ring their terminal
//	timeout = "10s"   # a command still running then is stopped
//
// The command runs with ZWARM_EVENT, ZWARM_ID, ZWARM_TEXT and ZWARM_STATUS
// set, in a process of its own (zwarm __notify) that stops it at the
// timeout, so neither a slow nor a failing command holds up whatever saw
// the event; its failures go to zwarm's log.
//
// Every zwarm process that watches (the dashboard, zwarm watch, a run,
// zwarm wait) may see the same event. Each occurrence is sent once, by the
// first to claim it: a marker file made with O_EXCL in the record's
// directory (sessions/<id>/notified/ or runs/<id>/notified/), named for
// the event and what makes it unique (the turn, or the silence a stall
// is), so two dashboards and a watcher running at once send it once. The
// terminal's bell is each front end's own: every dashboard rings its
// terminal.
package notify
