// Package workspace is a worker's directory when it works in a git
// repository: a linked worktree of its own on a branch of its own, the
// commits zwarm makes at the end of each turn, the diff of what the worker
// changed, landing that change into a branch, merging a branch's new
// commits into the worker's, and removing what is left.
//
// It drives the git CLI, as gh does, and never re-implements git. Every
// command runs with an environment that cannot redirect it (GIT_DIR,
// GIT_WORK_TREE, GIT_INDEX_FILE and their kin are dropped), and every
// command that writes runs with the user's hooks switched off
// (core.hooksPath=/dev/null) and automatic maintenance off, so neither a
// pre-commit hook nor a background gc runs on zwarm's behalf. zwarm's own
// commits are made by "zwarm <zwarm@localhost>" and never signed; the
// commits a landing makes are the user's, with the user's identity.
//
// The package imports no other zwarm package: package sessions records
// what it returns in the session record and decides when to call it.
package workspace
