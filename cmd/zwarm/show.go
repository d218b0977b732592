package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/sessions/workspace"
)

type showOptions struct {
	f   *factory
	id  string
	out cli.JSONFlags
}

// runF, if set, runs instead of the command, with the options the command
// line gave (tests of the flags).
func newShowCmd(f *factory, runF func(*showOptions) error) *cobra.Command {
	o := &showOptions{f: f}
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its messages and step-by-step trajectory",
		Args:  exactArgs(1, "one session id (a unique prefix is enough)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			if runF != nil {
				return runF(o)
			}
			return runShow(c, o)
		},
		ValidArgsFunction: completeIDs(f, nil),
	}
	o.out.Add(c, "the session with its turns, messages, steps and follow-ups as JSON")
	return c
}

// showJSON is a session with its conversation, trajectory and follow-ups.
type showJSON struct {
	cli.SessionJSON
	Messages []watch.Message     `json:"messages"`
	Steps    []stepJSON          `json:"steps"`
	Inbox    []record.InboxEntry `json:"inbox"`
}

// stepJSON is one step of the trajectory with the turn it belongs to.
type stepJSON struct {
	Turn int `json:"turn"`
	record.Event
}

func trajectory(turns []watch.TurnLog) []stepJSON {
	out := []stepJSON{}
	for _, tl := range turns {
		for _, ev := range record.Steps(tl.Events) {
			out = append(out, stepJSON{Turn: tl.Turn.N, Event: ev})
		}
	}
	return out
}

func runShow(c *cobra.Command, o *showOptions) error {
	code, err := o.out.Check()
	if err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if code != nil {
		// --jq works on the whole document: it is built in memory.
		s, turns, err := m.Transcript(ctx, o.id)
		if err != nil {
			return err
		}
		s = m.Account(ctx, s)
		inbox, err := m.Inbox(s.ID)
		if err != nil {
			return err
		}
		return o.out.Write(o.f.io.Out, showJSON{SessionJSON: cli.ToJSON(s), Messages: watch.Messages(s, turns),
			Steps: trajectory(turns), Inbox: inbox})
	}
	s, err := m.Get(ctx, o.id)
	if err != nil {
		return err
	}
	s = m.Account(ctx, s) // what its ended jobs took, from the cluster's accounting
	inbox, err := m.Inbox(s.ID)
	if err != nil {
		return err
	}
	// Streaming a turn makes garbage at the rate it reads and keeps little:
	// collecting every few megabytes would cost a sixth of a long turn.
	deferGC(o.f.io)
	w := bufio.NewWriterSize(o.f.io.Out, 64<<10)
	defer w.Flush()
	if o.out.On() {
		return writeShowJSON(ctx, w, m, s, inbox)
	}
	return writeShow(ctx, w, o.f.io, m, s, inbox, timeNow())
}

