package main

import (
	"context"
	"io"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/demo"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
)

// orchestratedDemo is the orchestrated task of zwarm demo, started.
type orchestratedDemo struct {
	run *orchestrator.Run
	p   *stepPrinter // nil: nothing is printed
}

// startOrchestratedDemo starts the orchestrated task of zwarm demo with m
// (a demo state dir): the recorded model will delegate to replay workers
// in workDir, wait, check one, look at the workspace and finish. When it
// returns, the run's record is on disk. Its steps are printed to out as
// zwarm orchestrate prints them (nil: nothing is printed, as under the
// dashboard). speed scales the recorded thinking time; the workers'
// pacing follows ZWARM_REPLAY_SPEED (replay.SpeedEnv), which the caller
// sets.
func startOrchestratedDemo(ctx context.Context, s *cli.Streams, m *sessions.Manager, workDir string, speed float64, out io.Writer) (*orchestratedDemo, error) {
	if err := demo.StageWorkers(m.Store().Dir()); err != nil {
		return nil, err
	}
	client, err := demo.NewModel(speed)
	if err != nil {
		return nil, err
	}
	set := orchestrator.Settings{Model: demo.ModelName(), Dir: workDir, Adapter: "replay", KillWorkersOnExit: true,
		Limits: runs.Limits{MaxSteps: 10, MaxWorkers: 4}}
	opt := orchestrator.Options{Sessions: m, StateDir: m.Store().Dir(), Client: client, Settings: set}
	d := &orchestratedDemo{}
	if out != nil {
		d.p = newStepPrinter(s, out, nil, set.Limits.MaxSteps, false)
		opt.OnEvent = d.p.event
	}
	if d.run, err = orchestrator.Start(ctx, opt, demo.Task()); err != nil {
		return nil, err
	}
	return d, nil
}

// execute runs the task to its end (ctx ending interrupts it) and prints
// how it ended. A demo's run is not resumed: its state dir goes with it.
func (d *orchestratedDemo) execute(ctx context.Context) (*runs.Record, error) {
	rec, err := d.run.Execute(ctx)
	if err == nil && d.p != nil {
		d.p.close()
		d.p.outcome(rec, "")
	}
	return rec, err
}

// runOrchestratedDemo runs the orchestrated task of zwarm demo from start
// to end (startOrchestratedDemo says how).
func runOrchestratedDemo(ctx context.Context, s *cli.Streams, m *sessions.Manager, workDir string, speed float64, out io.Writer) (*runs.Record, error) {
	d, err := startOrchestratedDemo(ctx, s, m, workDir, speed, out)
	if err != nil {
		return nil, err
	}
	return d.execute(ctx)
}
