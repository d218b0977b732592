package render_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/state"
)

var bigTurn struct {
	once sync.Once
	dir  string
	err  error
}

// BenchmarkShowSession100MB is the work of `zwarm show` on a session of
// two turns, 100 MB of codex events in all: a real session's
// (sessions/internal/mkstate -recorded), each turn grown to 50 MB by
// repeating its items; the session cmd/zwarm/testdata/processes.sh times
// beside jq. Read, parse, fold and render every step, with memory bounded
// whatever the turns' size.
func BenchmarkShowSession100MB(b *testing.B) {
	bigTurn.once.Do(func() {
		bigTurn.dir, bigTurn.err = os.MkdirTemp("", "zwarm-bench-show")
		if bigTurn.err == nil {
			out, err := exec.Command("go", "run", "../internal/mkstate", "-dir", bigTurn.dir, "-n", "1", "-turns", "2", "-turn-mb", "50", "-recorded").CombinedOutput()
			if err != nil {
				bigTurn.err = fmt.Errorf("mkstate: %v\n%s", err, out)
			}
		}
	})
	if bigTurn.err != nil {
		b.Fatal(bigTurn.err)
	}
	st, _ := state.NewStore(bigTurn.dir)
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	ctx := context.Background()
	s, err := m.Get(ctx, "3f2a0000")
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for n := range s.Turns {
		fi, err := os.Stat(st.TurnPath(s.ID, n+1))
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		w := bufio.NewWriter(io.Discard)
		steps := 0
		for n, turn := range s.Turns {
			tw := render.NewTurnWriter(turn, func(lines []render.Line) {
				steps++
				for _, l := range lines { // as zwarm show writes them
					for range l.Indent {
						w.WriteString("  ")
					}
					w.WriteString(l.Text)
					w.WriteByte('\n')
				}
			})
			if err := m.ReadTurn(ctx, s, n+1, tw.Event); err != nil {
				b.Fatal(err)
			}
			tw.End("")
		}
		w.Flush()
		if steps < 100000 {
			b.Fatalf("only %d steps rendered", steps)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigTurn.dir != "" {
		os.RemoveAll(bigTurn.dir)
	}
	os.Exit(code)
}
