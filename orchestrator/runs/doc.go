// Package runs is the data of orchestrator runs, apart from the loop that
// makes them: the record (run.json), the events (events.jsonl), the files
// of a run's dir, the append-only journal both JSONL files are written
// through, and the subscription that follows them live (Subscribe, the
// twin of the session core's). The CLI and the dashboard read runs
// through this package, without the loop and its model client; it
// imports only the session core (sessions, and sessions/store to open and
// replace its files safely).
//
// A run lives in <state>/runs/<id>/:
//
//	run.json            the Record, replaced atomically at every step
//	conversation.jsonl  the input items, verbatim (raw JSON), one per line
//	events.jsonl        one Event per line
//	.lock               held by the process running the run: flock(2), or under
//	                    lease locks a file that exists while held (sessions/store)
//	inbox/              the person's messages and answers to the run (InboxDir)
//
// A Record whose owner process is gone reads as interrupted, never
// running or waiting (Record.Current).
package runs
