package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Progress shows on a terminal's stderr what a blocking command awaits: a
// spinner, the elapsed time, and each session's latest step, redrawn in
// place and erased when done. Piped, there is none: startProgress returns
// nil and every method of a nil *progress does nothing.
type Progress struct {
	io    *Streams
	what  string
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	mu     sync.Mutex
	order  []string
	latest map[string]string
	drawn  int // lines on screen
	frame  int
}

// maxProgressRows bounds how many sessions the progress lists.
const maxProgressRows = 8

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func StartProgress(io *Streams, what string) *Progress {
	if !io.ErrTTY {
		return nil
	}
	p := &Progress{io: io, what: what, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{}),
		latest: map[string]string{}}
	go p.loop()
	return p
}

func (p *Progress) loop() {
	defer close(p.done)
	t := time.NewTicker(125 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.mu.Lock()
			p.erase()
			p.mu.Unlock()
			return
		case <-t.C:
			p.mu.Lock()
			p.frame++
			p.draw()
			p.mu.Unlock()
		}
	}
}

// Update takes what a subscription reports: the session's state and the
// latest step its agent took.
func (p *Progress) Update(u watch.Update) {
	if p == nil || u.Session == nil {
		return
	}
	s := u.Session
	step := ""
	for _, b := range u.Events {
		for _, ev := range b.Events {
			if lines := render.Of(ev); len(lines) > 0 {
				step = lines[0].Text
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.latest[s.ID]; !ok {
		p.order = append(p.order, s.ID)
	}
	state := string(s.Status())
	if !s.Settled() {
		state += " · turn " + fmt.Sprint(s.Turn)
		if q := render.Quiet(s, time.Now()); q != "" {
			state += " · " + q
		}
		if ws := s.Workspace; ws != nil && ws.Preparing() {
			step = preparingStep
		}
		if step == "" {
			step = p.stepOf(p.latest[s.ID])
		}
		if step != "" {
			state += " · " + step
		}
	}
	p.latest[s.ID] = state
}

// stepOf recovers the step part of a previous state line.
func (p *Progress) stepOf(prev string) string {
	parts := strings.Split(prev, " · ")
	if len(parts) < 3 {
		return ""
	}
	last := parts[len(parts)-1]
	if strings.HasPrefix(last, "quiet ") || last == preparingStep {
		return "" // said of the session, not a step its agent took
	}
	return last
}

// preparingStep stands for the agent's step while the worktree is made.
const preparingStep = "preparing worktree"

// Print runs fn, which writes to the terminal, with the progress out of
// its way.
func (p *Progress) Print(fn func()) {
	if p == nil {
		fn()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	fn()
	p.draw()
}

// Stop erases the progress; it is not drawn again.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
}

func (p *Progress) lines() []string {
	head := fmt.Sprintf("%s %s · %s", spinnerFrames[p.frame%len(spinnerFrames)], p.what,
		render.Runtime(time.Since(p.start)))
	out := []string{head}
	for i, id := range p.order {
		if i == maxProgressRows {
			out = append(out, fmt.Sprintf("  … and %d more", len(p.order)-i))
			break
		}
		out = append(out, "  "+record.ShortID(id)+" "+p.latest[id])
	}
	return out
}

func (p *Progress) draw() {
	var b strings.Builder
	p.rewind(&b)
	width := max(10, p.io.Width-1)
	lines := p.lines()
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("\x1b[2K" + runewidth.Truncate(l, width, "…"))
	}
	b.WriteString("\x1b[J")
	p.drawn = len(lines)
	p.io.ErrOut.Write([]byte(b.String()))
}

func (p *Progress) erase() {
	if p.drawn == 0 {
		return
	}
	var b strings.Builder
	p.rewind(&b)
	b.WriteString("\x1b[J")
	p.drawn = 0
	p.io.ErrOut.Write([]byte(b.String()))
}

// rewind moves the cursor to the start of the first drawn line.
func (p *Progress) rewind(b *strings.Builder) {
	b.WriteByte('\r')
	if p.drawn > 1 {
		fmt.Fprintf(b, "\x1b[%dA", p.drawn-1)
	}
}
