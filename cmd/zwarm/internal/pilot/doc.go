// Package pilot is the prompt of zwarm pilot, the REPL a person drives a
// run from: line editing, history kept in the state dir (0600, never
// through a symlink), completion of the pilot's commands, and plain lines
// when the input is not a terminal (a script). What a line does is the
// pilot command's own.
package pilot
