package sessions

import "github.com/zwarm/zwarm/sessions/store"

// Session ids are package store's: it checks them before they reach a
// path.

// ErrNotFound is returned (wrapped) when no session matches an id.
var ErrNotFound = store.ErrNotFound

// ErrInvalidID is returned (wrapped) for something that cannot be a session
// id or a prefix of one.
var ErrInvalidID = store.ErrInvalidID

// AmbiguousError says an id prefix matches several sessions.
type AmbiguousError = store.AmbiguousError
