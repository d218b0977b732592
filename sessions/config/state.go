package config

import (
	"time"

	"github.com/zwarm/zwarm/sessions/store"
)

// StateConfig is config.toml's [state] table: how the state dir itself is
// kept.
type StateConfig struct {
	// Locks is how the state dir's locks are made: "auto" (the default:
	// leases on a network file system, flock elsewhere), "flock" or
	// "lease" (sessions/store, scheme.go). Every process that shares the
	// state dir reads it there, the supervisors of other machines too.
	Locks string `toml:"locks"`
}

const stateKeys = "[state] locks"

func (s StateConfig) check() error {
	_, err := store.ParseScheme(s.Locks)
	return err
}

// LockTimeout is how long a command waits for a lock (lock_timeout).
func (c *Config) LockTimeout() time.Duration {
	if c != nil && c.LockLimit.Duration > 0 {
		return c.LockLimit.Duration
	}
	return store.DefaultLockTimeout
}