// writeShowJSON prints show --json, reading the turns one event at a time:
// the steps are written as they are folded, so a turn of any size is
// printed without being held.
func writeShowJSON(ctx context.Context, w *bufio.Writer, m *sessions.Manager, s *record.Session, inbox []record.InboxEntry) error {
	head, err := json.MarshalIndent(cli.ToJSON(s), "", "  ")
	if err != nil {
		return err
	}
	w.Write(head[:len(head)-2]) // without its closing "\n}"
	w.WriteString(",\n  \"steps\": [")
	first := true
	// The messages come after the steps: each is encoded as it is read
	// and spooled, never held as a list.
	var messages spool
	defer messages.close()
	nmsg := 0
	var werr error
	message := func(msg watch.Message) {
		b, err := json.MarshalIndent(msg, "    ", "  ")
		if err != nil {
			werr = err
			return
		}
		if nmsg == 0 {
			messages.Write([]byte("[\n    "))
		} else {
			messages.Write([]byte(",\n    "))
		}
		nmsg++
		messages.Write(b)
	}
	for _, t := range m.Turns(s) {
		if t.Prompt != "" {
			message(watch.Message{Turn: t.N, Role: "user", Text: t.Prompt})
		}
		var fold record.StepFolder
		step := func(ev record.Event) {
			b, err := json.MarshalIndent(stepJSON{Turn: t.N, Event: ev}, "    ", "  ")
			if err != nil {
				werr = err
				return
			}
			if !first {
				w.WriteByte(',')
			}
			first = false
			w.WriteString("\n    ")
			w.Write(b)
		}
		err := m.ReadTurn(ctx, s, t.N, func(ev record.Event) {
			if ev.Type == record.EventMessage && ev.Phase != record.PhaseStarted && ev.Phase != record.PhaseUpdated {
				message(watch.Message{Turn: t.N, Role: "assistant", Text: ev.Text})
			}
			fold.Add(ev, step)
		})
		fold.Flush(step)
		if err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
	}
	if !first {
		w.WriteString("\n  ")
	}
	if s.Legacy {
		messages, nmsg = spool{}, 0
		for _, msg := range watch.Messages(s, nil) {
			message(msg)
		}
	}
	if werr != nil {
		return werr
	}
	if inbox == nil {
		inbox = []record.InboxEntry{}
	}
	w.WriteString("]")
	w.WriteString(",\n  \"messages\": ")
	if nmsg == 0 {
		w.WriteString("[]")
	} else {
		messages.Write([]byte("\n  ]"))
		if err := messages.copyTo(w); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(inbox, "  ", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, ",\n  %q: ", "inbox")
	w.Write(b)
	w.WriteString("\n}\n")
	return nil
}

func writeShow(ctx context.Context, b *bufio.Writer, io *cli.Streams, m *sessions.Manager, s *record.Session, inbox []record.InboxEntry, now time.Time) error {
	field := func(name, format string, a ...any) {
		fmt.Fprintf(b, "%-8s %s\n", name, fmt.Sprintf(format, a...))
	}
	field("session", "%s", s.ID)
	field("task", "%s", render.Clip(s.Task, 500))
	status := io.Paint(statusColor(s.Status()), string(s.Status()))
	if x := render.ExitText(s.Status(), s.ExitCode); x != "" && s.Settled() {
		status += " (" + x + ")"
	}
	switch {
	case s.Status() == record.StatusAttached && s.Owner != nil:
		status += fmt.Sprintf(" · a person works in its CLI (zwarm attach, pid %d)", s.Owner.PID)
	case !s.Settled():
		status += " · turn " + fmt.Sprint(s.Turn)
		if s.Stopping() {
			status += " · being killed"
		} else if r := s.Interrupt; r != nil {
			status += fmt.Sprintf(" · turn %d being interrupted", r.Turn)
		}
	}
	field("status", "%s", status)
	if s.LastEventAt != nil && !s.Settled() {
		last := "last event " + render.Ago(now.Sub(*s.LastEventAt))
		if q := render.Quiet(s, now); q != "" {
			last = io.Paint(cli.Yellow, last+": the agent has been quiet")
		}
		field("", "%s", last)
	}
	agent := render.SafeLine(s.Adapter + " " + s.Model)
	if s.ThreadID != "" {
		agent += " · thread " + render.SafeLine(s.ThreadID)
	}
	field("agent", "%s", agent)
	for _, f := range settingFields(s) {
		field(f[0], "%s", f[1])
	}
	field("dir", "%s", render.SafeLine(s.WorkingDir))
	if s.Job != nil {
		field("runner", "%s", runnerField(s))
		if len(s.Job.Resources) > 0 {
			field("asks", "%s", resourcesField(s.Job.Resources))
		}
		for i, a := range s.Accounting {
			field(map[bool]string{true: "jobs"}[i == 0], "%s", accountField(s, a))
		}
	}
	if !s.Legacy {
		for _, f := range render.WorkspaceFields(s, now) {
			field(f.Name, "%s", f.Text)
		}
	}
	field("source", "%s", render.Source(s.Source))
	field("started", "%s", render.When(s.CreatedAt, now))
	if s.EndedAt != nil && s.Settled() {
		field("ended", "%s, ran %s", render.When(*s.EndedAt, now), render.Runtime(s.Runtime(now)))
	} else {
		field("running", "for %s", render.Runtime(s.Runtime(now)))
	}
	for _, a := range s.Attaches {
		field("attached", "%s", attachedField(a, now))
	}
	field("usage", "%s · %s tokens (%s in, %s cached, %s out) · %s", render.Plural(s.Turn, "turn"), render.SessionTokens(s),
		render.Tokens(s.Usage.InputTokens), render.Tokens(s.Usage.CachedInputTokens), render.Tokens(s.Usage.OutputTokens), render.SessionCost(s))
	if render.SessionUnpriced(s) {
		field("price", "%s", io.Paint(cli.Dim, render.PriceFootnote([]string{s.Model})))
	}
	if s.Error != "" {
		field("error", "%s", render.Clip(render.ErrorText(s.Error), 1000))
	}
	if d := render.DenialsText(s); d != "" {
		field("denied", "%s", io.Paint(cli.Yellow, d))
	}
	if s.Legacy {
		field("note", "written by the Python zwarm: read-only")
		for _, msg := range watch.Messages(s, nil) {
			fmt.Fprintf(b, "\n[%s]\n", render.SafeLine(msg.Role))
			for _, l := range render.Lines(msg.Text) {
				b.WriteString(l + "\n")
			}
		}
	}
	for _, t := range m.Turns(s) {
		b.WriteString("\n")
		tw := render.NewTurnWriter(t, func(lines []render.Line) { writeLines(b, lines) })
		if err := m.ReadTurn(ctx, s, t.N, tw.Event); err != nil {
			return err
		}
		tw.End(stderrTail(m.Store(), s.ID, t))
	}
	if len(inbox) > 0 {
		b.WriteString("\nfollow-ups:\n")
		for _, e := range inbox {
			where := string(e.State)
			switch {
			case e.State == record.InboxDelivered:
				where = fmt.Sprintf("delivered as turn %d", e.Turn)
			case e.Reason != "":
				where += ": " + render.Clip(e.Reason, 200)
			}
			fmt.Fprintf(b, "  %s  %s  (%s)\n", render.Ago(now.Sub(e.CreatedAt)), render.Clip(e.Text, 60), where)
		}
	}
	return nil
}

// attachedField says when a person worked in the agent's CLI, and what
// they left: "12:00:01–12:10:22 (10m21s), exit 0 · commit 1a2b3c4d5e6f (3
// files)", or "since 12:00:01" while they do.
func attachedField(a record.AttachSpan, now time.Time) string {
	start := a.Start.Local().Format("2006-01-02 15:04:05")
	if a.End == nil {
		return fmt.Sprintf("since %s (%s)", start, render.Runtime(now.Sub(a.Start)))
	}
	text := fmt.Sprintf("%s – %s (%s)", start, a.End.Local().Format("15:04:05"), render.Runtime(a.End.Sub(a.Start)))
	if a.ExitCode != nil {
		text += fmt.Sprintf(", exit %d", *a.ExitCode)
	}
	if a.Commit != "" {
		text += fmt.Sprintf(" · commit %s (%s)", workspace.Abbrev(a.Commit), render.Plural(len(a.Files), "file"))
	}
	if a.Thread != "" {
		text += " · they started a new conversation, thread " + render.Clip(a.Thread, 80) + ", which the session continues"
	}
	if a.Note != "" {
		text += " · " + render.Clip(a.Note, 300)
	}
	return text
}

// writeLines prints rendered lines as plain text.
func writeLines(w *bufio.Writer, lines []render.Line) {
	for _, l := range lines {
		for range l.Indent {
			w.WriteString("  ")
		}
		w.WriteString(l.Text)
		w.WriteByte('\n')
	}
}

// runnerField says where a session's supervisor runs under another
// runner: its job, and what the runner says of it, once.
func runnerField(s *record.Session) string {
	switch {
	case s.Job.ID == "":
		return render.SafeLine(s.Job.Runner + " (its job is not submitted yet)")
	case s.RunnerState == "":
		return render.SafeLine(s.Job.Runner + " job " + s.Job.ID)
	case strings.Contains(s.RunnerState, s.Job.ID):
		return render.SafeLine(s.RunnerState)
	}
	return render.SafeLine(s.Job.Runner + " job " + s.Job.ID + " · " + s.RunnerState)
}

// accountField is what the cluster's accounting says of one of a
// session's jobs: "job 8 (turns 1, 2) on node7 · 2m10s · 2 CPUs · max RSS
// 67.8 MB · COMPLETED 0:0".
func accountField(s *record.Session, a record.JobAccount) string {
	var turns []string
	for _, t := range s.Turns {
		if t.Job == a.ID {
			turns = append(turns, strconv.Itoa(t.N))
		}
	}
	text := "job " + a.ID
	if len(turns) == 1 {
		text += " (turn " + turns[0] + ")"
	} else if len(turns) > 1 {
		text += " (turns " + strings.Join(turns, ", ") + ")"
	}
	text += fmt.Sprintf(" on %s · %s · %s · max RSS %s · %s %s", a.Node, render.Runtime(time.Duration(a.Elapsed)*time.Second),
		render.Plural(a.CPUs, "CPU"), humanBytes(a.MaxRSS), a.State, a.ExitCode)
	return render.SafeLine(text)
}

// resourcesField is what a session's jobs ask of their cluster, in the
// order of config.ResourceKeys: "partition=gpu time=2h gres=gpu:1".
func resourcesField(res map[string]string) string {
	var parts []string
	for _, k := range config.ResourceKeys {
		if v, ok := res[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return render.SafeLine(strings.Join(parts, " "))
}

// settingFields are the settings a session was started with beyond its
// agent and model, as show prints them: its role and the instructions it
// gave, the reasoning effort, sandbox and cost limit (each only if set).
func settingFields(s *record.Session) [][2]string {
	var out [][2]string
	var role []string
	if s.Role != "" {
		role = append(role, render.SafeLine(s.Role))
	}
	if s.Instructions != "" {
		role = append(role, "instructions: "+render.Clip(s.Instructions, 300))
	}
	if len(role) > 0 {
		out = append(out, [2]string{"role", strings.Join(role, " · ")})
	}
	var set []string
	if s.ReasoningEffort != "" {
		set = append(set, "reasoning effort "+render.SafeLine(s.ReasoningEffort))
	}
	if s.Sandbox != "" {
		set = append(set, "sandbox "+render.SafeLine(s.Sandbox))
	}
	if s.MaxCostUSD > 0 {
		set = append(set, "cost limit "+render.Money(s.MaxCostUSD))
	}
	if len(set) > 0 {
		out = append(out, [2]string{"settings", strings.Join(set, " · ")})
	}
	return out
}
