//go:build !linux

package shell

import "syscall"

// sessionMembers cannot list a session's processes without /proc; Close
// then signals process groups only.
func sessionMembers(sids map[int]bool) map[int][]int { return map[int][]int{} }

// join: cgroups are Linux's; elsewhere a command starts where zwarm runs.
func (s spec) join(*syscall.SysProcAttr) {}
