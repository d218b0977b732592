package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// entry is one recorded line, or the exit.
type entry struct {
	AtMS int64           `json:"at_ms"`
	Line json.RawMessage `json:"line"`
	Exit *int            `json:"exit"`
}

// Play prints the recording at path to w with its recorded pacing divided
// by speed, and returns the recorded exit code. It stops when ctx ends.
func Play(ctx context.Context, w io.Writer, path string, speed float64, thread, prompt string) (int, error) {
	if speed <= 0 {
		speed = 1
	}
	f, err := os.Open(path)
	if err != nil {
		return 1, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	if !sc.Scan() {
		return 1, fmt.Errorf("%s is empty", path)
	}
	quoted, _ := json.Marshal(prompt)
	subst := strings.NewReplacer("$THREAD", thread, "$PROMPT", string(quoted[1:len(quoted)-1]))
	start := time.Now()
	for n := 2; sc.Scan(); n++ {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return 1, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		due := start.Add(time.Duration(float64(e.AtMS)/speed) * time.Millisecond)
		select {
		case <-ctx.Done():
			return 1, ctx.Err()
		case <-time.After(time.Until(due)):
		}
		if e.Exit != nil {
			return *e.Exit, nil
		}
		if _, err := io.WriteString(w, subst.Replace(string(e.Line))+"\n"); err != nil {
			return 1, err
		}
	}
	return 0, sc.Err()
}
