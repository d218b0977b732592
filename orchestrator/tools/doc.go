// Package tools defines the tools an orchestrating model uses, each once:
// its name, description, JSON Schema and handler, in a Registry that knows
// nothing of any model client. The orchestrator offers them to its model;
// `zwarm mcp` serves the worker half to other agents.
//
// The worker tools (delegate, converse, wait, check_session, peek_session,
// get_trajectory, list_sessions, end_session, diff_session, land_session,
// update_session) are built by Workers from a Sessions implementation (a
// *sessions.Manager) and a Source: every worker they start carries it, and
// they see and touch only the workers that do.
//
// Inside a git repository a worker works in a git worktree of its own
// (delegate's isolation says otherwise), so its change stays on its branch
// until it is landed; delegate returns once the worktree is made, as git
// cannot make two of one repository at once. diff_session shows the change, bounded like every
// output (whole files while they fit, the rest named, with the git command
// that shows one); land_session lands a settled worker's change into the
// branch checked out in the tools' Dir (the run's dir, or where zwarm mcp
// was started), with the session core's rules: a running worker, a
// conflict, uncommitted changes the landing would overwrite are refused,
// nothing changed, with what to do instead; update_session merges that
// branch into the worker's when they conflict, and asks the worker to
// resolve what conflicts.
// Shell adds exec_command and write_stdin on an orchestrator/shell Manager;
// Sleep and Finish complete the orchestrator's set, and AskUser puts a
// question to the person when one can answer (never served over MCP,
// whose client is already a conversation with one).
//
// A tool never fails the caller: bad arguments, an unknown session, a
// refusal (too many workers, a working dir outside the allowed ones) come
// back as a Result whose text says what was wrong and what to do, with
// IsError set so that an MCP server can flag it. Tool outputs are plain
// text or compact JSON, bounded in size.
package tools
