package main

import (
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/sessions"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a command line that cannot be run as written.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

// silentError has already been reported (a failed session printed as the
// command's result); it only sets the exit code.
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
	fmt.Fprintln(io.errOut, "zwarm:", err)
	var ue *usageError
	var ce *sessions.ConfigError
	var ae *sessions.AmbiguousError
	if errors.As(err, &ue) || errors.As(err, &ce) || errors.As(err, &ae) || errors.Is(err, sessions.ErrInvalidID) ||
		errors.Is(err, sessions.ErrNotFound) || errors.Is(err, sessions.ErrInvalidRequest) {
		return exitUsage
	}
	return exitFailure
}
