package sessions

import (
	"fmt"

	"github.com/fsnotify/fsnotify"
)

// dirWatch wakes its owner whenever something changes in the watched
// directories. Wake-ups coalesce: many writes while the owner is busy become
// one signal, so a fast writer never queues work.
type dirWatch struct {
	w    *fsnotify.Watcher
	c    chan struct{}
	done chan struct{}
}

func watchDirs(dirs ...string) (*dirWatch, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, fmt.Errorf("watch %s: %w", d, err)
		}
	}
	dw := &dirWatch{w: w, c: make(chan struct{}, 1), done: make(chan struct{})}
	go dw.loop()
	return dw, nil
}

func (d *dirWatch) loop() {
	defer close(d.done)
	for {
		select {
		case _, ok := <-d.w.Events:
			if !ok {
				return
			}
			d.poke()
		case _, ok := <-d.w.Errors:
			if !ok {
				return
			}
			// An overflow means events were lost: wake the owner so it
			// re-reads everything it cares about.
			d.poke()
		}
	}
}

func (d *dirWatch) poke() {
	select {
	case d.c <- struct{}{}:
	default:
	}
}

// C delivers a value after any change.
func (d *dirWatch) C() <-chan struct{} { return d.c }

// Close stops the watch and waits for its goroutine.
func (d *dirWatch) Close() {
	d.w.Close()
	<-d.done
}
