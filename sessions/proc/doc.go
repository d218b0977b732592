// Package proc is zwarm's hold on processes: a process named so that a
// reused pid is never taken for it (Ref), the processes of one session
// found by cgroup, environment marker and descent (Scope) and stopped
// until none is left, the cgroups zwarm makes and tags with their state
// dir, and a set of pidfds that reports exits without polling
// (ExitWatch). It knows nothing of records or state dirs beyond the name a
// cgroup is tagged with, and imports no zwarm package.
package proc
