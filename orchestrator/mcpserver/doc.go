// Package mcpserver serves zwarm's worker tools over the Model Context
// Protocol, so that an agent already running in a terminal (Claude Code,
// Codex, an IDE) can start supervised background workers, wait for them,
// read what they did and stop them.
//
// The tools are the orchestrator's own (orchestrator/tools.Workers), served
// under shorter names: delegate as spawn, converse as inject, check_session
// as show, list_sessions as list, end_session as kill, diff_session as
// diff, land_session as land, update_session as update; wait and
// get_trajectory keep theirs. Schemas and handlers are reused; only the
// words that name other tools, and the hints that only fit the
// orchestrator, are adapted. A tool that cannot do what was asked answers
// with a result flagged isError whose text says what to do instead.
//
// Inside a git repository a worker works in a git worktree of its own
// (spawn's isolation says otherwise), on branch zwarm/<id>. diff shows its
// change against where it started; land commits a finished worker's change
// onto the branch checked out in the directory the server was started in,
// with the rules of the session core's Land (a running worker, a conflict,
// uncommitted changes it would overwrite are refused, nothing changed);
// update merges that branch into the worker's when the two conflict, and
// asks the worker to resolve the conflicts.
//
// Every worker started here carries the source mcp, and the tools see and
// touch only such workers. Workers outlive the server: they are zwarm
// sessions like any other, recorded in the state dir, and a later server
// (or zwarm ls, show, dash) finds them there.
//
// MCP clients drop a tool call after about a minute, so wait returns
// within its timeout_s, capped by the [mcp] table's wait_cap (50s by
// default), says whether it timed out and what still runs, and, when the
// client sent a progress token, reports progress while it blocks: each
// worker that finishes, and a heartbeat.
package mcpserver
