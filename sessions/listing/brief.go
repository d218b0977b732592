package listing

import (
	"math"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/record"
)

// brief is what a Listing keeps in memory of each settled session: what
// counts, orders and groups it, in about a hundred bytes. Its strings are
// the listing's own (an id each, the rest shared among all).
type brief struct {
	id                      string
	status                  record.Status
	adapter, model, source  string
	created, updated, ended int64 // unix nanoseconds; ended 0: none
	tokens                  int64
	cost                    float64
	turn                    int32
	priced                  bool
}

// brief decodes from en what a listing keeps of it, skipping the rest of
// the summary (index_codec.go's layout: the same fields in the same
// order). Its strings share en's bytes; false if it does not decode.
func (d *decoder) brief(en index.Entry, b *brief) bool {
	d.b, d.err = en.Data, nil
	b.id, b.created = en.ID, en.Created
	d.str() // task
	b.status = record.Status(d.str())
	b.adapter, b.model = d.str(), d.str()
	d.str() // sandbox
	d.str() // working dir
	b.source = d.str()
	for range 3 { // thread id, last message, error
		d.str()
	}
	b.updated, b.ended = d.i64(), d.i64()
	d.i64() // last event
	d.i64() // pid
	b.turn = int32(d.i64())
	for range 4 { // pending injects, next inbox seq, exit code, has exit
		d.i64()
	}
	b.priced = d.i64() != 0
	for range 5 { // input, cached input, cache write, output, reasoning tokens
		d.i64()
	}
	b.tokens = d.i64()
	b.cost = math.Float64frombits(d.u64())
	return d.err == nil
}
