package runs_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

// A run killed in the middle of a step (its model call made and paid for,
// its tools running) wrote that step's usage to its events only: read
// dead, it counts it, as a resume does. It read a step and its tokens
// short. A live run's record is left as it is.
func TestADeadRunCountsTheStepItDiedIn(t *testing.T) {
	state := t.TempDir()
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	dead, err := proc.RefOf(owner.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	owner.Process.Kill()
	owner.Wait()
	alive, err := proc.RefOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cost := func(v float64) *float64 { return &v }
	totals := func(step int) *runs.Totals {
		n := int64(110 * step)
		return &runs.Totals{Usage: record.Usage{InputTokens: n - int64(10*step), OutputTokens: int64(10 * step), TotalTokens: n}, CostUSD: cost(0.0002 * float64(step)),
			WorkerUsage: record.Usage{TotalTokens: 1000}, WorkerCostUSD: cost(0.01)}
	}
	for _, c := range []struct {
		owner *proc.Ref
		steps int
	}{{dead, 3}, {alive, 2}} {
		id := uuid.NewString()
		t2 := totals(2)
		writeRecord(t, state, runs.Record{Version: 1, ID: id, Task: "t", Status: runs.StatusRunning, Owner: c.owner, Steps: 2,
			Usage: t2.Usage, CostUSD: t2.CostUSD, WorkerUsage: t2.WorkerUsage, WorkerCostUSD: t2.WorkerCostUSD,
			Limits: runs.Limits{MaxSteps: 50}, CreatedAt: time.Now().UTC()})
		f, err := os.Create(filepath.Join(runs.RunDir(state, id), runs.EventsFile))
		if err != nil {
			t.Fatal(err)
		}
		for step := 1; step <= 3; step++ {
			for _, ev := range []runs.Event{{Type: runs.EventModelCall, Step: step}, {Type: runs.EventUsage, Step: step, Totals: totals(step)}} {
				b, _ := json.Marshal(ev)
				f.Write(append(b, '\n'))
			}
		}
		f.WriteString(`{"type":"tool_call","step":3,"tool":"wait"}` + "\n")
		f.Close()
		rec, err := runs.LoadRecord(state, id)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := runs.ListRuns(state)
		var listed *runs.Record
		for _, r := range list {
			if r.ID == id {
				listed = r
			}
		}
		for _, r := range []*runs.Record{rec, listed} {
			want := totals(c.steps)
			if r.Steps != c.steps || r.Usage != want.Usage || *r.CostUSD != *want.CostUSD || r.TotalTokens() != want.Usage.TotalTokens+1000 {
				t.Errorf("owner alive %v: %d steps, %+v, $%v", c.owner == alive, r.Steps, r.Usage, *r.CostUSD)
			}
		}
	}
}
