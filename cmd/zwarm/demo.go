package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/adapters/replay"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui"
)

type demoOptions struct {
	f       *factory
	replays string
	speed   float64
	noTUI   bool
	keep    bool
}

func newDemoCmd(f *factory) *cobra.Command {
	o := &demoOptions{f: f}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Watch zwarm supervise workers and orchestrate a task, no API key needed",
		Long: `demo starts real supervised workers that play back recorded agent transcripts
(built into zwarm, or the folder --replays names) with their original pacing,
and an orchestrated task whose model is recorded too: it delegates to two
replay workers, waits for them, checks one, looks at the workspace and
finishes. All of it runs in a temporary state dir, on the dashboard: the
run's row has its workers under it; select it to follow its steps. Try the
keys: i sends a follow-up, x kills. Everything the demo started ends with it.

--no-tui prints the session list and the run's steps as zwarm orchestrate
prints them, until everything has finished: on a terminal the list again
whenever it changes; piped, the list once and then a line per change.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runDemo(c, o) },
	}
	c.Flags().StringVar(&o.replays, "replays", "", "folder of recordings to play instead of the built-in ones")
	c.Flags().Float64Var(&o.speed, "speed", 1, "play the recordings this many times faster")
	c.Flags().BoolVar(&o.noTUI, "no-tui", false, "print the session list and the run's steps instead of the dashboard")
	c.Flags().BoolVar(&o.keep, "keep", false, "keep the demo's state dir afterwards")
	return c
}

func runDemo(c *cobra.Command, o *demoOptions) error {
	if o.speed <= 0 {
		return cli.Usagef("--speed must be positive")
	}
	dir, err := os.MkdirTemp("", "zwarm-demo-")
	if err != nil {
		return err
	}
	recs, err := replay.Stage(dir, o.replays)
	if err != nil {
		os.RemoveAll(dir)
		if o.replays != "" {
			return cli.Usagef("--replays: %v", err)
		}
		return err
	}
	if !o.noTUI {
		if err := needTerminal(o.f.io, "demo", ", or use zwarm demo --no-tui"); err != nil {
			os.RemoveAll(dir)
			return err
		}
	}
	o.f.useStateDir(dir)
	m, err := o.f.manager()
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	// The workers inherit this: their pacing.
	os.Setenv(replay.SpeedEnv, strconv.FormatFloat(o.speed, 'f', -1, 64))
	ctx := c.Context()
	runCtx, stopRun := context.WithCancel(ctx)
	var runDone chan struct{} // closed when the orchestrated run has ended
	defer func() {
		// Nothing of the demo outlives it, unless asked to: the run ends
		// first (it stops its commands and its workers), then every
		// session still running.
		stopRun()
		if runDone != nil {
			<-runDone
		}
		stopAll(context.WithoutCancel(ctx), m)
		if o.keep {
			fmt.Fprintf(o.f.io.ErrOut, "demo state kept: zwarm --state-dir %s ls\n", dir)
		} else {
			os.RemoveAll(dir)
		}
	}()
	work, err := os.Getwd()
	if err != nil {
		return err
	}
	for _, r := range recs {
		// Recordings change no files: they need no worktree.
		req := sessions.SpawnRequest{Task: r.Task, Adapter: replay.Name, Model: r.Model, WorkingDir: work,
			Source: record.UserSource, Isolation: config.IsolationNone}
		if _, err := m.Spawn(ctx, req); err != nil {
			return err
		}
	}
	// Headless, the table and the run's steps share stdout: each is
	// written whole.
	s := o.f.io
	var steps io.Writer // nil: the dashboard shows the steps
	if o.noTUI {
		shared := *s
		shared.Out = newSharedOut(s.Out)
		s, steps = &shared, shared.Out
	}
	run, err := startOrchestratedDemo(runCtx, s, m, work, o.speed, steps)
	if err != nil {
		return err
	}
	runDone = make(chan struct{})
	var runErr error
	go func() {
		defer close(runDone)
		_, runErr = run.execute(runCtx)
	}()
	if o.noTUI {
		if err := liveList(ctx, s, m, runDone); err != nil {
			return err
		}
		<-runDone
		if ctx.Err() != nil {
			return ctx.Err() // Ctrl+C: everything is stopped on the way out
		}
		return runErr
	}
	log, closeLog, err := fileLogger(dir)
	if err != nil {
		return err
	}
	defer closeLog()
	colorProfile()
	return tui.Run(ctx, m, dir, nil, log, nil, nil)
}

// stopAll kills every session still running.
func stopAll(ctx context.Context, m *sessions.Manager) {
	list, _ := m.List(ctx, listing.Options{})
	for _, s := range list {
		if !s.Settled() {
			m.Kill(ctx, s.ID)
		}
	}
}

// sharedOut is stdout shared by the run's steps and the session tables:
// each write whole, and each table a block set apart by blank lines.
type sharedOut struct {
	mu sync.Mutex
	w  io.Writer
	// apart says the output so far ends with a blank line (or is empty).
	apart bool
}

func newSharedOut(w io.Writer) *sharedOut { return &sharedOut{w: w, apart: true} }

func (o *sharedOut) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(b) > 0 {
		o.apart = bytes.HasSuffix(b, []byte("\n\n"))
	}
	return o.w.Write(b)
}

// block writes b set apart from what comes before and after it.
func (o *sharedOut) block(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var buf bytes.Buffer
	if !o.apart {
		buf.WriteByte('\n')
	}
	buf.Write(bytes.TrimRight(b, "\n"))
	buf.WriteString("\n\n")
	o.w.Write(buf.Bytes())
	o.apart = true
}

// liveList follows the sessions until every one has settled and done is
// closed (nil: not waited for). On a terminal it prints the session table
// again whenever a session's status or turn changes; piped, it prints the
// table once and then a line per change (changeLine), so the output grows
// with what happens, not with the size of the table.
func liveList(ctx context.Context, s *cli.Streams, m *sessions.Manager, done <-chan struct{}) error {
	sub, err := m.Subscribe(ctx, watch.SubscribeOptions{})
	if err != nil {
		return err
	}
	defer sub.Close()
	last := ""
	var seen map[string]string // piped: each session's status and turn as last printed
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-sub.C():
			if !ok {
				return sub.Err()
			}
		case <-done:
			done = nil // no longer waited for; a settled list ends it now
		}
		// Let the updates that arrived together print once.
		for drained := false; !drained; {
			select {
			case <-sub.C():
			default:
				drained = true
			}
		}
		list, err := m.List(ctx, listing.Options{})
		if err != nil {
			return err
		}
		key, settled := "", true
		for _, s := range list {
			key += s.ID + string(s.Status()) + strconv.Itoa(s.Turn) + ";"
			settled = settled && s.Settled()
		}
		switch {
		case key == last:
		case s.OutTTY || seen == nil:
			printTable(s, list)
			seen = map[string]string{}
			for _, x := range list {
				seen[x.ID] = string(x.Status()) + strconv.Itoa(x.Turn)
			}
		default:
			// Oldest first, as the changes happened.
			for i := len(list) - 1; i >= 0; i-- {
				x := list[i]
				if k := string(x.Status()) + strconv.Itoa(x.Turn); seen[x.ID] != k {
					seen[x.ID] = k
					fmt.Fprint(s.Out, changeLine(x, timeNow()))
				}
			}
		}
		last = key
		if settled && done == nil {
			return nil
		}
	}
}

// printTable prints the session table, as a block of its own when stdout
// is shared with a run's steps.
func printTable(s *cli.Streams, list []*record.Session) {
	shared, ok := s.Out.(*sharedOut)
	if !ok {
		writeSessions(s, list, timeNow(), false, nil)
		fmt.Fprintln(s.Out)
		return
	}
	var buf bytes.Buffer
	own := *s
	own.Out = &buf
	writeSessions(&own, list, timeNow(), false, nil)
	shared.block(buf.Bytes())
}

// changeLine is one session's change, piped: when it was seen, the whole
// id, the status, the turn, whose session it is and its task, tab
// separated as zwarm ls prints when piped.
func changeLine(x *record.Session, now time.Time) string {
	return fmt.Sprintf("%s\t%s\t%s\tturn %d\t%s\t%s\n", now.UTC().Format(time.RFC3339), x.ID, x.Status(), x.Turn,
		render.SafeLine(x.Source.String()), render.SafeLine(x.Task))
}
