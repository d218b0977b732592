package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Options are what every job of a Client asks of the cluster, and the
// environment of every Slurm command it runs.
type Options struct {
	Partition string   // sbatch --partition; empty: the cluster's default
	Account   string   // sbatch --account
	Time      string   // sbatch --time, in Slurm's forms ("30", "1:00:00", "1-0")
	Mem       string   // sbatch --mem ("4G")
	CPUs      int      // sbatch --cpus-per-task; 0: the cluster's default
	ExtraArgs []string // more sbatch options, as given (options only: no script)
	Env       []string // KEY=VALUE added to every command's environment (SLURM_CONF=...)
}

// Client runs Slurm's commands for one set of Options. It is safe for
// concurrent use.
type Client struct {
	opts  Options
	calls atomic.Int64
}

// Calls is how many Slurm commands the Client has run, so a caller (or a
// test) can see what a poll costs the controller.
func (c *Client) Calls() int64 { return c.calls.Load() }

// New returns a Client. Binaries are looked up on PATH when a call needs
// them, so a missing one is reported by the call that wanted it.
func New(opts Options) *Client {
	return &Client{opts: opts}
}

// ErrUnreachable is wrapped by every error of a command that could not
// reach the Slurm controller (or munge, which it authenticates with): the
// jobs may be fine, the client just cannot see them now.
var ErrUnreachable = errors.New("slurm controller unreachable")

// install says what provides each binary, for the error naming a missing one.
var install = map[string]string{
	"sbatch":   "Slurm's client tools (Debian/Ubuntu: apt-get install slurm-client)",
	"squeue":   "Slurm's client tools (Debian/Ubuntu: apt-get install slurm-client)",
	"scancel":  "Slurm's client tools (Debian/Ubuntu: apt-get install slurm-client)",
	"sinfo":    "Slurm's client tools (Debian/Ubuntu: apt-get install slurm-client)",
	"scontrol": "Slurm's client tools (Debian/Ubuntu: apt-get install slurm-client)",
}

// lookPath finds a Slurm binary, or says what to install.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found on PATH: install %s", name, install[name])
	}
	return p, nil
}

// CommandError is a Slurm command that ran and failed: its exit code and
// its own message, which is what a person needs to see (sbatch's refusal
// of a partition, squeue's complaint).
type CommandError struct {
	Command string // "sbatch", "squeue", ...
	Code    int
	Stderr  string
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s exited %d: %s", e.Command, e.Code, msg)
}

// unreachable tells a message of a client that could not talk to the
// controller (or to munge) from one about the request itself.
func unreachable(stderr string) bool {
	for _, s := range []string{
		"Unable to contact slurm controller",
		"Socket timed out on send/recv",
		"Zero Bytes were transmitted or received",
		"Connection refused",
		"Munge encode failed",
		"Failed to connect to",
		"Communication connection failure",
	} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// run runs one Slurm command with the Client's environment and returns
// its stdout. A failure is a *CommandError, wrapped with ErrUnreachable
// when the controller could not be reached.
func (c *Client) run(ctx context.Context, stdin string, name string, args ...string) (string, error) {
	return c.runEnv(ctx, nil, stdin, name, args...)
}

// runEnv is run with env added to the command's environment: KEY=VALUE
// sets KEY, a KEY alone removes it.
func (c *Client) runEnv(ctx context.Context, env []string, stdin string, name string, args ...string) (string, error) {
	path, err := lookPath(name)
	if err != nil {
		return "", err
	}
	c.calls.Add(1)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = withEnv(append(os.Environ(), c.opts.Env...), env)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	// The command dies with us: a client left behind would retry the
	// controller for its own timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if err == nil {
		return out.String(), nil
	}
	if ctx.Err() != nil {
		// What it said before it was stopped says why it took so long
		// ("temporarily unable to accept job, sleeping and retrying").
		if said := lastLine(stderr.String()); said != "" {
			return "", fmt.Errorf("%s: %w (it had said: %s)", name, ctx.Err(), said)
		}
		return "", fmt.Errorf("%s: %w", name, ctx.Err())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return "", fmt.Errorf("run %s: %w", name, err)
	}
	ce := &CommandError{Command: name, Code: ee.ExitCode(), Stderr: stderr.String()}
	if unreachable(ce.Stderr) {
		return out.String(), fmt.Errorf("%w: %w", ErrUnreachable, ce)
	}
	return out.String(), ce
}

// withEnv is base with env applied: KEY=VALUE sets KEY (the last setting
// wins, as exec's does), a KEY alone removes it.
func withEnv(base, env []string) []string {
	drop := map[string]bool{}
	var set []string
	for _, kv := range env {
		if strings.Contains(kv, "=") {
			set = append(set, kv)
		} else {
			drop[kv] = true
		}
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// lastLine is the last line of s that is not blank, at most 300 bytes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 300 {
		l = l[:300] + "…"
	}
	return l
}
