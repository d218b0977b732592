package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/workspace"
)

type doctorOptions struct {
	f *factory
}

// runF, if set, runs instead of the command, with the options the command
// line gave (tests of the flags).
func newDoctorCmd(f *factory, runF func(*doctorOptions) error) *cobra.Command {
	o := &doctorOptions{f: f}
	return &cobra.Command{
		Use:         "doctor",
		Annotations: map[string]string{reportsConfigAnnotation: "true"},
		Short:       "Check this machine: state dir, config, agent binaries, process containment",
		Long: `Check what zwarm needs: which state dir it uses, whether its config is valid,
which agent binaries it finds (and their versions), and how it contains the
processes of a session (a cgroup of its own where the machine allows it,
else a marker variable), which session records cannot be read, which git it
finds, and, in a repository, the worktrees whose session is gone and the
disk they take (zwarm clean --worktrees removes them), where an agent's
sandbox lets workers write the repository or the state dir, and whether a
landing's verify can run confined. A line marked
✗ is a problem (exit 1); one marked ! is worth knowing and changes nothing
(exit 0 when there is no ✗).`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(o)
			}
			return runDoctor(c.Context(), o)
		},
	}
}

// check is one line of the report.
type check struct {
	name, result string
	ok           bool
	note         bool // worth knowing, not a problem
}

func runDoctor(ctx context.Context, o *doctorOptions) error {
	o.f.diagnoses = true
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	var checks []check
	add := func(c check) { checks = append(checks, c) }

	sd := o.f.state()
	where := map[string]string{"--state-dir": "from --state-dir", StateDirEnv: "from $" + StateDirEnv,
		"found": "the nearest above the current directory", "default": "none found: zwarm init makes one here"}[sd.from]
	dir := m.Store().Dir()
	if fi, err := os.Stat(dir); err != nil {
		add(check{name: "state dir", result: fmt.Sprintf("%s (%s; not created yet)", dir, where), ok: true, note: true})
	} else if !fi.IsDir() {
		add(check{name: "state dir", result: dir + " is not a directory"})
	} else if err := writable(dir); err != nil {
		add(check{name: "state dir", result: fmt.Sprintf("%s (%s) is not writable: %v", dir, where, err)})
	} else {
		add(check{name: "state dir", result: fmt.Sprintf("%s (%s)", dir, where), ok: true})
	}

	cfg, err := m.Config()
	defaultAdapter := "codex"
	var untrusted *config.UntrustedError
	if errors.As(err, &untrusted) {
		add(check{name: "config", result: safeLines(err.Error())})
	} else if err != nil {
		add(check{name: "config", result: render.SafeLine(err.Error())})
	} else if err := cfg.CheckAdapters(dir, m.Adapters().Names()); err != nil {
		add(check{name: "config", result: render.SafeLine(err.Error())})
	} else {
		if cfg.DefaultAdapter != "" {
			defaultAdapter = cfg.DefaultAdapter
		}
		add(check{name: "config", result: fmt.Sprintf("valid (default adapter %s, kill grace %s)", defaultAdapter, cfg.Grace()), ok: true})
	}

	if how, why := proc.Containment(); why != nil {
		add(check{name: "containment", result: fmt.Sprintf("%s only: %v", how, why), ok: true, note: true})
	} else {
		add(check{name: "containment", result: how, ok: true})
	}
	if proc.CanConfine() {
		add(check{name: "verify", result: "land --verify runs confined (Landlock): it writes only its checkout, a temp dir of its own and [worktrees] verify_writable", ok: true})
	} else {
		add(check{name: "verify", result: "land --verify runs with your rights: " + proc.ErrNoLandlock.Error(), ok: true, note: true})
	}

	deadRunChecks(ctx, dir, add)
	orphanChecks(m, add)
	recordChecks(ctx, m, add)
	debrisChecks(m, add)
	lockChecks(m, add)
	if cfg != nil {
		runnerChecks(ctx, m, cfg.Runner.Kind, add)
		if r := orchestrator.FromConfig(cfg).Runner; r != cfg.Runner.Kind {
			runnerChecks(ctx, m, r, add)
		}
	}

	if untrusted != nil {
		// What reads the settings (worktrees, agents) cannot be checked:
		// the config line says why, once.
		add(check{name: "agents", result: "not checked: the state dir's settings are not read until it is trusted", ok: true, note: true})
		return o.report(checks)
	}
	wd, _ := os.Getwd()
	worktreeChecks(ctx, m, wd, add)
	if cfg != nil {
		worktreesDirCheck(cfg, add)
	}
	for _, name := range m.Adapters().Names() {
		ad, err := m.Adapters().Lookup(name)
		if err != nil {
			continue
		}
		var acfg config.AdapterConfig
		if cfg != nil {
			acfg = cfg.Adapter(name)
		}
		req := agent.TurnRequest{StateDir: dir, SessionID: "doctor", Prompt: "doctor", WorkingDir: wd, Config: acfg}
		cmd, err := ad.Command(req)
		switch {
		case err != nil && name == defaultAdapter:
			add(check{name: name, result: render.SafeLine(err.Error())})
		case err != nil:
			add(check{name: name, result: render.SafeLine(err.Error()), ok: true, note: true})
		default:
			add(check{name: name, result: cmd.Path + " (" + agentVersion(ctx, cmd.Path) + ")", ok: true})
			reachCheck(name, ad, req, dir, wd, add)
		}
	}

	return o.report(checks)
}

