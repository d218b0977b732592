package record

import "github.com/zwarm/zwarm/sessions/store"

// ShortID is the form of a session id that people see and type: its
// first eight characters, which identify it in any state dir of a
// reasonable size (a longer prefix is asked for when two share it).
func ShortID(id string) string { return store.ShortID(id) }
