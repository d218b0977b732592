package supervisor

import (
	"fmt"
	"os"
	"strings"

	"github.com/zwarm/zwarm/sessions/config"
)

// jobSetupFailed says why the session cannot start when the job that runs
// this supervisor failed its setup ([runner.slurm] setup, run by the batch
// script before it exec'd the supervisor): the setup's exit code and the
// end of what it printed. "" when there was no setup, or it went well.
func (sv *supervisor) jobSetupFailed() string {
	code := os.Getenv(config.JobSetupExitEnv)
	if code == "" {
		return ""
	}
	tail := strings.TrimSpace(lastLines(sv.st.SetupLog(sv.id), 6))
	msg := fmt.Sprintf("the job's setup ([runner.slurm] setup) failed with exit code %s, so the agent did not run", code)
	if tail != "" {
		msg += ":\n" + tail
	}
	return msg
}