// lockChecks says how the state dir's locks are made: every process that
// shares it, on every machine, must make them the same way.
func lockChecks(m *sessions.Manager, add func(check)) {
	s, err := store.SchemeOf(m.Store().Dir(), "")
	switch {
	case err != nil:
		add(check{name: "locks", result: render.SafeLine(err.Error())})
	case s == store.SchemeLease:
		add(check{name: "locks", result: "leases (lock files renewed while held), for a shared file system", ok: true})
	default:
		add(check{name: "locks", result: "flock(2); if other machines share this state dir: [state] locks = \"lease\"", ok: true})
	}
}

// runnerChecks checks the runner new sessions run under, unless it is
// this machine.
func runnerChecks(ctx context.Context, m *sessions.Manager, kind string, add func(check)) {
	if kind == "" || kind == record.LocalRunner {
		return
	}
	problems, err := m.CheckRunner(ctx, kind)
	switch {
	case err != nil:
		add(check{name: "runner", result: render.SafeLine(err.Error())})
	case len(problems) > 0:
		add(check{name: "runner", result: kind + ": " + render.SafeLine(strings.Join(problems, "; "))})
	default:
		add(check{name: "runner", result: kind + ": the controller answers", ok: true})
	}
}

// report prints the checks, one a line, and fails if any is not ok.
func (o *doctorOptions) report(checks []check) error {
	io := o.f.io
	well := true
	var b strings.Builder
	for _, c := range checks {
		mark, sgr := "✓", cli.Green
		switch {
		case !c.ok:
			mark, sgr, well = "✗", cli.Red, false
		case c.note:
			mark, sgr = "!", cli.Yellow
		}
		fmt.Fprintf(&b, "%s %-12s %s\n", io.Paint(sgr, mark), c.name, c.result)
	}
	io.Out.Write([]byte(b.String()))
	if !well {
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return nil
}

// safeLines makes a message of several lines safe for the terminal, its
// lines after the first indented under the first's text.
func safeLines(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = render.SafeLine(l)
	}
	return strings.Join(lines, "\n"+strings.Repeat(" ", 15))
}

func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".doctor*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// agentVersion asks an agent binary for its version, briefly.
func agentVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// The version is on stdout; stderr is read only when stdout is empty:
	// codex warns there first in some setups (helper binaries it could
	// not create under /tmp).
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if strings.TrimSpace(out.String()) == "" {
		out = errOut
	}
	if err != nil && out.Len() == 0 {
		return "version unknown: " + render.Clip(err.Error(), 80)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	if first == "" {
		return "version unknown"
	}
	return render.Clip(first, 80)
}

// worktreeChecks report git, and the worktrees of the repository here
// whose session is gone.
func worktreeChecks(ctx context.Context, m *sessions.Manager, wd string, add func(check)) {
	v, err := workspace.GitVersion(ctx)
	switch {
	case errors.Is(err, workspace.ErrNoGit):
		if top := gitTopAbove(wd); top != "" {
			// spawn never falls back to working in place.
			add(check{name: "git", result: fmt.Sprintf("not found, and %s is a git repository: spawn refuses here (install git, or spawn --in-place)", render.SafeLine(top))})
		} else {
			add(check{name: "git", result: "not found: workers outside a repository work in place; in one, spawn refuses (install git for a worktree per worker)", ok: true, note: true})
		}
		return
	case err != nil && v == "":
		add(check{name: "git", result: render.SafeLine(err.Error())})
		return
	case err != nil:
		add(check{name: "git", result: render.SafeLine(err.Error())})
	default:
		add(check{name: "git", result: "git " + v, ok: true})
	}
	left, err := m.Leftovers(ctx, wd)
	if err != nil {
		add(check{name: "worktrees", result: render.SafeLine(err.Error())})
		return
	}
	if len(left) == 0 {
		add(check{name: "worktrees", result: "none left behind by a session that is gone", ok: true})
		return
	}
	var total int64
	for _, l := range left {
		total += l.Bytes
	}
	verb := "take"
	if len(left) == 1 {
		verb = "takes"
	}
	add(check{name: "worktrees", ok: true, note: true, result: fmt.Sprintf("%s whose session is gone %s %s (zwarm clean --worktrees removes them):",
		render.Plural(len(left), "worktree"), verb, humanBytes(total))})
	for _, l := range left {
		add(check{name: "", ok: true, note: true, result: fmt.Sprintf("  %s  %s", render.SafeLine(l.Path), humanBytes(l.Bytes))})
	}
}

