// Package store is the state directory's files, whatever they hold: where
// each file of a session is (Layout), how a file is replaced so that a
// reader sees it whole (WriteFileAtomic), how a file is opened never
// through a symlink (OpenFile), the locks writers take, flock(2) or, on a
// shared file system, lease files (scheme.go, lease.go), and how a command
// waits for one (LockFile, WithLockPolicy), and what an id may look like
// (ValidID). It knows nothing of what the files hold: package sessions
// encodes the session record and the listing cache, and orchestrator/runs
// the run records, on top of it. It imports no zwarm package.
package store
