package proc

// A Ref names a process by pid and start time, so that a reused pid is
// never taken for the original process.
type Ref struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	// Token is a supervisor's own, random: the record's owner is the
	// supervisor whose token it holds, wherever it runs (its pid may be
	// another host's or another pid namespace's).
	Token string `json:"token,omitempty"`
	// Role is "supervisor" for a session's supervisor, "spawn" for the
	// command that is starting one and "attach" for the command a person
	// works in the agent's CLI through.
	Role string `json:"role,omitempty"`
}