// gitTopAbove is the nearest directory from dir up that holds a .git,
// "" if none: where git would find a repository, found without git.
func gitTopAbove(dir string) string {
	for d := dir; d != ""; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
	return ""
}

// worktreesDirCheck says whether workers' worktrees can be made where
// the config puts them: the directory, or the nearest one above it that
// exists, must be writable (a HOME that does not exist, or a read-only
// one, failed every spawn in a repository after recording it).
func worktreesDirCheck(cfg *config.Config, add func(check)) {
	root, err := cfg.Worktrees.Root()
	if err != nil {
		add(check{name: "worktree dir", result: render.SafeLine(err.Error())})
		return
	}
	d := root
	for {
		fi, err := os.Stat(d)
		if err == nil && !fi.IsDir() {
			add(check{name: "worktree dir", result: fmt.Sprintf("%s cannot be made: %s is not a directory ([worktrees] dir chooses another)", render.SafeLine(root), render.SafeLine(d))})
			return
		}
		if err == nil {
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if err := writable(d); err != nil {
		add(check{name: "worktree dir", result: fmt.Sprintf("%s cannot be made: %s is not writable (%v; [worktrees] dir chooses another)", render.SafeLine(root), render.SafeLine(d), err)})
		return
	}
	add(check{name: "worktree dir", result: render.SafeLine(root), ok: true})
}

// deadRunChecks stops what the shell commands of runs whose process died
// left running (nothing else can still want it) and says so.
func deadRunChecks(ctx context.Context, dir string, add func(check)) {
	swept, err := orchestrator.SweepDeadRuns(ctx, dir)
	for _, s := range swept {
		add(check{name: "dead run", result: fmt.Sprintf("run %s died and left processes running; stopped them (pid %s)", record.ShortID(s.ID), joinPIDs(s.PIDs)), ok: true, note: true})
	}
	if err != nil {
		add(check{name: "dead run", result: render.SafeLine(err.Error())})
	}
}

// recordChecks names each session record that cannot be read, as ls
// does (and, as ls, doctor then exits 1): such a session is in no list.
func recordChecks(ctx context.Context, m *sessions.Manager, add func(check)) {
	_, err := m.List(ctx, listing.Options{})
	var le *listing.Error
	switch {
	case errors.As(err, &le):
		for _, r := range le.Records {
			add(check{name: "records", result: render.SafeLine(r.Error())})
		}
	case err != nil:
		add(check{name: "records", result: render.SafeLine(err.Error())})
	}
}

// debrisChecks says what spawns and removals killed midway left in the
// sessions dir.
func debrisChecks(m *sessions.Manager, add func(check)) {
	list, err := m.Store().Files().Debris(time.Now())
	if err != nil {
		add(check{name: "debris", result: render.SafeLine(err.Error())})
	} else if len(list) > 0 {
		add(check{name: "debris", result: fmt.Sprintf("%d directories in %s left by a spawn or an rm killed midway (zwarm clean removes them)", len(list), render.SafeLine(filepath.Dir(list[0]))), ok: true, note: true})
	}
}

// orphanChecks lists the processes of sessions whose directory or record
// is gone: nothing but kill --orphans reaches them.
func orphanChecks(m *sessions.Manager, add func(check)) {
	list, err := m.Orphans()
	if err != nil {
		add(check{name: "orphans", result: render.SafeLine(err.Error())})
	}
	for _, o := range list {
		if len(o.PIDs) == 0 {
			add(check{name: "orphans", result: fmt.Sprintf("%s is gone and left an empty cgroup (zwarm kill --orphans removes it)", o.What()), ok: true, note: true})
			continue
		}
		add(check{name: "orphans", result: fmt.Sprintf("%s is gone but its processes run on (pid %s); zwarm kill --orphans stops them", o.What(), joinPIDs(o.PIDs))})
	}
}
