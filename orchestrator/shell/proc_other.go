//go:build !linux

package shell

// sessionMembers cannot list a session's processes without /proc; Close
// then signals process groups only.
func sessionMembers(sids map[int]bool) map[int][]int { return map[int][]int{} }
