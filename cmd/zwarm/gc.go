package main

import (
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
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
func deferGC(io *cli.Streams) {
	if !io.Process || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	deferCollection()
}

// deferCollection is deferGC for the process, whatever its streams.
func deferCollection() {
	debug.SetMemoryLimit(shortLivedHeap)
	debug.SetGCPercent(-1)
	pacing.Store(true)
	paceGC()
}

// pacing says paceGC goes on after each collection (a test ends it).
var pacing atomic.Bool

// paceGC has the collection after the next one wait for twice the live
// heap the next one leaves, or shortLivedHeap while that is more: a live
// heap above a fixed limit (a listing of 100,000 sessions holds about
// 120 MB) would have the collector run without pause, half the process's
// time. The limit is what moves, not GOGC: until a collection's finalizer
// has run, a live heap that grew meets the old limit and is collected
// harder, where a GOGC set for a small heap would let the process grow
// many times over.
func paceGC() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		if !pacing.Load() {
			return
		}
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		var live uint64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		debug.SetMemoryLimit(gcLimitFor(live))
		paceGC()
	})
}

// gcLimitFor is the memory limit for a live heap: twice it, or
// shortLivedHeap while that is more.
func gcLimitFor(live uint64) int64 {
	return max(shortLivedHeap, 2*int64(min(live, math.MaxInt64/2)))
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
func limitDashHeap(io *cli.Streams) { limitHeap(io, dashHeap) }

// followHeap is the heap logs -f collects harder to stay under: its live
// heap is one stretch of a turn's events (a megabyte of its file) and the
// items still open, but a follower catching up with a flood parses
// stretch after stretch, and on a busy machine the collector fell behind
// the garbage of those.
const followHeap = 48 << 20

// limitHeap bounds a long-lived command's heap to limit, as limitDashHeap.
func limitHeap(io *cli.Streams, limit int64) {
	if !io.Process || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(limit)
}
