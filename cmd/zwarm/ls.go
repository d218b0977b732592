package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers"
)

type lsOptions struct {
	f       *factory
	status  string
	adapter string
	model   string
	source  string
	text    string
	limit   int
	out     cli.JSONFlags
	now     func() time.Time
}

// runF, if set, runs instead of the command, with the options the command
// line gave (tests of the flags).
func newLsCmd(f *factory, runF func(*lsOptions) error) *cobra.Command {
	o := &lsOptions{f: f, now: time.Now}
	c := &cobra.Command{
		Use:     "ls [TEXT]",
		Aliases: []string{"list"},
		Short:   "List sessions, newest first",
		Long: `List sessions, newest first. TEXT keeps those whose id, task, model, adapter,
source or status contain it. On a terminal the table fits the width; piped,
it is tab-separated and untruncated.`,
		Args: maxArgs(1, "at most one TEXT to look for"),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.text = args[0]
			}
			if runF != nil {
				return runF(o)
			}
			return runLs(c, o)
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	fl := c.Flags()
	fl.StringVar(&o.status, "status", "", "only sessions with this status (pending, running, attached, completed, failed, killed)")
	fl.StringVar(&o.adapter, "adapter", "", "only sessions of this adapter")
	fl.StringVarP(&o.model, "model", "m", "", "only sessions of this model")
	fl.StringVar(&o.source, "source", "", "only sessions started by: user, mcp, run:RUN_ID")
	fl.IntVarP(&o.limit, "limit", "L", 0, "at most this many, the newest (0: all)")
	o.out.Add(c, "a JSON array of sessions")
	completeFlags(c, f)
	return c
}

func (o *lsOptions) filter() (listing.Options, error) {
	opt := listing.Options{Adapter: o.adapter, Model: o.model, Text: o.text, Limit: o.limit}
	if o.status != "" {
		st, err := record.ParseStatus(o.status)
		if err != nil {
			return opt, cli.Usagef("--status: %v", err)
		}
		opt.Status = st
	}
	if o.source != "" {
		src, err := record.ParseSource(o.source)
		if err != nil {
			return opt, cli.Usagef("--source: %v", err)
		}
		opt.Source = src
	}
	if o.limit < 0 {
		return opt, cli.Usagef("--limit must not be negative")
	}
	return opt, nil
}

func runLs(c *cobra.Command, o *lsOptions) error {
	opt, err := o.filter()
	if err != nil {
		return err
	}
	if _, err := o.out.Check(); err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	io := o.f.io
	deferGC(io)
	list, err := m.List(c.Context(), opt)
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		return err
	}
	if o.out.On() {
		write := func() error { return o.out.Write(io.Out, cli.ListJSON(list)) }
		if o.out.JQ == "" {
			write = func() error { return cli.WriteListJSON(io.Out, list) }
		}
		if err := write(); err != nil {
			return err
		}
	} else if len(list) == 0 {
		fmt.Fprintln(io.ErrOut, emptyNote(c, m, opt))
	} else {
		writeSessions(io, list, o.now(), true, stallConfig(m))
	}
	return reportUnreadable(io, le)
}

// stallConfig is the stall watcher's thresholds from config.toml; a broken
// or untrusted config is warned about, and the defaults used: a listing
// still lists. What is done instead goes on a line of its own, after the
// error, whose last lines may be TOML to paste.
func stallConfig(m *sessions.Manager) *watchers.StallConfig {
	wc := watchers.DefaultConfig()
	if cfg, err := m.Config(); err != nil {
		m.Warn(fmt.Errorf("%w\nzwarm: stalls are marked with the default thresholds", err))
	} else {
		wc = watchers.FromConfig(cfg)
	}
	return &wc.Stall
}

// reportUnreadable lists the records a listing could not read, each with
// its reason, under the output; the command then exits 1.
func reportUnreadable(io *cli.Streams, le *listing.Error) error {
	if le == nil {
		return nil
	}
	for _, r := range le.Records {
		fmt.Fprintf(io.ErrOut, "zwarm: cannot read session %s: %s\n", r.ID, render.SafeLine(r.Err.Error()))
	}
	fmt.Fprintf(io.ErrOut, "zwarm: %s could not be read (zwarm rm --force ID removes one)\n", render.Plural(len(le.Records), "session record"))
	return &cli.SilentError{Code: cli.ExitFailure}
}

