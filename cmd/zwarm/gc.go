package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// shortLivedHeap is how far a short-lived command's heap may grow before
// the collector runs: a 10,000-session listing stays well under it.
const shortLivedHeap = 64 << 20

// deferGC is for commands that read, print and exit, whose live heap is
// small: collecting garbage before they are done costs more (a sixth of a
// long listing, a quarter of showing a 100 MB turn) than the memory it
// frees. The collector still runs once the heap reaches shortLivedHeap, so
// memory stays bounded however much is read. GOGC or GOMEMLIMIT in the environment win,
// and only a process of our own is tuned, never a test's.
func deferGC(io *streams) {
	if !io.process || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	deferCollection()
}

// deferCollection is deferGC for the process, whatever its streams.
func deferCollection() {
	debug.SetMemoryLimit(shortLivedHeap)
	debug.SetGCPercent(-1)
	// Once the heap reaches the limit and the collector has run, the limit
	// goes: a live heap above it (a listing of 100,000 sessions holds
	// about 120 MB) would have the collector run without pause, half the
	// process's time. From then on each collection sets the next at twice
	// the live heap, or at shortLivedHeap while that is more.
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		debug.SetMemoryLimit(math.MaxInt64)
		paceGC()
	})
}

// paceGC sets the next collection at twice the live heap, or at
// shortLivedHeap while that is more, and does so again after it.
func paceGC() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	var live uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = sample[0].Value.Uint64()
	}
	debug.SetGCPercent(gcPercentFor(live))
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { paceGC() })
}

// gcPercentFor is the GOGC that sets the next collection at twice the
// live heap, or at shortLivedHeap while that is more.
func gcPercentFor(live uint64) int {
	if live == 0 || live >= shortLivedHeap/2 {
		return 100
	}
	return int(shortLivedHeap*100/live) - 100
}

// gcSentinel is an object nothing keeps: its finalizer runs after the
// next collection. It holds a pointer so that it is not one of the tiny
// allocations a finalizer may never run for.
type gcSentinel struct{ _ *byte }

// dashHeap is the heap the dashboard collects harder to stay under. Its
// live heap is a few windows of one turn's events and a thousand rendered
// steps; while it catches up with an agent printing gigabytes, it parses a
// window after another, and without a limit the collector let the garbage
// of those grow the process past 250 MB.
const dashHeap = 96 << 20

// limitDashHeap bounds a long-lived dashboard's memory (GOGC or GOMEMLIMIT
// in the environment win; only a process of our own is tuned).
func limitDashHeap(io *streams) { limitHeap(io, dashHeap) }

// followHeap is the heap logs -f collects harder to stay under: its live
// heap is one stretch of a turn's events (a megabyte of its file) and the
// items still open, but a follower catching up with a flood parses
// stretch after stretch, and on a busy machine the collector fell behind
// the garbage of those.
const followHeap = 48 << 20

// limitHeap bounds a long-lived command's heap to limit, as limitDashHeap.
func limitHeap(io *streams, limit int64) {
	if !io.process || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(limit)
}
