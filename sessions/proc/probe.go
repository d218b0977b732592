package proc

import (
	"os"
	"sync"
)

// ProbeStarts has the os package learn, once, whether this kernel's
// pidfds work, as it does before it starts its first process: it opens
// one of its own process, waits on it, signals it, and starts a child
// that exits at once. os.FindProcess makes the same probe. Called ahead
// (Prepare), the first git a command starts does not pay for it.
var ProbeStarts = sync.OnceFunc(func() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
})
