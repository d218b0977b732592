// Package testenv gives the orchestrator's tests a real world to run in
// (sessions/sessionstest/testworld): a zwarm binary to supervise workers
// with the built-in adapters, and codex played by the scripted fake agent
// through the state dir's config. Only the agent is fake: supervisors,
// turn files and process control are zwarm's own.
package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/adapters/replay"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/testbin"
	"github.com/zwarm/zwarm/sessions/sessionstest/testworld"
)

// Bins are the binaries the tests run.
type Bins struct {
	Zwarm, FakeAgent string
	dir              string
}

// Main is the TestMain of a package whose tests run workers. The test
// binary serves the commands of zwarm that the session manager runs, and
// the fake agent (testbin), so nothing is built. Main sets *bins for the
// tests, runs them, removes the links and exits.
func Main(m *testing.M, bins **Bins) {
	testbin.Serve(map[string]testbin.Program{"zwarm": zwarm, "fakeagent": fakeagent.Main})
	b, err := links()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bins = b
	code := m.Run()
	os.RemoveAll(b.dir)
	os.Exit(code)
}

// links makes the links to the test binary that run zwarm and the fake
// agent, and keeps the machine's person out of every process the tests
// start (testworld.Setenv), once for the binary so that tests may run in
// parallel.
func links() (*Bins, error) {
	dir, err := os.MkdirTemp("", "zwarm-orch-bin")
	if err != nil {
		return nil, err
	}
	b := &Bins{dir: dir}
	if b.Zwarm, err = testbin.Link(dir, "zwarm"); err == nil {
		b.FakeAgent, err = testbin.Link(dir, "fakeagent")
	}
	if err == nil {
		err = testworld.Setenv(dir)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The codex binary is the one config.toml names, in each world.
	os.Unsetenv("ZWARM_CODEX_BIN")
	return b, nil
}

// HomeMain is the TestMain of a package whose tests start shells but no
// workers: their processes get the tests' own environment
// (testworld.Setenv).
func HomeMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zwarm-shell-home")
	if err == nil {
		err = testworld.Setenv(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// zwarm is the zwarm the session manager runs: `zwarm __supervise` and the
// replay adapter's player, `zwarm __replay`.
func zwarm(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "__supervise":
			return testworld.Supervisor{Adapters: adapters.Builtin()}.Main(args[1:])
		case adapters.ReplayCommand:
			return play(args[1:])
		}
	}
	fmt.Fprintf(os.Stderr, "zwarm (a test binary): no command %q here\n", args)
	return 2
}

// play is `zwarm __replay [--speed N] -- RECORDING THREAD PROMPT`.
func play(args []string) int {
	fs := flag.NewFlagSet(adapters.ReplayCommand, flag.ContinueOnError)
	speed := fs.Float64("speed", 1, "pacing factor")
	if err := fs.Parse(args); err != nil || fs.NArg() != 3 {
		fmt.Fprintf(os.Stderr, "zwarm: %s takes a recording, a thread id and a prompt: %q\n", adapters.ReplayCommand, args)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := replay.Play(ctx, os.Stdout, fs.Arg(0), *speed, fs.Arg(1), fs.Arg(2))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zwarm:", err)
		return 1
	}
	return code
}

// World is a testworld whose codex is the fake agent.
type World struct {
	*testworld.World
	Bins  *Bins
	steps map[string][]fakeagent.Step
}

// New makes a world whose codex workers run the fake agent, with config
// written as extraConfig adds to it.
func New(t testing.TB, b *Bins, extraConfig string) *World {
	t.Helper()
	w := &World{World: testworld.New(t, testworld.Options{Adapters: adapters.Builtin(), SupervisorArgv: []string{b.Zwarm, "__supervise"}}),
		Bins: b, steps: map[string][]fakeagent.Step{}}
	wrapper := filepath.Join(w.Dir, "codex")
	body := fmt.Sprintf("#!/bin/sh\nFAKEAGENT_SCRIPT=%s exec %s \"$@\"\n", shellQuote(w.ScriptFile), shellQuote(b.FakeAgent))
	if err := os.WriteFile(wrapper, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	w.WriteConfig(fmt.Sprintf("kill_grace = \"1s\"\n%s\n[adapters.codex]\nbinary = %q\nmodel = \"gpt-5.1-codex-mini\"\n", extraConfig, wrapper))
	return w
}

// Git runs git in the working dir (testworld.World.Git).
func (w *World) Git(args ...string) string {
	w.T.Helper()
	return w.World.Git(w.Work, args...)
}

// Script sets what the fake agent does for a prompt ("" is the default:
// complete at once saying "done"), keeping what earlier calls set for
// other prompts.
func (w *World) Script(byPrompt map[string][]fakeagent.Step) {
	w.T.Helper()
	for k, v := range byPrompt {
		w.steps[k] = v
	}
	sc := fakeagent.Script{Default: w.steps[""], ByPrompt: map[string][]fakeagent.Step{}}
	if sc.Default == nil {
		sc.Default = fakeagent.Completes("done", 100)
	}
	for k, v := range w.steps {
		if k != "" {
			sc.ByPrompt[k] = v
		}
	}
	w.SetScript(sc)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
