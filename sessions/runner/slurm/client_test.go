package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A command stopped at its time limit is reported with what it said last:
// sbatch retrying a controller that takes no more jobs says why it took so
// long, which the bare deadline did not.
func TestACommandStoppedAtItsLimitSaysWhatItSaid(t *testing.T) {
	c := New(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.run(ctx, "", "sh", "-c", "echo 'sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying' >&2; exec sleep 5")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "it had said: sbatch: error: Slurm temporarily unable to accept job") {
		t.Fatalf("%v", err)
	}
}
