package state

import (
	"encoding/json"
	"sync"

	"github.com/zwarm/zwarm/sessions/record"
)

// The first record a process decodes costs encoding/json about half a
// millisecond: it learns the record's types, every field of each and,
// for a decode too, the encoder of every field, reading type data the
// process has not touched yet. The second record costs a twentieth of
// that. A one-session command spends as long parsing its command line
// before it knows which record to read: sessions.Prepare has another
// processor learn the types meanwhile, and the first decode waits for
// that rather than learn them again.

// LearnRecords decodes a record once: an empty one has encoding/json
// learn every type the record holds (it builds each field's encoder);
// its workspace and a turn, how they are decoded too.
var LearnRecords = sync.OnceFunc(func() {
	var s record.Session
	_ = json.Unmarshal([]byte(`{"workspace":{},"turns":[{}]}`), &s)
})
