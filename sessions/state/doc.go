// Package state is where a session's record changes: the store of
// records in the state dir (each change read, made and written under the
// session's lock, atomically), the generation counter that keeps the
// listing cache honest, the inbox of follow-ups, the records the Python
// zwarm left, and the lifecycle: the closed set of transitions, the only
// code that sets a status. The Manager changes a record through Update
// and its kin with a transition inside; the supervisor through Turns.
package state
