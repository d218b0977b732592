package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gogc is the collector's GOGC now.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestTheNextCollectionIsAtTwiceTheLiveHeapOrTheShortLivedHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{{0, 100}, {8 << 20, 700}, {16 << 20, 300}, {32 << 20, 100}, {120 << 20, 100}} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("live %d MiB: GOGC %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// A short-lived command's collector waits for shortLivedHeap, then paces
// itself by the live heap: a memory limit left in place under a live heap
// above it (a listing of 100,000 sessions) had it run without pause.
func TestAfterTheFirstCollectionTheLimitGoes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	deferCollection()
	if limit := debug.SetMemoryLimit(-1); limit != shortLivedHeap {
		t.Fatalf("memory limit %d before any collection, want %d", limit, shortLivedHeap)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) != math.MaxInt64 {
		if time.Now().After(deadline) {
			t.Fatal("the memory limit is still there 10 s after a collection")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	// The pacing goes on: each collection sets GOGC again.
	debug.SetGCPercent(1)
	for gogc() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("GOGC not set again after a collection")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
