package pilot

import (
	"context"
	"fmt"
	"sync"

	"github.com/fsnotify/fsnotify"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/render"
)

// watchInbox shows, while the prompt waits for the person, the messages
// sent to the run from elsewhere (zwarm runs say, the dashboard), as they
// come: the model reads them with the next turn, and without this they
// would be invisible until then. It returns the stop, which waits for the
// watch to end. Messages already queued when it starts are shown too.
func (pl *Conversation) watchInbox(dir string) (stop func()) {
	in, err := runs.MakeInbox(dir)
	if err != nil {
		return func() {}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	if err := w.Add(in); err != nil {
		w.Close()
		return func() {}
	}
	ctx, cancel := context.WithCancel(pl.base)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Close()
		for {
			pl.showQueued(ctx, dir)
			select {
			case <-ctx.Done():
				return
			case <-w.Events:
			case <-w.Errors:
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// showQueued prints the queued messages not shown yet.
func (pl *Conversation) showQueued(ctx context.Context, dir string) {
	queued, err := runs.QueuedMessages(ctx, dir)
	if err != nil {
		return
	}
	for _, e := range queued {
		if e.Kind != runs.MessageSay || pl.shown[e.ID] {
			continue
		}
		pl.shown[e.ID] = true
		pl.in.Notice(fmt.Sprintf("← message %d (runs say): %s · the model reads it with your next turn", e.Seq, render.Clip(e.Text, 300)))
	}
}
