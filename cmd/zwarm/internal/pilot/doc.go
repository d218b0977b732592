// Package pilot is zwarm pilot's conversation: the REPL a person drives a
// run from. Converse gives the model the person's turns, one at a time,
// until they leave or the run ends; Ctrl+C stops a turn, and the prompt's
// commands (:status, :workers, :history, :goto, :quit) look at the run or
// take it back. The prompt (Input) edits lines, keeps a history in the
// state dir (0600, never through a symlink) and completes the commands;
// without a terminal it reads plain lines (a script). How steps, runs and
// sessions are printed is the command's (Printer, View), shared with
// orchestrate and ls.
package pilot
