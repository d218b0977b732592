package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// runKillGrace is how long a run has to end itself after SIGTERM (its
// commands, its workers if it stops them) before it is killed.
const runKillGrace = 30 * time.Second

func newRunsKillCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "kill ID",
		Short: "Stop a run and every process its shell commands left",
		Long: `kill stops an orchestrated run: its process, if it still runs (SIGTERM, which
interrupts it as Ctrl+C does; SIGKILL after 30s), then every process its
exec_command commands left running, also when the run's process died
without ending them. Its workers are sessions of their own: zwarm kill
stops them. zwarm orchestrate --resume ID continues the run.`,
		Args: exactArgs(1, "a run id (or unique prefix)"),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := f.store()
			if err != nil {
				return err
			}
			if _, err := runs.ResolveRun(st.Dir(), args[0]); err != nil {
				return cli.Usagef("%v", err)
			}
			res, err := orchestrator.KillRun(c.Context(), st.Dir(), args[0], runKillGrace)
			if err != nil {
				return err
			}
			var what []string
			if res.Owner != nil {
				what = append(what, fmt.Sprintf("stopped its process (pid %d)", res.Owner.PID))
			}
			if len(res.Swept) > 0 {
				what = append(what, "killed what its commands left (pid "+joinPIDs(res.Swept)+")")
			}
			if len(what) == 0 {
				what = append(what, "nothing of it was running")
			}
			fmt.Fprintf(f.io.Out, "run %s: %s\n", record.ShortID(res.ID), strings.Join(what, "; "))
			return nil
		},
	}
}

func joinPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, " ")
}
