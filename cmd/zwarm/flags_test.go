package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

// newTestStreams are streams on buffers, not a terminal (setTerminal
// makes them one): what a command reads, and where its output and errors
// go.
func newTestStreams() (s *cli.Streams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &cli.Streams{In: in, Out: out, ErrOut: errOut, Width: 80}, in, out, errOut
}

// setTerminal makes the streams a terminal cols wide, as a person's.
func setTerminal(s *cli.Streams, cols int) {
	s.InTTY, s.OutTTY, s.ErrTTY, s.Width = true, true, true, cols
}

// parse runs a command line of one command in this process, with the
// command's run replaced (runF), and returns the exit code zwarm would
// give: a usage error is 2 before anything runs.
func parse(t *testing.T, c *cobra.Command, io *cli.Streams, args ...string) int {
	t.Helper()
	c.SetArgs(args)
	c.SetOut(io.Out)
	c.SetErr(io.ErrOut)
	c.SilenceUsage, c.SilenceErrors = true, true
	return cli.ExitCode(c.ExecuteContext(context.Background()), io)
}

// Each command's flags and arguments land in its options; what the flags
// cannot mean is a usage error (exit 2) before the command runs.
func TestFlagsFillTheOptions(t *testing.T) {
	io, _, _, errOut := newTestStreams()
	f := &factory{io: io}
	ran := 0
	check := func(name string, got, want any) {
		t.Helper()
		ran++
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: options %+v, want %+v", name, got, want)
		}
	}

	var ls *lsOptions
	lsCmd := func() *cobra.Command { return newLsCmd(f, func(o *lsOptions) error { ls = o; return nil }) }
	if code := parse(t, lsCmd(), io, "--status", "running", "--adapter", "codex", "-m", "gpt-5.1-codex", "--source", "run:ab", "-L", "3", "--jq", ".[].id", "fix"); code != 0 {
		t.Fatalf("ls: exit %d %s", code, errOut)
	}
	check("ls", []any{ls.status, ls.adapter, ls.model, ls.source, ls.limit, ls.out, ls.text},
		[]any{"running", "codex", "gpt-5.1-codex", "run:ab", 3, cli.JSONFlags{JQ: ".[].id"}, "fix"})
	ls = nil
	if code := parse(t, lsCmd(), io, "one", "two"); code != cli.ExitUsage || ls != nil {
		t.Errorf("ls with two texts: exit %d, ran %v", code, ls != nil)
	}

	var show *showOptions
	showCmd := func() *cobra.Command {
		return newShowCmd(f, func(o *showOptions) error { show = o; return nil })
	}
	if code := parse(t, showCmd(), io, "--json", "3f2a"); code != 0 {
		t.Fatalf("show: exit %d %s", code, errOut)
	}
	check("show", []any{show.id, show.out}, []any{"3f2a", cli.JSONFlags{JSON: true}})
	show = nil
	if code := parse(t, showCmd(), io); code != cli.ExitUsage || show != nil {
		t.Errorf("show without an id: exit %d, ran %v", code, show != nil)
	}

	var logs *logsOptions
	logsCmd := func() *cobra.Command {
		return newLogsCmd(f, func(o *logsOptions) error { logs = o; return nil })
	}
	if code := parse(t, logsCmd(), io, "-f", "--turn", "2", "3f2a"); code != 0 {
		t.Fatalf("logs: exit %d %s", code, errOut)
	}
	check("logs", []any{logs.id, logs.follow, logs.raw, logs.turn}, []any{"3f2a", true, false, 2})
	logs = nil
	errOut.Reset()
	if code := parse(t, logsCmd(), io, "--turn", "0", "3f2a"); code != cli.ExitUsage || logs != nil || !strings.Contains(errOut.String(), "--turn must be 1 or more") {
		t.Errorf("logs --turn 0: exit %d, ran %v, %q", code, logs != nil, errOut)
	}

	var rm *rmOptions
	rmCmd := func() *cobra.Command { return newRmCmd(f, func(o *rmOptions) error { rm = o; return nil }) }
	if code := parse(t, rmCmd(), io, "--all", "-y", "--dry-run"); code != 0 {
		t.Fatalf("rm: exit %d %s", code, errOut)
	}
	check("rm --all", []any{rm.ids, rm.all, rm.yes, rm.dryRun, rm.force}, []any{[]string{}, true, true, true, false})
	if code := parse(t, rmCmd(), io, "--force", "3f2a", "9c1d"); code != 0 {
		t.Fatalf("rm ids: exit %d %s", code, errOut)
	}
	check("rm ids", []any{rm.ids, rm.all, rm.force}, []any{[]string{"3f2a", "9c1d"}, false, true})
	for _, args := range [][]string{{}, {"--all", "3f2a"}} {
		rm = nil
		if code := parse(t, rmCmd(), io, args...); code != cli.ExitUsage || rm != nil {
			t.Errorf("rm %q: exit %d, ran %v", args, code, rm != nil)
		}
	}

	var runs *runsOptions
	runsCmd := func() *cobra.Command { return newRunsCmd(f, func(o *runsOptions) error { runs = o; return nil }) }
	if code := parse(t, runsCmd(), io, "--json"); code != 0 {
		t.Fatalf("runs: exit %d %s", code, errOut)
	}
	check("runs", runs.out, cli.JSONFlags{JSON: true})
	runs = nil
	if code := parse(t, runsCmd(), io, "3f2a"); code != cli.ExitUsage || runs != nil {
		t.Errorf("runs with an id: exit %d, ran %v", code, runs != nil)
	}

	var doctor *doctorOptions
	doctorCmd := func() *cobra.Command {
		return newDoctorCmd(f, func(o *doctorOptions) error { doctor = o; return nil })
	}
	if code := parse(t, doctorCmd(), io); code != 0 || doctor == nil {
		t.Fatalf("doctor: exit %d %s", code, errOut)
	}
	check("doctor", doctor.f, f)
	doctor = nil
	if code := parse(t, doctorCmd(), io, "now"); code != cli.ExitUsage || doctor != nil {
		t.Errorf("doctor with an argument: exit %d, ran %v", code, doctor != nil)
	}
	if ran != 7 {
		t.Fatalf("checked %d command lines", ran)
	}
}

