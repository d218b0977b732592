package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/render"
)

// Exit codes, the same for every command (README "Exit codes"):
//
//	0    it worked
//	1    the work failed: a session failed or was killed, a kill or a
//	     removal did not happen, records could not be read, an agent
//	     could not be started
//	2    the command line, a session id or the configuration is wrong:
//	     nothing ran
//	124  a wait gave up at its --timeout (as timeout(1) does)
//	130  interrupted: SIGINT (Ctrl-C) or SIGTERM, whatever the command
//	     was doing (run)
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitTimeout     = 124
	ExitInterrupted = 130
)

// UsageError is a command line that cannot be run as written.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func Usagef(format string, a ...any) error {
	return &UsageError{fmt.Errorf(format, a...)}
}

// TimeoutError is a wait that gave up at its deadline.
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return e.Err.Error() }
func (e *TimeoutError) Unwrap() error { return e.Err }

// SilentError has already been reported (a failed session printed as the
// command's result, unreadable records listed under a table); it only sets
// the exit code.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode is the one place errors become exit codes and messages.
func ExitCode(err error, io *Streams) int {
	if err == nil {
		return ExitOK
	}
	var se *SilentError
	if errors.As(err, &se) {
		return se.Code
	}
	code := Classify(err)
	if code == ExitInterrupted {
		fmt.Fprintln(io.ErrOut, "zwarm: interrupted")
		return code
	}
	// An error may carry what a user or an agent wrote (an address, a
	// path, a message): its control characters reach no terminal raw.
	fmt.Fprintln(io.ErrOut, "zwarm:", render.Safe(err.Error()))
	return code
}

// Interrupted is the exit of a command a signal (SIGINT, SIGTERM) ended:
// 130 whatever the command made of it, so no command can turn Ctrl-C into
// success (a follow that returns nil, a dashboard that quits) or into a
// failure (a child process killed with it). What the command said beyond
// the interruption is still printed.
func Interrupted(err error, io *Streams) int {
	var se *SilentError
	switch {
	case errors.As(err, &se):
		// already reported
	case err == nil, errors.Is(err, context.Canceled):
		fmt.Fprintln(io.ErrOut, "zwarm: interrupted")
	default:
		fmt.Fprintln(io.ErrOut, "zwarm: interrupted:", render.Safe(err.Error()))
	}
	return ExitInterrupted
}

// Classify maps an error to its exit code.
func Classify(err error) int {
	var ue *UsageError
	var te *TimeoutError
	var ce *config.Error
	var ae *sessions.AmbiguousError
	var ut *config.UntrustedError
	switch {
	case errors.As(err, &te):
		return ExitTimeout
	case errors.As(err, &ue), errors.As(err, &ce), errors.As(err, &ae), errors.As(err, &ut),
		errors.Is(err, sessions.ErrInvalidID), errors.Is(err, sessions.ErrNotFound), errors.Is(err, config.ErrInvalidRequest),
		errors.Is(err, runs.ErrNoRun), errors.Is(err, runs.ErrRunID):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailure
}