// emptyNote says why nothing is listed: nothing there yet, or nothing that
// matches while other sessions exist.
func emptyNote(c *cobra.Command, m *sessions.Manager, opt listing.Options) string {
	if _, err := os.Stat(m.Store().Dir()); errors.Is(err, fs.ErrNotExist) {
		// Not an empty list: there is nothing there at all (a mistyped
		// --state-dir, say).
		return fmt.Sprintf("no state dir at %s (zwarm init makes one; so does the first spawn)", m.Store().Dir())
	}
	if opt == (listing.Options{Limit: opt.Limit}) {
		return fmt.Sprintf("no sessions in %s (start one with: zwarm spawn \"TASK\")", m.Store().Dir())
	}
	all, _ := m.Count(c.Context())
	what := "sessions match"
	if opt == (listing.Options{Status: opt.Status, Limit: opt.Limit}) {
		what = string(opt.Status) + " sessions"
	}
	note := fmt.Sprintf("no %s (%s in all; zwarm ls shows them)", what, render.Plural(all, "session"))
	if known := publicAdapters(); opt.Adapter != "" && !slices.Contains(known, opt.Adapter) {
		// Not refused: a record may name an adapter this build lacks. A
		// mistyped name is said so, though.
		note += fmt.Sprintf("\nzwarm: no adapter is named %q (known: %s)", opt.Adapter, strings.Join(known, ", "))
	}
	return note
}

// recent is how long a finished session stays marked as news.
const recent = time.Minute

