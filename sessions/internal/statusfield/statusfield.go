// Package statusfield holds the status of a session and of a turn where
// only the lifecycle can change it.
//
// The record (sessions/record) embeds a Field in Session and in Turn under
// an unexported name and reads it through a Status method, which hides
// the field: outside this package no code can write a status, take its
// address or set it in a composite literal; the compiler refuses each.
// JSON sees the field as the record's own "status", so the record's files
// and --json are as they were. Set and With are the one door, and Go lets
// only packages under sessions/ import this one; the package map
// (cmd/zwarm/imports_test.go) narrows that to the record, which embeds the
// field and never sets it, the lifecycle (sessions/state), the listing
// cache that rebuilds records it summarized (sessions/listing) and the
// test fixtures that write records as zwarm would (sessions/sessionstest).
package statusfield

// Status is where a session, or a turn, is in its lifecycle; the record
// names it record.Status and lists the values.
type Status string

// Finished reports whether no turn is running or about to run, and nobody
// works in the session's thread.
func (s Status) Finished() bool {
	return s == "completed" || s == "failed" || s == "killed"
}

// Ended says how a settled session ended, as the end of a sentence about
// it: "completed", "failed", "was killed".
func (s Status) Ended() string {
	if s == "killed" {
		return "was killed"
	}
	return string(s)
}

// Field is a record's status as embedded in it. Its field is exported
// only so that encoding/json reads and writes it; the record's Status
// method hides it from every other package.
type Field struct {
	Status Status `json:"status"`
}

// field gives Set the Field of whatever embeds one: being unexported, it
// is promoted to the record's types but callable only here.
func (f *Field) field() *Field { return f }

// Set changes the status of s, a *record.Session or a *record.Turn.
func Set(s Holder, to Status) { s.field().Status = to }

// Holder is what embeds a Field: *record.Session and *record.Turn. Its
// method is unexported, so nothing else can be one.
type Holder interface{ field() *Field }

// With is v with its status set to to: a record made with a status, as
// the lifecycle makes a new turn.
func With[T any, P interface {
	*T
	Holder
}](v T, to Status) T {
	Set(P(&v), to)
	return v
}
