package watchers

// cursor remembers how far a watcher has read a growing list (calls,
// messages), so each item is judged once. Its first look at a run that
// already has a history (a resumed run) takes that history as read: it
// was judged before the run was interrupted, and judging it again would
// pause or abort a resumed run at once for what stopped it.
type cursor struct {
	read   int
	looked bool
}

// since returns where the unread items of a list of n start, and marks
// them read.
func (c *cursor) since(n int) int {
	if !c.looked {
		c.looked, c.read = true, n
	}
	from := min(c.read, n)
	c.read = n
	return from
}
