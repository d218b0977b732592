// Package watch reads sessions live: a Subscription delivers each
// session's state as it changes, driven by file events (inotify on the
// sessions' directories, a pidfd on each supervisor, sessions.gen for the
// settled ones) and never by polling but for sessions under another
// runner; Follow and Trajectory read a session's steps as they happen;
// TurnReader reads a turn file incrementally, event by event, in bounded
// memory. It reads through a Source (the Manager is one) and never
// changes a record.
package watch
