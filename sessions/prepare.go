package sessions

import (
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/state"
)

// Prepare starts, on another processor, what a command would otherwise
// do first when it reads its first record and starts its first git: the
// half a millisecond encoding/json takes to learn the record's types,
// and the os package's probe of pidfds. A command calls it as it starts,
// before parsing its line; it returns at once. What Prepare started is
// waited for by whoever needs it, and a process that needs neither loses
// nothing but the other processor's time.
func Prepare() {
	go func() {
		state.LearnRecords()
		proc.ProbeStarts()
	}()
}
