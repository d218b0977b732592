package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
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
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitTimeout     = 124
	exitInterrupted = 130
)

// usageError is a command line that cannot be run as written.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

// timeoutError is a wait that gave up at its deadline.
type timeoutError struct{ err error }

func (e *timeoutError) Error() string { return e.err.Error() }
func (e *timeoutError) Unwrap() error { return e.err }

// silentError has already been reported (a failed session printed as the
// command's result, unreadable records listed under a table); it only sets
// the exit code.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exitCode is the one place errors become exit codes and messages.
func exitCode(err error, io *streams) int {
	if err == nil {
		return exitOK
	}
	var se *silentError
	if errors.As(err, &se) {
		return se.code
	}
	code := classify(err)
	if code == exitInterrupted {
		fmt.Fprintln(io.errOut, "zwarm: interrupted")
		return code
	}
	fmt.Fprintln(io.errOut, "zwarm:", err)
	return code
}

// interrupted is the exit of a command a signal (SIGINT, SIGTERM) ended:
// 130 whatever the command made of it, so no command can turn Ctrl-C into
// success (a follow that returns nil, a dashboard that quits) or into a
// failure (a child process killed with it). What the command said beyond
// the interruption is still printed.
func interrupted(err error, io *streams) int {
	var se *silentError
	switch {
	case errors.As(err, &se):
		// already reported
	case err == nil, errors.Is(err, context.Canceled):
		fmt.Fprintln(io.errOut, "zwarm: interrupted")
	default:
		fmt.Fprintln(io.errOut, "zwarm: interrupted:", err)
	}
	return exitInterrupted
}

// classify maps an error to its exit code.
func classify(err error) int {
	var ue *usageError
	var te *timeoutError
	var ce *config.Error
	var ae *sessions.AmbiguousError
	var ut *config.UntrustedError
	switch {
	case errors.As(err, &te):
		return exitTimeout
	case errors.As(err, &ue), errors.As(err, &ce), errors.As(err, &ae), errors.As(err, &ut),
		errors.Is(err, sessions.ErrInvalidID), errors.Is(err, sessions.ErrNotFound), errors.Is(err, config.ErrInvalidRequest):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitFailure
}
