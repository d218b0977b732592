package watch

import (
	"sync"

	"github.com/zwarm/zwarm/sessions/record"
)

// A long stretch of a turn (a finished turn shown whole, a reader catching
// up) is split and parsed in a goroutine of its own while the caller's fn
// folds and renders the events already parsed: on two cores or more that
// takes little more than the slower of the two halves.
const (
	pipelineMin = 4 << 20 // bytes left to read that make it worth a goroutine
	batchEvents = 256     // events handed over at a time
	batchesOut  = 4       // batches parsed ahead of fn at most
)

// readPipelined is readRest with the parsing done ahead of fn. It returns
// once the goroutine has ended, whatever fn does (a panic included).
func (r *TurnReader) readPipelined(final bool, end int64, fn func(record.Event)) error {
	full := make(chan []record.Event, batchesOut)
	free := make(chan []record.Event, batchesOut+1)
	done := make(chan struct{})
	var (
		wg  sync.WaitGroup
		err error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(full)
		batch := make([]record.Event, 0, batchEvents)
		stopped := false
		// hand passes the batch on; false once the reader has given up.
		hand := func() bool {
			select {
			case full <- batch:
			case <-done:
				return false
			}
			select {
			case batch = <-free:
			default:
				batch = make([]record.Event, 0, batchEvents)
			}
			return true
		}
		err = r.readRest(final, end, func(line []byte) {
			if stopped {
				return
			}
			batch = append(batch, r.parser.ParseLine(line)...)
			if len(batch) >= batchEvents {
				stopped = !hand()
			}
		})
		if !stopped && len(batch) > 0 {
			hand()
		}
	}()
	stop := sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	defer stop()
	for b := range full {
		for i := range b {
			fn(b[i])
		}
		clear(b) // the events' text is fn's now, not the pool's
		select {
		case free <- b[:0]:
		default:
		}
	}
	stop()
	return err
}
