// Package listing answers "which sessions are there?" fast at any size:
// the listing cache (sessions.index, in package index's format) of the
// settled sessions' summaries, checked against their records' files and
// rebuilt from them when it cannot be trusted; listings filtered and
// limited from its front; ids resolved from their prefixes through its
// sorted table; and the Listing a subscription to every session starts
// from, shared between subscriptions while it stands. It reads records
// through state and never changes one.
package listing
