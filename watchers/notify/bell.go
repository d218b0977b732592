package notify

import (
	"fmt"
	"os"
	"strings"
)

// ring rings the terminal for ev: BEL always, and an OSC 9 notification
// where the terminal is known to show one (outside tmux and screen, which
// would swallow it).
func (n *Notifier) ring(ev Event) {
	if n.opt.Bell == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if osc9() {
		// The BEL that ends the sequence ends it; the one after rings.
		fmt.Fprintf(n.opt.Bell, "\x1b]9;zwarm: %s\x07", oneLine(ev.Name+" "+shortID(ev.ID)+" "+ev.Text))
	}
	n.opt.Bell.Write([]byte{'\a'})
}

// osc9 reports whether the terminal shows OSC 9 notifications.
func osc9() bool {
	if os.Getenv("TMUX") != "" || strings.HasPrefix(os.Getenv("TERM"), "screen") {
		return false
	}
	switch os.Getenv("TERM_PROGRAM") {
	case "iTerm.app", "WezTerm", "ghostty":
		return true
	}
	return os.Getenv("WT_SESSION") != "" || strings.Contains(os.Getenv("TERM"), "kitty")
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
