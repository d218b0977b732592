package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

type logsOptions struct {
	f      *factory
	id     string
	follow bool
	raw    bool
	turn   int
}

// runF, if set, runs instead of the command, with the options the command
// line gave (tests of the flags).
func newLogsCmd(f *factory, runF func(*logsOptions) error) *cobra.Command {
	o := &logsOptions{f: f}
	c := &cobra.Command{
		Use:   "logs ID",
		Short: "Print what a session's agent did, or its raw JSONL",
		Long: `Print what a session's agent did, turn by turn, as zwarm show does; with -f,
keep printing as it works until the session settles. --raw prints the JSONL
the agent wrote, byte for byte.`,
		Example: `  zwarm logs 3f2a -f              # follow a running session live
  zwarm logs 3f2a --raw --turn 2  # the raw JSONL of turn 2`,
		Args: exactArgs(1, "one session id"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			if c.Flags().Changed("turn") && o.turn < 1 {
				return cli.Usagef("--turn must be 1 or more (turns are numbered from 1)")
			}
			if runF != nil {
				return runF(o)
			}
			return runLogs(c, o)
		},
		ValidArgsFunction: completeIDs(f, nil),
	}
	c.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing as the agent works, until the session settles")
	c.Flags().BoolVar(&o.raw, "raw", false, "print the raw JSONL the agent wrote")
	c.Flags().IntVar(&o.turn, "turn", 0, "only this turn (default: all; with --raw: the last)")
	return c
}

func runLogs(c *cobra.Command, o *logsOptions) error {
	if o.raw && o.follow {
		return cli.Usagef("--raw and --follow do not go together: follow the rendered log, or read a finished turn raw")
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	if o.raw {
		return rawLog(c.Context(), o, m)
	}
	io := o.f.io
	ctx := c.Context()
	s, err := m.Get(ctx, o.id)
	if err != nil {
		return err
	}
	if o.turn > 0 && o.turn > len(m.Turns(s)) && (!o.follow || s.Settled()) {
		return config.Invalidf("session %s has no turn %d (it has %d)", record.ShortID(s.ID), o.turn, len(m.Turns(s)))
	}
	// Turns that have ended are read from their files as they are printed,
	// like show: a turn of any size is printed without being held.
	if !o.follow {
		deferGC(io) // read, print and exit, as show (a follow lives on)
	} else {
		limitHeap(io, followHeap)
	}
	w := bufio.NewWriterSize(io.Out, 64<<10)
	setup := &setupTail{path: m.Store().SetupLog(s.ID), done: o.turn > 1}
	writeLines(w, setup.next(!o.follow || s.Settled() || s.Turn > 0))
	lp := &logPrinter{st: m.Store(), w: w, from: 1, only: o.turn, follow: o.follow, setup: setup}
	from := 1
	for _, t := range m.Turns(s) {
		if t.EndedAt == nil && !s.Legacy {
			break
		}
		from = t.N + 1
		if !lp.wanted(t.N) {
			continue
		}
		writeLines(w, lp.gap())
		tw := render.NewTurnWriter(t, func(lines []render.Line) { writeLines(w, lines) })
		if err := m.ReadTurn(ctx, s, t.N, tw.Event); err != nil {
			return err
		}
		tw.End(stderrTail(m.Store(), s.ID, t))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if s.Settled() || o.turn > 0 && o.turn < from {
		return nil
	}
	var prog *cli.Progress
	if o.follow {
		prog = cli.StartProgress(io, "following "+record.ShortID(o.id))
		defer prog.Stop()
	}
	lp.w, lp.prog = io.Out, prog
	err = m.Follow(ctx, s.ID, watch.FollowOptions{From: from, Only: o.turn, Live: o.follow, OnUpdate: lp.update},
		func(watch.Step) {})
	lp.finish()
	return err
}

// rawLog copies a turn's stdout as the agent wrote it.
func rawLog(ctx context.Context, o *logsOptions, m *sessions.Manager) error {
	s, err := m.Get(ctx, o.id)
	if err != nil {
		return err
	}
	n := o.turn
	if n == 0 {
		n = max(s.Turn, 1)
	}
	if !s.Legacy && n > len(s.Turns) {
		return config.Invalidf("session %s has no turn %d (it has %d)", record.ShortID(s.ID), n, len(s.Turns))
	}
	path, err := m.RawTurn(ctx, s.ID, n)
	if err != nil {
		return config.Invalidf("%v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	written, err := io.Copy(o.f.io.Out, f)
	if err != nil {
		return err
	}
	if written == 0 {
		// Nothing on stdout: say where the rest is, off the byte-exact output.
		if fi, err := os.Stat(m.Store().StderrPath(s.ID, n)); err == nil && fi.Size() > 0 {
			fmt.Fprintf(o.f.io.ErrOut, "zwarm: turn %d printed nothing on stdout; its stderr (%d bytes) is %s\n",
				n, fi.Size(), m.Store().StderrPath(s.ID, n))
		}
	}
	return nil
}

// setupLimit bounds how much of a setup log is printed: a setup that
// printed more is cut, and its end is what tells.
const setupLimit = 1 << 20

// setupTail prints what making the session's worktree did and printed
// (git, what was brought along, the setup command's output) and what its
// jobs' setup printed ([runner.slurm] setup), before the first turn; a
// session in place on this machine has none. Followed, the log is printed
// as it grows, each time the session's record changes, until the first
// turn starts or the session settles (a setup that failed says so last).
type setupTail struct {
	path   string
	at     int64 // bytes of the log printed
	header bool  // "── setup" is printed
	done   bool
}

// next is what the log holds past what was printed: whole lines only, or
// with last all of it, then the blank line that sets it apart.
func (t *setupTail) next(last bool) []render.Line {
	if t == nil || t.done {
		return nil
	}
	t.done = last
	var lines []render.Line
	if f, err := os.Open(t.path); err == nil {
		lines = t.read(f, last)
		f.Close()
	}
	if last && t.header {
		lines = append(lines, render.Line{})
	}
	return lines
}

func (t *setupTail) read(f *os.File, last bool) []render.Line {
	st, err := f.Stat()
	if err != nil || st.Size() <= t.at {
		return nil
	}
	from := max(t.at, st.Size()-setupLimit)
	buf := make([]byte, st.Size()-from)
	n, _ := f.ReadAt(buf, from)
	if buf = buf[:n]; !last {
		buf = buf[:bytes.LastIndexByte(buf, '\n')+1]
	}
	if len(buf) == 0 {
		return nil
	}
	var lines []render.Line
	if !t.header {
		t.header = true
		lines = append(lines, render.Line{Text: "── setup"})
	}
	if from > t.at {
		lines = append(lines, render.Line{Indent: 1, Text: fmt.Sprintf("… (%d bytes cut: %s has all of it)", from-t.at, t.path)})
	}
	for _, l := range render.Lines(string(buf)) {
		lines = append(lines, render.Line{Indent: 1, Text: l})
	}
	t.at = from + int64(len(buf))
	return lines
}
