package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Run runs command with sh -c, in a process group of its own, and stops
// the group once timeout has passed (SIGTERM, then SIGKILL a second
// later). It is what zwarm __notify does; the error says how the command
// failed, with the end of what it printed.
func Run(ctx context.Context, timeout time.Duration, command string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever the command left in its group goes with it.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err == nil {
		return nil
	}
	tail := strings.TrimSpace(out.String())
	if len(tail) > 500 {
		tail = "…" + tail[len(tail)-500:]
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("notify command still running after %s, stopped: %s", timeout, tail)
	}
	return fmt.Errorf("notify command: %w: %s", err, tail)
}
