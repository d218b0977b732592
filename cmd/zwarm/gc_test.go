package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestTheLimitIsTwiceTheLiveHeapOrTheShortLivedHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{{0, shortLivedHeap}, {8 << 20, shortLivedHeap}, {32 << 20, shortLivedHeap}, {40 << 20, 80 << 20}, {120 << 20, 240 << 20}, {math.MaxUint64, math.MaxInt64 - 1}} {
		if got := gcLimitFor(c.live); got != c.want {
			t.Errorf("live %d MiB: limit %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// A short-lived command's collector waits for shortLivedHeap, then for
// twice what is live: a limit left at shortLivedHeap under a live heap
// above it (a listing of 100,000 sessions) had it run without pause.
func TestTheLimitFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer pacing.Store(false)
	deferCollection()
	if limit := debug.SetMemoryLimit(-1); limit != shortLivedHeap {
		t.Fatalf("memory limit %d before any collection, want %d", limit, shortLivedHeap)
	}
	// 96 MiB kept live, in pieces the collector must scan.
	live := make([][]byte, 96)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < 2*96<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the memory limit is %d MiB 10 s after collections of a 96 MiB live heap", debug.SetMemoryLimit(-1)>>20)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(live)
	// And back down once it is garbage.
	live = nil
	for debug.SetMemoryLimit(-1) != shortLivedHeap {
		if time.Now().After(deadline) {
			t.Fatalf("the memory limit is still %d MiB 10 s after the live heap went", debug.SetMemoryLimit(-1)>>20)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
