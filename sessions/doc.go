// Package sessions is the core of zwarm: the Manager every front end uses
// (spawn, inject, kill, land, list, wait and the rest), on rooms of its
// own, one concern each: the record and its events (sessions/record),
// settings (sessions/config), the agent contract (sessions/agent), where a
// record changes (sessions/state: the store and the lifecycle), the
// listing cache (sessions/listing), live reading (sessions/watch),
// processes and cgroups (sessions/proc), worktrees (sessions/workspace)
// and the scheduler seam (sessions/runner). This file specifies the state
// directory, the lifecycle and the events they share; docs/architecture.md
// maps the rooms. It imports no zwarm package outside sessions/; adapters
// implement agent.Adapter, and sessions/render turns events into text for
// people and models.
//
// Two kinds of process run zwarm's sessions. The supervisor (package
// sessions/supervisor) runs inside `zwarm __supervise ID`, one detached
// process per session with work; this package runs in the command that
// reads and changes sessions (the CLI, the dashboard, the orchestrator,
// `zwarm mcp`), and hands the supervisor the narrow turn API of the
// lifecycle (state.Turns): the one way a supervisor changes its session,
// so that the lifecycle (sessions/state) stays the only place a status
// changes.
// Only `zwarm __supervise` imports sessions/supervisor.
//
// # State directory
//
// The default is the nearest .zwarm/ (--state-dir or ZWARM_STATE_DIR
// override it). Directories are created 0700 and files 0600: transcripts
// hold code and secrets. Nothing is created by reading.
//
//	.gitignore                       "*": the state dir ignores itself, so transcripts are never committed
//	config.toml                      settings (Config, and the tables of ConfigSections); unknown keys are an error
//	codex.toml, claude.toml          per-agent settings, read by the adapters
//	sessions/<id>/meta.json          the Session record, replaced atomically
//	sessions/<id>/.lock              the lock (# Locks) held while the record is changed; while
//	                                 held, it names the holder (pid and command; under leases
//	                                 its host too), so a waiter can say who
//	sessions/<id>/.reserve           disk space kept while the session is not settled, given
//	                                 back on a full disk so the outcome ("disk full"), with the
//	                                 turn's last message and usage, can still be recorded (the
//	                                 agent runs on; what it prints meanwhile is parsed, not kept)
//	sessions/<id>/cgroup             the path of the session's cgroup, while it has one
//	sessions/<id>/turns/turn_N.jsonl the agent's stdout for turn N, byte for byte, but that a
//	                                 line longer than MaxLineBytes (8 MiB) is replaced by the
//	                                 line {"type":"zwarm.truncated","bytes":N}, N the bytes cut
//	                                 (the line but its newline); readers report it as a raw
//	                                 event, and no process holds more of a line than that
//	sessions/<id>/turns/turn_N.stderr the agent's stderr for turn N
//	sessions/<id>/turns/turn_N.times when each item of turn N was first and last reported, one
//	                                 JSON object a line {item, start, end} (package telemetry),
//	                                 written when the turn ends: what a rebuilt trace's times are
//	sessions/<id>/span_end           when the session first settled (RFC 3339): where its trace
//	                                 span ends; made once (O_EXCL) by the supervisor that sent it
//	sessions/<id>/inbox/<seq>-<id>.json  one follow-up each (InboxEntry; an interrupt's goes first)
//	sessions/<id>/supervisor.log     the supervisor's own diagnostics
//	sessions/<id>/supervisor.died    "PID TIME", written by the agent's guard when its supervisor died
//	sessions/<id>/slurm-<job>.out    what a Slurm job running the supervisor printed (runner slurm)
//	sessions/<id>/supervisor.lock    the lock held by a supervisor for its whole life, so a
//	                                 follow-up's new one starts its agent only after the previous
//	                                 one has torn down the session's cgroup (or, under leases, its
//	                                 lease has run out)
//	sessions/<id>/notified/<event>.<key>  made (O_EXCL) by the zwarm process that ran the
//	                                 [notify] command for that event (package watchers/notify)
//	sessions/<id>/setup.log          what making the session's worktree did and printed (git, what
//	                                 was brought along, the [worktrees] setup command's output), and
//	                                 what each of its jobs' setup printed ([runner.slurm] setup)
//	sessions/.new-<id>/              a session being created: renamed into place whole, or removed
//	sessions/.removing-<id>/         a session being removed (what a killed command left: zwarm clean)
//	sessions.index                   the listing cache (sessions/listing; its format sessions/index): never the source of truth
//	sessions.gen                     bumped, under its lock, before a settled record changes
//	sessions.gen.lock                under leases, the writers' lock of sessions.gen (a flock is on the file itself)
//	land.lock                        the lock held by a landing, so each builds on the one before
//	spawn.lock                       the lock held by a spawn with a limit while it counts and records
//	.<lock>.<token>, <lock>.break    under leases, a lock being taken, and the lock of breaking one
//	runs/<run-id>/                   orchestrator runs (package orchestrator)
//	mcp-seen.json                    what zwarm mcp's clients were shown of each worker (package mcpserver)
//	runners/<runner>.json            what a runner's engine last said of the jobs readers asked about,
//	                                 and since when it has not answered (sessions/runner, Seen): shown
//	                                 while the engine is unreachable; a note, never the source of truth
//	runners/slurm-batches/<batch>/<i>  a link to the session of task i of a Slurm job array (spawn -n):
//	                                 the array's one output file name reaches each task's session dir
//	logs/zwarm.log                   zwarm's own log
//
// # Locks
//
// Each lock above is made the way the state dir's scheme says
// (sessions/store, scheme.go and lease.go): [state] locks in config.toml,
// "auto" by default, ZWARM_LOCKS above it (tests). On a local file system
// a lock is flock(2) on its file, which stays, and which the kernel lets
// go of when its holder dies. On a network file system (NFS, SMB/CIFS, 9p,
// FUSE, Lustre), where flock does not hold across machines, or with locks
// = "lease", a lock is a lease: its file exists only while it is held,
// made atomically on the file server (a file of a unique name, holding the
// holder's record, hard-linked into place), naming its holder (host, pid,
// command, what it locks), a random token and its lease (15 s), and
// touched by its holder every fifth of it. A waiter breaks a lock whose
// file the server last touched longer ago than its lease and a margin (5
// s), by the server's clock, never by a machine's own, renaming it away
// one waiter at a time; a holder removes it only while it holds its
// token. A holder killed while it holds one leaves it for that long,
// unless it was a process of this machine and a command that finds the
// session's owner dead (a kill that killed it, a reader recording a dead
// owner) lets go of it; every process that shares a state dir must use
// the same scheme.
//
// Settings are read only from a state dir this user owns that no one else
// may write (trust.go), as git reads only a repository its user owns: they
// name the programs zwarm runs. Nothing zwarm writes in a state dir goes
// through a symlink (sessions/store); one where zwarm's file or directory
// should be is an error naming it.
//
// Session ids are uuid4 strings. Commands accept any unique prefix; input
// that is not hex digits and dashes is rejected before it reaches a path.
//
// meta.json is the Session type as JSON with "version": 1. Readers never
// need more than meta.json for a settled session: the supervisor keeps the
// summary (status, exit_code, usage, cost_usd, last_message, error,
// last_event_at) and one record per turn (n, prompt, started_at, ended_at,
// exit_code, status, usage, cost_usd, offset; usage_so_far, what the
// agent reported call by call before the turn's own report, counted in
// the summary's usage and cost) current. While a turn runs,
// offset says how many bytes of turn_N.jsonl the record already reflects;
// readers parse only the bytes after it. A turn file removed while its
// turn runs is made again at the same path, with the rest of the output
// (the removed part is lost), and the turn's "notes" say so (show, logs
// and the dashboard print them, escaped like agent text). What a session
// was started with beyond its adapter, model and sandbox is recorded once,
// at spawn, and given to its agent on every turn: "role" (the [roles.NAME]
// table of config.toml whose settings filled what the spawn left empty;
// roles.go), "reasoning_effort", "instructions" and "max_cost_usd", the
// cost past which its supervisor stops it, recording why (costlimit.go;
// a spawn with a limit on a model no price is known for is refused). A meta.json
// without "version" was written by the Python zwarm: it is shown, never
// changed, and its directory is never written to.
//
// Every writer (spawn, the supervisor, inject, kill, rm, a reader that
// finds a dead owner) changes meta.json under the session's lock, writing a
// temporary file and renaming it over the old one, so a reader always sees
// a whole record and no update is lost to a concurrent one. Readers never
// wait for a lock: a listing whose sessions.gen is locked checks every
// record, and a reader that finds a dead owner records it only if the
// session's lock is free. A command (inject, kill, rm) waits for a lock at
// most lock_timeout (default 10s), tells ManagerOptions.LockWaiting after a
// second what it waits for, and stops waiting at once when its context
// ends, having changed nothing (sessions/store); past lock_timeout a kill
// kills the session's live supervisor and records the kill if the lock is
// then free, or says what it stopped. A follow-up is sent whole or
// not at all: once its record is changed, its supervisor is started
// whatever the context says.
//
// # Lifecycle
//
//	pending ─► running ─► completed | failed | killed
//	completed | failed | killed ─► attached ─► as it was
//
// The lifecycle (sessions/state) is the only place the status, the owner
// and the turns change state: a closed set of transitions (claim,
// startTurn, handOver, endTurn, settle, reopen, requestStop, stopped,
// abandon, failStart, interrupt, attach, handToAttacher, detach), each
// refusing a state it does not apply to. They are unexported: the Manager
// applies them through the state.Tx that one locked update of the record
// (state.Store.Update and its kin) hands its change, the supervisor only
// through Turns (Claim, Prepared, EndTurn, HandOver), each one update of
// the record. The compiler refuses a status set anywhere else: the record
// reads it with Status() from a field only sessions/internal/statusfield
// writes, a door only the lifecycle uses (and what rebuilds records from
// what was read: the listing cache, test fixtures). Settled (no turn
// running and none about to start) is the one answer to "is it done?"; a
// turn's end and the start of the next queued follow-up, or the settling,
// are one update, so nobody sees a session settled that is about to run
// again. "failed" means the agent reported failure or exited non-zero, or
// zwarm could not start or record it (a full disk); "killed" means zwarm
// stopped it.
//
// The record names its owner: the process that is spawning the session or
// sending it a follow-up (role "spawn"), then its supervisor (role
// "supervisor"), or the command a person is attached through (role
// "attach"), each as a pid with its start time, so a reused pid is
// never taken for the owner. A reader that finds an unsettled session
// whose owner is gone records it as failed with an error saying so, after
// stopping whatever of the session is still running: a status is never a
// guess and nothing runs unsupervised. A supervisor also carries a random
// token, and every write of its turn API is fenced by it: once the record
// names another owner (or none), its writes are refused (ErrFenced), and
// it stops its agent and records nothing more.
//
// An interrupt (Manager.Interrupt: inject --interrupt, the tools'
// converse and MCP inject with interrupt) stops the running turn, not
// the session: it queues its follow-up, marked to go before the others,
// and records Interrupt in the session (Session.Interruptible is the one
// answer to "can it take one?": a turn runs that no kill or earlier
// interrupt is stopping). The supervisor reads the record while the turn
// runs (a stat first, on this host; a read each time under another
// runner, whose record is on a shared file system that raises no inotify
// event for another host's writes), stops the agent as a kill does
// (stop signal, kill_grace, SIGKILL, a sweep), records the turn
// "interrupted" (a turn's status only, never a session's; not failed,
// and a kill that comes too makes it killed), and starts the follow-up
// as the next turn in the same update, by the agent's native resume.
//
// Attached: a person works in the agent's own interactive CLI, in the
// session's thread and dir (Manager.Attach, zwarm attach; the adapter's
// Interactive command line). Only a settled session is attached (a
// running one is refused, ErrRunning, unless the attach interrupts its
// turn: the supervisor then hands the session to the attaching command in
// the update that ends the turn, before any queued follow-up). While
// attached, the session is not settled: its owner is the attaching
// command (role "attach"), a follow-up queues (Inject says Attached),
// kill refuses it (ErrAttached), and Session.Attaches holds the open
// span. The CLI runs contained as an agent does (the session's marker,
// and its cgroup, made and recorded as a supervisor makes it, where the
// machine gives one). When the CLI exits, the attaching command kills
// whatever it left running, commits what was left in the worktree (as a
// turn's end does), and detaches: the session
// settles as it was (its status and error before the attach; after an
// interrupted turn, completed), the span gets its end, the CLI's exit
// code, the commit and its files, what the person's calls used (from the
// agent's own logs) and, in a worktree, the new conversation they left
// the CLI in, if any, which becomes the session's thread; follow-ups
// queued meanwhile then start
// as a follow-up to a settled session does. The CLI gets SIGTERM if the
// attaching command dies; a reader that finds the attaching command gone
// (by its pid and start time, as any owner) detaches the session with a
// note saying so, kills the CLI if it still runs, and reports the queued
// follow-ups undelivered. An attach under another runner runs on the
// host of the attaching command, which judges it by its pid, not by the
// session's ended job.
//
// # Runners
//
// A session's supervisor runs on this host (runner "local", the default:
// a detached process) or under another Runner, a cluster's scheduler
// (runner "slurm": one batch job per start of the supervisor, whose main
// process is `zwarm __supervise`). The record's job names the runner and
// its job id; the owner's pid then means nothing on this host, and only
// the runner judges whether the supervisor lives: its engine is asked
// once per poll interval for every live job together (Runner.Jobs). A job
// that ended without its supervisor recording the outcome settles the
// session with the engine's reason when the engine ended it ("cancelled
// by slurm", "time limit 00:30:00", "node lost": killed), else as failed;
// an engine that does not answer concludes nothing, and listings show
// the records as they are, saying the runner is unreachable. The files of
// such a session are polled (the supervisor's writes, made on another
// host of a shared file system, may raise no inotify event here). A kill
// marks the record, cancels a queued job, asks a running supervisor to
// stop (SIGTERM through the engine), and ends the job by force after the
// grace period; a follow-up to a settled session submits a new job that
// resumes the agent's thread.
//
// # Worktrees
//
// In a git repository a session's agent works in a worktree of its own
// (Session.Workspace; package sessions/workspace drives git), outside
// the repository under [worktrees] dir (default
// $XDG_DATA_HOME/zwarm/worktrees/<repo>-<hash of its git dir>/<id>), on
// branch zwarm/<id> of a repository made for the worker alone beside it
// (<id>.git, Workspace.OwnGitDir: it borrows the repository's objects read
// only, and zwarm fetches each commit it takes from it into the
// repository, under refs/zwarm/<id>/, moving zwarm/<id> there to follow),
// made from the caller's HEAD or a base it names, or
// from a snapshot of HEAD and the caller's uncommitted changes. Outside a
// repository, or with isolation "none", it works in place and
// Session.Workspace is nil. Spawn checks the repository and the base
// before it records anything, and never falls back to working in place.
//
// The worktree is made by the supervisor, after it claims the session and
// before the first turn, while the session is pending (Workspace.State
// new, then preparing, then ready; failed, with the reason, fails the
// session): git worktree add, the [worktrees] copy and symlink entries and
// .worktreeinclude from the caller's checkout, then the setup command,
// contained as an agent is. A kill stops the making. At the end of every
// turn, whatever ended it, the supervisor commits what the agent left
// (author and committer zwarm, the user's hooks off, what was brought
// along left out) and records the turn's commit and files, and the
// change's size against its base (Workspace.Changes, Head, Committed).
// No git runs beside an agent (the supervisor's reaper waits for any
// child), so a live agent serves one turn per process in a worktree.
//
// The agent in a worktree is not trusted with git: it can write none of
// the repository's objects and refs, and zwarm's git runs pinned to the
// worktree's own git dir, recorded when it was made (Workspace.AdminDir,
// Workspace.OwnGitDir), never to what the worktree's .git file says; the
// turn's commit goes on zwarm/<id> whatever the agent checked out, leaves
// a .zwarm there out, and is not made while a merge has files in conflict
// or a rebase is stopped (the turn stays uncommitted and Workspace.Conflict
// names the files). Beside each worktree, <worktree>.state names the
// state dir that made it, so a state dir judges as leftovers only the
// worktrees it made, and commands run inside a worktree find its state dir.
//
// The Manager diffs a worker's change (its commits, or for a worker that
// may have left work uncommitted, its files, through a copy of its index),
// lands it into a branch (squash, merge or rebase; a conflict found with
// git merge-tree, or uncommitted changes of the target checkout the
// landing would overwrite, refuse it before anything changes; verify runs
// on exactly the result), queues landings (LandAll), merges a base's new
// commits in (Update; a conflict is handed to the worker as a follow-up),
// and removes a worktree and its branch with its session, refusing to drop
// work never landed unless forced. A landing removes the worktree
// (Workspace.Landed); a follow-up makes it again from what was landed,
// starting a new change, and the landing moves to Workspace.Earlier.
// Landing and updating change a settled record, so they advance sessions.gen as a follow-up does; while one
// works in the worktree, its process is recorded as Workspace.Lander, and
// a follow-up, another landing or update, or a removal is refused until
// it is done (or dead).
//
// # Supervision
//
// Spawn refuses a request that cannot run (no such adapter, a missing
// binary, a bad setting) before recording anything, records the session,
// and starts `zwarm __supervise --detach ID`, which starts the supervisor
// in a new session (setsid) and exits, so the supervisor outlives the
// command and is nobody's zombie. The supervisor makes itself a child
// subreaper, then runs one turn after another: the task, then each queued
// follow-up in order. Each agent runs in its own process group, in a
// cgroup of its own where the machine allows it (Containment says), with
// SIGKILL as its parent-death signal and ZWARM_SESSION_ID=<id> in its
// environment, which every descendant inherits. Its stdout and stderr are
// drained into the turn files by goroutines; its stdin is fed by one too
// (the prompt, of any size, for agents that read it there; follow-ups for
// live agents), so the supervisor never blocks on an agent. When the agent
// exits, everything left of the session is killed: the cgroup, the
// supervisor's descendants, every process carrying the marker. The exit
// status recorded is the agent's (128+N for a signal).
//
// Every sweep (the supervisor's, Kill's, a reader's that finds the
// supervisor dead) covers the session's cgroup and every cgroup below it:
// an agent that makes a cgroup under its leaf and moves into it, or moves
// into the session's cgroup, is still found and killed. A process running
// as root that moves itself to a cgroup outside zwarm's (and drops the
// marker, and leaves the supervisor's tree) cannot be contained: the
// kernel lets root do that, and zwarm does not pretend otherwise.
//
// A session's directory deleted while it runs, or only its record: the
// supervisor checks both several times a second and, once either is gone
// (or the directory replaced), stops the agent as a kill does and exits;
// nothing can be recorded, and a session no listing shows must not run
// on. The session's cgroup is tagged (xattr user.zwarm.state) with its
// state dir, so that Orphans (zwarm doctor) finds the cgroups of this
// state dir whose session is gone or has no record, and KillOrphans (zwarm
// kill --orphans) stops what runs in them, should the supervisor have died
// too. zwarm never makes a session directory without its record (it is
// renamed into place whole, and out of place before it is emptied), so one
// is broken, never being created: listings report it as an unreadable
// record (a subscription, which watches sessions, leaves it out), Kill
// stops what runs of it, and Remove with force deletes it.
//
// The supervisor reaps every child it has, so no other code may start
// processes in a supervisor process; InSupervisor tells.
//
// A follow-up to an unsettled session is queued in the inbox and delivered
// when the running turn ends (to a live agent on its stdin, else by the
// agent's native resume); one to a settled session reopens it and starts a
// new supervisor at once. Every follow-up is delivered exactly once, in
// order, or marked undelivered with the reason (the session was killed,
// its supervisor died or could not be started).
//
// Kill first records the kill in the session (Stop), under the lock, so
// from then on no turn starts and no follow-up is handed over, whoever
// owns the session; then it sends SIGTERM (and SIGCONT) to the supervisor
// (one that has not claimed the session yet is not signalled: it sees the
// kill as it claims it and settles at once), which gives the agent's group
// its stop signal (SIGTERM; SIGINT for claude), the grace period (config
// kill_grace, default 5s), then SIGKILL, sweeps every remaining process of
// the session, and records "killed". If the supervisor is gone or does not
// answer in time, Kill does the same itself. A session whose record cannot
// be read is still found and stopped, by its cgroup, its marker and its
// supervisor's command line. The record names the kill's command
// (Killer) until the kill is done, and a follow-up is refused meanwhile,
// so what the kill sweeps is never a follow-up's and the kill sees the
// session it stopped settle. A settled session whose processes still run
// (its cgroup is populated, or they carry its marker) has them stopped by
// Kill, and Remove refuses to forget it unless forced. In a read-only
// state dir Kill still signals and sweeps, then reports that the record
// could not be updated.
//
// # Watching
//
// Manager.Subscribe delivers an Update per change of a session: the record
// as it is now, the turns that started and ended, with Events the agent's
// new events, and follow-ups that changed state, in order and with
// backpressure; nothing is lost while the consumer is busy. It is driven
// by inotify on directories and by pidfds on the owners of unsettled
// sessions (a supervisor killed with SIGKILL writes nothing, but its exit
// is heard), never by a timer. Wait, WaitInbox, Follow, the dashboard, the
// orchestrator and the watchers build on it.
//
// A subscription to every session starts from the listing cache (a
// Listing: each settled session's summary, newest first, a hundred bytes
// of it in memory) and reads whole only the records the cache does not
// hold as they are. It watches the sessions dir and the dirs of the
// sessions that are not settled; the settled ones' records change through
// zwarm only after sessions.gen advances, and a writer's close of it
// (inotify's close-write) has them checked, one stat each
// (subscribe_settled.go). The dashboard takes the Listing as it is
// (SubscribeOptions.Listing) and reads a summary when its row is shown.
//
// # Events
//
// Adapters parse their agent's output lines into Event values. A line that
// is not an event (stderr mixed in by older tools, a line cut short by a
// kill) becomes EventRaw; an event type the parser does not know becomes
// EventUnknown with the type in Text. Parsers never fail. Items an agent
// reports several times (started, updated, completed) carry Phase and
// ItemID; Steps folds them into one step each.
//
//	thread.started  ThreadID: the agent's conversation id, used to resume
//	turn.started    the agent began working on the prompt
//	message         Text: a message of the agent to the user
//	reasoning       Text: the agent's reasoning summary
//	command         Command, Output, ExitCode (nil while running), Status
//	file_change     Changes: [{path, kind: add|update|delete}]
//	todo_list       Todos: [{text, completed}]
//	tool_call       Tool, Input (JSON or text), Output, Text (its error)
//	tool_result     Output: what a tool returned, ItemID names the call
//	usage           Usage: what one model call used, as the turn goes
//	                (claude's assistant messages; a message reported in
//	                several lines is counted once, each later line adding
//	                what grew). Counted in the turn's cost until the turn's
//	                own report (turn.completed, turn.failed) replaces it,
//	                so a cost limit can stop a turn in its course
//	turn.completed  Usage; Cumulative when it is the thread's running total
//	                (codex), else this turn's own (claude); CostUSD if the
//	                agent reported a price
//	turn.failed     Text: why the agent gave up; Usage and CostUSD as for
//	                turn.completed when the agent priced the failed turn
//	error           Text: a non-fatal error; kept as the failure reason if
//	                the agent exits non-zero without a turn.failed
//	retry           Text: the agent is retrying the model
//	unknown, raw    see above
//
// Lines are complete only with their newline: a reader of a running turn
// holds back a partial last line until it is finished. Lines up to
// MaxLineBytes are parsed whole; a longer one (the supervisor's
// zwarm.truncated marker, or a line of a file written before it cut them)
// becomes a raw event saying it was skipped and how long it was. A parser's returned slice is valid until its next call.
package sessions
