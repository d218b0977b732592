package main

import (
	"os"
	"runtime/debug"
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
	debug.SetMemoryLimit(shortLivedHeap)
	debug.SetGCPercent(-1)
}
