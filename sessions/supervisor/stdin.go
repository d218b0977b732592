package supervisor

import (
	"os"
	"sync"
)

// stdinFeeder writes to an agent's stdin from a goroutine of its own, so the
// supervisor never blocks on an agent that is not reading (one busy printing
// megabytes before it reads a 100 kB prompt would otherwise wedge the
// supervisor: nothing would drain its stdout). Writes go out in the order
// they were queued; the pipe is closed when asked, after what was queued,
// or at once by stop.
type stdinFeeder struct {
	f    *os.File
	mu   sync.Mutex
	q    [][]byte
	eof  bool          // close once the queue is written
	quit bool          // stop was called
	wake chan struct{} // one pending wake-up
	done chan struct{} // closed when the goroutine has ended
	err  error         // the write error that ended it, if any
}

func newStdinFeeder(f *os.File) *stdinFeeder {
	s := &stdinFeeder{f: f, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.loop()
	return s
}

// feed queues b. It never blocks.
func (s *stdinFeeder) feed(b []byte) {
	s.mu.Lock()
	s.q = append(s.q, b)
	s.mu.Unlock()
	s.poke()
}

// closeAfterQueued closes stdin once everything queued is written: the agent
// sees end of input and finishes.
func (s *stdinFeeder) closeAfterQueued() {
	s.mu.Lock()
	s.eof = true
	s.mu.Unlock()
	s.poke()
}

// stop closes stdin now, which ends a write blocked on a full pipe, and
// waits for the goroutine. The agent has exited or is being killed.
func (s *stdinFeeder) stop() error {
	s.mu.Lock()
	s.quit = true
	s.mu.Unlock()
	s.f.Close()
	s.poke()
	<-s.done
	return s.err
}

func (s *stdinFeeder) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *stdinFeeder) loop() {
	defer close(s.done)
	for range s.wake {
		for {
			s.mu.Lock()
			if s.quit {
				s.mu.Unlock()
				return
			}
			if len(s.q) == 0 {
				eof := s.eof
				s.mu.Unlock()
				if eof {
					s.f.Close()
					return
				}
				break
			}
			b := s.q[0]
			s.q = s.q[1:]
			s.mu.Unlock()
			if _, err := s.f.Write(b); err != nil {
				// The agent closed its stdin or exited (EPIPE), or stop
				// closed the pipe: nothing more can be delivered.
				s.err = err
				return
			}
		}
	}
}
