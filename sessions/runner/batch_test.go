package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// arrays is a Batcher that numbers jobs as an engine would and remembers
// each call made to it. It stands for an engine only here, where what is
// tested is the gathering of submissions; the Slurm runner's job arrays
// are tested on a real cluster.
type arrays struct {
	mu     sync.Mutex
	next   int
	starts []string   // sessions started alone
	calls  [][]string // sessions of each batch submitted
}

func (a *arrays) Start(ctx context.Context, spec Spec) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	a.starts = append(a.starts, spec.SessionID)
	return fmt.Sprint(a.next), nil
}

func (a *arrays) StartBatch(ctx context.Context, batch string, specs []Spec) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	var sessions, ids []string
	for i, s := range specs {
		sessions = append(sessions, s.SessionID)
		ids = append(ids, fmt.Sprintf("%d_%d", a.next, i))
	}
	a.calls = append(a.calls, sessions)
	return ids, nil
}

func (a *arrays) FindBatch(context.Context, string, int) ([]string, error) { return nil, nil }
func (a *arrays) Jobs(context.Context, []string) (map[string]JobState, error) {
	return nil, nil
}
func (a *arrays) Stop(context.Context, JobRef, bool) error       { return nil }
func (a *arrays) CheckResources(map[string]string) error         { return nil }
func (a *arrays) Find(context.Context, string) ([]string, error) { return nil, nil }
func (a *arrays) Cluster(context.Context) string                 { return "c" }
func (a *arrays) Check(context.Context, string) []string         { return nil }

// submitAll submits one spec per slot, each from its own goroutine, as
// SpawnAll does; leave names the slots that let go instead, res each
// spec's resources by index.
func submitAll(t *testing.T, r Runner, n int, leave map[int]bool, res map[int]map[string]string) []Submitted {
	t.Helper()
	out := make([]Submitted, n)
	var wg sync.WaitGroup
	for i, slot := range NewBatch(n) {
		ctx := WithSlot(context.Background(), slot)
		wg.Go(func() {
			defer Leave(ctx)
			if leave[i] {
				return
			}
			got, err := Submit(ctx, r, Spec{SessionID: fmt.Sprint("s", i), Resources: res[i]}, "", func(error) {})
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
			}
			out[i] = got
		})
	}
	wg.Wait()
	return out
}

func TestABatchIsOneSubmission(t *testing.T) {
	r := &arrays{}
	got := submitAll(t, r, 5, map[int]bool{3: true}, nil)
	if len(r.calls) != 1 || len(r.calls[0]) != 4 || len(r.starts) != 0 {
		t.Fatalf("calls %v, lone starts %v; want one batch of the 4 that submitted", r.calls, r.starts)
	}
	for i, g := range got {
		if i == 3 {
			continue
		}
		at := slices.Index(r.calls[0], fmt.Sprint("s", i))
		if g.ID != fmt.Sprintf("1_%d", at) || g.Batch == "" || g.Batch != got[0].Batch || g.Cluster != "c" {
			t.Errorf("submission %d: %+v; want task %d of the batch", i, g, at)
		}
	}
}

// Workers asking different resources cannot share an array: one call per
// ask. One alone is a job of its own.
func TestABatchSplitsByWhatItAsks(t *testing.T) {
	r := &arrays{}
	gpu := map[string]string{"gres": "gpu:1"}
	got := submitAll(t, r, 5, nil, map[int]map[string]string{1: gpu, 3: gpu, 4: {"time": "1h"}})
	if len(r.calls) != 2 || !slices.Equal(r.starts, []string{"s4"}) {
		t.Fatalf("calls %v, lone starts %v; want two batches and s4 alone", r.calls, r.starts)
	}
	if got[4].Batch != "" || got[1].Batch == got[0].Batch || got[1].Batch != got[3].Batch || got[0].Batch != got[2].Batch {
		t.Fatalf("submitted %+v", got)
	}
}

// A slot that never submits nor lets go holds the others no longer than
// gatherLimit; it then goes alone.
func TestABatchDoesNotWaitForeverForOne(t *testing.T) {
	old := gatherLimit
	gatherLimit = 200 * time.Millisecond
	defer func() { gatherLimit = old }()
	r := &arrays{}
	slots := NewBatch(3)
	var wg sync.WaitGroup
	for i := range 2 {
		ctx := WithSlot(context.Background(), slots[i])
		wg.Go(func() { Submit(ctx, r, Spec{SessionID: fmt.Sprint("s", i)}, "", func(error) {}) })
	}
	wg.Wait()
	late, err := Submit(WithSlot(context.Background(), slots[2]), r, Spec{SessionID: "s2"}, "", func(error) {})
	if err != nil || len(r.calls) != 1 || len(r.calls[0]) != 2 || late.Batch != "" || !slices.Equal(r.starts, []string{"s2"}) {
		t.Fatalf("calls %v, lone starts %v, the late one %+v, %v", r.calls, r.starts, late, err)
	}
}
