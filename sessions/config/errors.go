package config

import (
	"errors"
	"fmt"
)

// ErrInvalidRequest marks an adapter error caused by what was asked (an
// unknown sandbox mode), as opposed to the machine (a missing binary): such
// a spawn is refused without recording a session.
var ErrInvalidRequest = errors.New("invalid request")

// Invalidf makes an error that is ErrInvalidRequest (errors.Is says so) and
// reads as its message alone.
func Invalidf(format string, a ...any) error {
	return &invalidError{err: fmt.Errorf(format, a...)}
}

type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalidRequest }
