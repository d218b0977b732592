// Package config reads zwarm's settings: a state dir's config.toml (its
// adapters, roles, runners, worktrees and state sections, each checked
// before anything runs), the user's own config file, and the trust a
// state dir needs before zwarm runs what its config names. It knows
// sessions only through the adapters and runners that register sections
// in it.
package config
