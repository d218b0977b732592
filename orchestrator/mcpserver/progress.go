package mcpserver

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress sends progress notifications for one tool call, to the client
// that gave it a progress token.
type progress struct {
	session *mcp.ServerSession
	token   any
	began   time.Time
	log     *slog.Logger

	mu   sync.Mutex // orders the notifications
	last float64
}

// newProgress is nil when the client asked for no progress.
func newProgress(req *mcp.CallToolRequest, log *slog.Logger) *progress {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return nil
	}
	return &progress{session: req.Session, token: tok, began: time.Now(), log: log}
}

// send notifies the client. The progress value is the seconds elapsed,
// raised when needed so that it increases with every notification, as
// the protocol requires.
func (p *progress) send(ctx context.Context, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := math.Round(time.Since(p.began).Seconds()*1000) / 1000
	if v <= p.last {
		v = p.last + 0.001
	}
	p.last = v
	if err := p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: v, Message: msg}); err != nil {
		p.log.Warn("progress notification not sent", "err", err)
	}
}

// heartbeat sends status(elapsed) every interval until stop is called;
// stop returns once the heartbeat's goroutine has ended.
func (p *progress) heartbeat(ctx context.Context, every time.Duration, status func(context.Context, time.Duration) string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.send(ctx, status(ctx, time.Since(p.began)))
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

type progressKey struct{}

func withProgress(ctx context.Context, p *progress) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, p)
}

func progressFrom(ctx context.Context) *progress {
	p, _ := ctx.Value(progressKey{}).(*progress)
	return p
}
