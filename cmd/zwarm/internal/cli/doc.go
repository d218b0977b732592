// Package cli is what every zwarm command shares to talk to a person or
// a program: the streams and what they are (a terminal of some width, with
// colour or not), tables that fit a terminal and are tab-separated when
// piped, a pager, output made safe for a terminal, the progress shown
// while a command blocks, the one JSON writer (--json and --jq, the
// documented fields of a session, and a listing streamed byte for byte as
// encoding/json writes it), and the one mapping of errors to exit codes.
package cli
