package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
)

type lsOptions struct {
	f      *factory
	status string
	json   bool
	now    func() time.Time
}

func newLsCmd(f *factory) *cobra.Command {
	o := &lsOptions{f: f, now: time.Now}
	c := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List sessions, newest first",
		Args:    exactArgs(0, "no arguments"),
		RunE:    func(c *cobra.Command, _ []string) error { return runLs(c, o) },
	}
	c.Flags().StringVar(&o.status, "status", "", "only sessions with this status (pending, running, completed, failed, killed)")
	c.Flags().BoolVar(&o.json, "json", false, "print a JSON array of sessions")
	return c
}

func runLs(c *cobra.Command, o *lsOptions) error {
	var filter sessions.Status
	if o.status != "" {
		st, err := sessions.ParseStatus(o.status)
		if err != nil {
			return usagef("--status: %v", err)
		}
		filter = st
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	list, err := m.List(c.Context(), sessions.ListOptions{Status: filter})
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.io.out, list)
	}
	writeTable(o.f.io.out, list, o.now())
	return nil
}

// recent is how long a finished session stays marked as news.
const recent = time.Minute

func writeTable(w io.Writer, list []*sessions.Session, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no sessions (start one with: zwarm spawn \"TASK\")")
		return
	}
	counts := map[sessions.Status]int{}
	var total int64
	var spent float64
	unknown := 0
	for _, s := range list {
		counts[s.Status]++
		total += s.Usage.TotalTokens
		if s.CostUSD != nil {
			spent += *s.CostUSD
		} else if !s.Usage.IsZero() {
			unknown++
		}
	}
	head := ""
	for _, st := range sessions.Statuses {
		if counts[st] > 0 {
			head += fmt.Sprintf("%d %s  ", counts[st], st)
		}
	}
	costNote := ""
	if unknown > 0 {
		costNote = fmt.Sprintf(" (+%d sessions of unknown price)", unknown)
	}
	fmt.Fprintf(w, "%s│ %s tokens │ $%.2f%s\n\n", head, tokens(total), spent, costNote)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tADAPTER\tMODEL\tTURN\tTOKENS\tCOST\tAGE\tTASK")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n",
			sessions.ShortID(s.ID), statusCell(s, now), s.Adapter, s.Model, s.Turn,
			tokens(s.Usage.TotalTokens), cost(s.CostUSD), age(now.Sub(s.CreatedAt)), clip(s.Task, 50))
	}
	tw.Flush()
}

// statusCell marks what needs a look: a session that just finished (*), one
// that failed or has follow-ups waiting (!).
func statusCell(s *sessions.Session, now time.Time) string {
	mark := ""
	if s.Status.Finished() && s.EndedAt != nil && now.Sub(*s.EndedAt) < recent {
		mark = "*"
	}
	if s.Status == sessions.StatusFailed || s.PendingInjects > 0 {
		mark += "!"
	}
	return string(s.Status) + mark
}