// The global --state-dir and the command's flags are read wherever they
// stand, and an unknown flag is a usage error that names the command's
// help; the whole command line runs in this process, on test streams.
func TestCommandLineInProcess(t *testing.T) {
	dir := t.TempDir()
	io, _, out, errOut := newTestStreams()
	if code := run(context.Background(), []string{"ls", "--state-dir", dir, "--json"}, io); code != 0 || strings.TrimSpace(out.String()) != "[]" {
		t.Fatalf("ls --json over an empty state dir: exit %d %q %q", code, out, errOut)
	}
	io, _, out, errOut = newTestStreams()
	if code := run(context.Background(), []string{"--state-dir", dir, "ls", "--bogus"}, io); code != cli.ExitUsage || out.Len() != 0 ||
		!strings.Contains(errOut.String(), "unknown flag: --bogus") || !strings.Contains(errOut.String(), "zwarm ls --help") {
		t.Fatalf("ls --bogus: exit %d %q %q", code, out, errOut)
	}
	io, _, out, errOut = newTestStreams()
	if code := run(context.Background(), []string{"spawn", "--state-dir", dir, "-v is broken"}, io); code != cli.ExitUsage || !strings.Contains(errOut.String(), "goes after --") {
		t.Fatalf("spawn with a task that looks like a flag: exit %d %q %q", code, out, errOut)
	}
	io, _, out, errOut = newTestStreams()
	if code := run(context.Background(), []string{"--state-dir", dir, "lss"}, io); code != cli.ExitUsage || !strings.Contains(errOut.String(), `did you mean ls`) {
		t.Fatalf("a misspelt command: exit %d %q %q", code, out, errOut)
	}
	io, _, out, errOut = newTestStreams()
	if code := run(context.Background(), []string{"--state-dir", dir, "wait", "--timeout", "30", "x"}, io); code != cli.ExitUsage || !strings.Contains(errOut.String(), "takes a unit: 90s") {
		t.Fatalf("a duration without a unit: exit %d %q %q", code, out, errOut)
	}
}

// Over a state dir of fixtures, ls on a terminal is a table that fits its
// width; piped, it is tab-separated rows with the whole id.
func TestLsFitsTheStreamsInProcess(t *testing.T) {
	dir := t.TempDir()
	id := "9c1d0000-0000-4000-8000-000000000001"
	writeLegacy(t, dir, id)
	io, _, out, errOut := newTestStreams()
	setTerminal(io, 60)
	if code := run(context.Background(), []string{"--state-dir", dir, "ls"}, io); code != 0 {
		t.Fatalf("ls on a terminal: exit %d %q", code, errOut)
	}
	table := out.String()
	if !strings.Contains(table, id[:8]) || strings.Contains(table, id) || strings.Contains(table, "\t") {
		t.Errorf("ls on a terminal is not a table of short ids:\n%s", table)
	}
	for _, l := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		if w := runewidth.StringWidth(l); w > 60 {
			t.Errorf("a line %d wide on a terminal 60 wide: %q", w, l)
		}
	}
	io, _, out, errOut = newTestStreams()
	if code := run(context.Background(), []string{"--state-dir", dir, "ls"}, io); code != 0 {
		t.Fatalf("piped ls: exit %d %q", code, errOut)
	}
	if !strings.Contains(out.String(), id+"\t") {
		t.Errorf("piped ls has no row for %s:\n%s", id, out)
	}
}