// writeSessions prints the session table; with summary, on a terminal, a
// line of totals comes first.
// stall, if set, marks the running sessions the stall watcher would report.
func writeSessions(io *cli.Streams, list []*record.Session, now time.Time, summary bool, stall *watchers.StallConfig) error {
	var b strings.Builder
	if summary && io.OutTTY {
		b.WriteString(summaryLine(io, list) + "\n\n")
	}
	// Who started a session outlasts its numbers on a narrow terminal:
	// a run's workers and a person's sessions read apart at 80 columns.
	if _, err := io.Out.Write([]byte(b.String())); err != nil {
		return err
	}
	// On a terminal, CHANGES is shown when a worker listed has a worktree:
	// "in place" on every row says nothing. Piped, it is always there, so
	// scripts see the same columns.
	changes := !io.OutTTY
	for _, s := range list {
		changes = changes || s.Workspace != nil
	}
	cols := []cli.Column{{Title: "ID"}, {Title: "STATUS"}}
	if changes {
		cols = append(cols, cli.Column{Title: "CHANGES", Drop: 8})
	}
	cols = append(cols, cli.Column{Title: "ADAPTER", Drop: 6}, cli.Column{Title: "MODEL", Drop: 7},
		cli.Column{Title: "TURN", Drop: 2}, cli.Column{Title: "TOKENS", Drop: 4}, cli.Column{Title: "COST", Drop: 3}, cli.Column{Title: "AGE", RawTitle: "CREATED", Drop: 1},
		cli.Column{Title: "SOURCE", Drop: 5}, cli.Column{Title: "TASK", Flex: true})
	t := cli.NewTable(io, cols...)
	var row []cli.Cell // piped rows are written as they are made: one will do
	for _, s := range list {
		if io.OutTTY {
			t.Add(sessionRow(s, now, stall, changes)...)
		} else {
			row = plainRow(row[:0], s)
			t.Add(row...)
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	return writePriceFootnote(io, render.UnpricedModels(list))
}

// writePriceFootnote explains, on a terminal, the "?" a listing shows for a
// model without a price: one line under it. Piped output has no footnotes.
func writePriceFootnote(io *cli.Streams, models []string) error {
	note := render.PriceFootnote(models)
	if note == "" || !io.OutTTY {
		return nil
	}
	_, err := fmt.Fprintln(io.Out, io.Paint(cli.Dim, note))
	return err
}

// sessionRow is one line of ls on a terminal; changes says the CHANGES
// column is shown.
func sessionRow(s *record.Session, now time.Time, stall *watchers.StallConfig, changes bool) []cli.Cell {
	status, sgr := statusCell(s, now, stall)
	row := []cli.Cell{{Text: record.ShortID(s.ID)}, {Text: status, SGR: sgr}}
	if changes {
		row = append(row, changesCell(s))
	}
	return append(row,
		cli.Cell{Text: render.SafeLine(s.Adapter)},
		cli.Cell{Text: render.SafeLine(s.Model)},
		cli.Cell{Text: strconv.Itoa(s.Turn)},
		cli.Cell{Text: render.SessionTokens(s)},
		cli.Cell{Text: render.SessionCost(s)},
		cli.Cell{Text: render.Age(now.Sub(s.CreatedAt))},
		cli.Cell{Text: sourceCell(s.Source)},
		cli.Cell{Text: render.Clip(s.Task, 200)},
	)
}

// plainRow appends a piped line of ls to row: whole ids, token counts,
// dollars and RFC 3339 times, so awk and sort need no parsing of "12k" or
// "4m". Only these exact values are made: formatting what only people see
// was most of the cost of a long piped listing.
func plainRow(row []cli.Cell, s *record.Session) []cli.Cell {
	// Unknown (a running session that has reported no usage yet) and
	// unpriced are said as on a terminal; a known number is exact.
	tokens, cost := render.SessionTokens(s), render.SessionCost(s)
	if tokens != render.Unknown {
		tokens = strconv.FormatInt(s.Usage.TotalTokens, 10)
	}
	if cost != render.Unknown && s.CostUSD != nil {
		cost = strconv.FormatFloat(*s.CostUSD, 'f', -1, 64)
	}
	return append(row,
		cli.Cell{Text: s.ID},
		cli.Cell{Text: string(s.Status())},
		cli.Cell{Text: s.ChangesText()},
		cli.Cell{Text: render.SafeLine(s.Adapter)},
		cli.Cell{Text: render.SafeLine(s.Model)},
		cli.Cell{Text: strconv.Itoa(s.Turn)},
		cli.Cell{Text: tokens},
		cli.Cell{Text: cost},
		cli.Cell{Text: s.CreatedAt.UTC().Format(time.RFC3339)},
		cli.Cell{Text: render.SafeLine(s.Source.String())},
		cli.Cell{Text: render.SafeLine(s.Task)},
	)
}

func sourceCell(src record.Source) string {
	if src.Kind == record.SourceRun {
		return render.SafeLine(record.ShortID(src.Run))
	}
	return render.Source(src)
}

// statusCell marks what needs a look, readable without colour: * a session
// that just finished, ! one that failed or has follow-ups waiting, how long
// a running agent has been silent, and "stalled" past the stall watcher's
// thresholds.
func statusCell(s *record.Session, now time.Time, stall *watchers.StallConfig) (string, string) {
	text := string(s.Status())
	if s.Settled() && s.EndedAt != nil && now.Sub(*s.EndedAt) < recent {
		text += "*"
	}
	if s.Status() == record.StatusFailed || s.PendingInjects > 0 || s.Denied > 0 {
		text += "!"
	}
	if stall != nil {
		if _, stalled := stall.Stalled(s, now); stalled {
			silent := "no event yet"
			if s.LastEventAt != nil {
				silent = "quiet " + render.Age(now.Sub(*s.LastEventAt))
			}
			return text + ", stalled (" + silent + ")", cli.Red
		}
	}
	if s.RunnerState != "" {
		// Where its job is: "queued · slurm 1234 (Resources)".
		text += ", " + render.Clip(s.RunnerState, 48)
	}
	if q := render.Quiet(s, now); q != "" {
		return text + ", " + q, cli.Yellow
	}
	if s.Denied > 0 {
		// Work the agent was asked to do and its permissions refused:
		// never silent (show says which and how to allow them).
		return text + ", " + render.Plural(s.Denied, "call") + " denied", cli.Yellow
	}
	return text, statusColor(s.Status())
}

func statusColor(st record.Status) string {
	switch st {
	case record.StatusRunning:
		return cli.Cyan
	case record.StatusAttached:
		return cli.Blue
	case record.StatusCompleted:
		return cli.Green
	case record.StatusFailed:
		return cli.Red
	case record.StatusKilled:
		return cli.Yellow
	}
	return cli.Dim
}

// summaryLine counts sessions per status and sums their tokens and cost.
func summaryLine(io *cli.Streams, list []*record.Session) string {
	counts := map[record.Status]int{}
	var total int64
	var spent float64
	priced := true
	for _, s := range list {
		counts[s.Status()]++
		total += s.Usage.TotalTokens
		if s.CostUSD != nil {
			spent += *s.CostUSD
		} else if render.SessionUnpriced(s) {
			priced = false
		}
	}
	var parts []string
	for _, st := range record.Statuses {
		if counts[st] > 0 {
			parts = append(parts, io.Paint(statusColor(st), fmt.Sprintf("%d %s", counts[st], st)))
		}
	}
	return strings.Join(parts, "  ") + " · " + render.Tokens(total) + " tokens · " + render.PartialCost(record.RoundCost(spent), priced)
}

// changesCell is what became of a worker's change: "+120 -8 in 5 files",
// "landed", "conflict", "in place".
func changesCell(s *record.Session) cli.Cell {
	text := s.ChangesText()
	sgr := ""
	switch text {
	case "landed":
		sgr = cli.Green
	case "conflict", "no worktree", "not committed":
		sgr = cli.Red
	case "in place", "no changes", "preparing", "–":
		sgr = cli.Dim
	}
	return cli.Cell{Text: text, SGR: sgr}
}
