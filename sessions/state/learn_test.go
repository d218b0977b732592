package state

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
)

// Records decoded while LearnRecords learns their types (as a command reads
// its first one while the learning still runs) are decoded whole.
func TestRecordsDecodedWhileTheirTypesAreLearnedAreWhole(t *testing.T) {
	const id = "0a1b2c3d-0000-4000-8000-000000000010"
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	cost := 0.25
	want := &record.Session{Version: record.SchemaVersion, ID: id, Task: "fix it", Adapter: "codex", CreatedAt: at, UpdatedAt: at,
		Usage: record.Usage{InputTokens: 10, OutputTokens: 2}, CostUSD: &cost,
		Workspace: &record.Workspace{Branch: "zwarm/" + id, BaseCommit: "4f79f9107a19e675ee6e4a3d6af964bed3cdad80", Head: "ca3e383df008f27f918554a09c82e4f9a1eb4dcb", Committed: 1},
		Turns:     []record.Turn{{N: 1, Usage: record.Usage{InputTokens: 10, OutputTokens: 2}, StartedAt: at}}}
	statusfield.Set(want, record.StatusCompleted)
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	go LearnRecords()
	var wg sync.WaitGroup
	got := make([]*record.Session, 8)
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = DecodeSession("meta.json", id, data) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("decode %d: %v", i, errs[i])
		}
		again, err := json.Marshal(got[i])
		if err != nil || string(again) != string(data) {
			t.Fatalf("decode %d is not the record written (%v):\n got %s\nwant %s", i, err, again, data)
		}
	}
}
