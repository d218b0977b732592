package sessionlist

import (
	"context"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/common"
)

// listed is the listing the list shows: what it keeps of each entry to
// order, group and count it (a few dozen bytes), the summaries read for
// the rows in view, and the entries a live record stands for now.
type listed struct {
	l      *listing.Listing
	keys   []entryKey
	runIDs []string
	off    []bool // entries a live record stands for, or gone
	nOff   int
	// totals are those of the entries not off.
	totals common.Totals
	// read are the summaries read (ReadRows), by position; asked those
	// being read.
	read  map[int]*record.Session
	asked map[int]bool
	// orders are the entries in each sort order, made when first asked.
	orders [sortCount][]int32
	// match says which entries match the filter matchFor (a filter that
	// is still being matched has none).
	match    []bool
	matchFor string
	scratch  []int32
}

// entryKey is what orders and groups a listing's entry.
type entryKey struct {
	created int64
	tokens  int64
	cost    float64 // -1: no price known
	rank    int8
	run     uint32 // 1 + the index of its run's id in runIDs; 0: not a run's worker
}

func newListed(l *listing.Listing, read map[int]*record.Session) *listed {
	if read == nil {
		read = map[int]*record.Session{}
	}
	x := &listed{l: l, read: read, asked: map[int]bool{}}
	n := l.Len()
	x.keys, x.off = make([]entryKey, n), make([]bool, n)
	runs := map[string]uint32{}
	for i := range n {
		b := l.Brief(i)
		k := entryKey{created: b.CreatedAt.UnixNano(), tokens: b.Tokens, cost: -1, rank: int8(rank(b.Status))}
		if b.Priced {
			k.cost = b.CostUSD
		}
		if b.Source.Kind == record.SourceRun {
			if runs[b.Source.Run] == 0 {
				x.runIDs = append(x.runIDs, b.Source.Run)
				runs[b.Source.Run] = uint32(len(x.runIDs))
			}
			k.run = runs[b.Source.Run]
		}
		x.keys[i] = k
		x.totals.AddBrief(b, 1)
	}
	return x
}

// find is where id is among the entries still shown from the listing.
func (x *listed) find(id string) (int, bool) {
	i, ok := x.l.Find(id)
	if !ok || x.off[i] {
		return 0, false
	}
	return i, true
}

// hide takes id's entry out: a live record stands for it now, or it went.
func (x *listed) hide(id string) {
	i, ok := x.find(id)
	if !ok {
		return
	}
	x.off[i] = true
	x.nOff++
	x.totals.AddBrief(x.l.Brief(i), -1)
	delete(x.read, i)
}

func (x *listed) count() int { return x.l.Len() - x.nOff }

// runOf is the run whose worker entry i is, or "".
func (x *listed) runOf(i int32) string {
	if k := x.keys[i].run; k != 0 {
		return x.runIDs[k-1]
	}
	return ""
}

// session is entry i: its summary once read; until then (partial) a
// record made of its brief, without its task and changes.
func (x *listed) session(i int) (s *record.Session, partial bool) {
	if s := x.read[i]; s != nil {
		return s, false
	}
	return x.l.Brief(i).Record(), true
}

// order is the entries in sort order: the listing's own (newest first)
// for ByNewest, else sorted by the key, newest first among equals, as
// less orders rows.
func (x *listed) order(s Sort) []int32 {
	if o := x.orders[s]; o != nil || len(x.keys) == 0 {
		return o
	}
	o := make([]int32, len(x.keys))
	for i := range o {
		o[i] = int32(i)
	}
	k := x.keys
	switch s {
	case ByStatus:
		slices.SortStableFunc(o, func(a, b int32) int { return int(k[a].rank) - int(k[b].rank) })
	case ByTokens:
		slices.SortStableFunc(o, func(a, b int32) int { return cmpDesc(k[a].tokens, k[b].tokens) })
	case ByCost:
		slices.SortStableFunc(o, func(a, b int32) int { return cmpDesc(k[a].cost, k[b].cost) })
	}
	x.orders[s] = o
	return o
}

func cmpDesc[T int64 | float64](a, b T) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// matched says whether the entries' matches of filter are known.
func (x *listed) matched(filter string) bool {
	return filter == "" || x.l.Len() == 0 || x.match != nil && x.matchFor == filter
}

// passes says whether entry i matches filter (false while not known).
func (x *listed) passes(i int32, filter string) bool {
	switch {
	case filter == "":
		return true
	case x.match == nil || x.matchFor != filter:
		return false
	}
	return x.match[i]
}

// Matched is which of a listing's sessions match a filter, as a command
// of SetFilter found.
type Matched struct {
	listing *listing.Listing
	filter  string
	match   []bool
	Err     error
}

// matchCmd is the command that matches the listing's entries against
// filter, reading each summary once, off the UI goroutine; nil when none
// needs it.
func (x *listed) matchCmd(filter string) tea.Cmd {
	if x.matched(filter) {
		return nil
	}
	l := x.l
	return func() tea.Msg {
		match := make([]bool, l.Len())
		err := l.Each(context.Background(), func(i int, s *record.Session) bool {
			match[i] = strings.Contains(strings.ToLower(sessionText(s)), filter)
			return true
		})
		return Matched{listing: l, filter: filter, match: match, Err: err}
	}
}

// ApplyMatched shows the listing's sessions that match the filter, if it
// is still the one they were matched against.
func (m *Model) ApplyMatched(msg Matched) {
	if msg.listing != m.listed.l || msg.filter != m.filter || msg.Err != nil {
		return
	}
	m.listed.match, m.listed.matchFor = msg.match, msg.filter
	m.rebuild()
}

// Read is the summaries of some of a listing's sessions, as a command of
// ReadRows read them.
type Read struct {
	listing  *listing.Listing
	at       []int
	sessions []*record.Session
	Err      error
}

// readAround is how many rows above and below those shown are read ahead:
// a page either way, so that scrolling finds them read.
const readAround = 1

// ReadRows is the command that reads the summaries of the listing's
// sessions in view, and a page either side, that were not read yet; nil
// when there are none.
func (m *Model) ReadRows() tea.Cmd {
	x := m.listed
	if x.l.Len() == 0 {
		return nil
	}
	page := max(1, m.Height-1)
	var at []int
	for k := max(0, m.offset-readAround*page); k < min(len(m.rows), m.offset+(1+readAround)*page); k++ {
		r := m.rows[k]
		if r.run != nil || r.s != nil {
			continue
		}
		i := int(r.at)
		if x.read[i] == nil && !x.asked[i] {
			x.asked[i] = true
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return nil
	}
	l := x.l
	return func() tea.Msg {
		list, err := l.Sessions(context.Background(), at)
		return Read{listing: l, at: at, sessions: list, Err: err}
	}
}

// maxRead bounds the summaries kept read: past it, those far from the rows
// in view are let go.
const maxRead = 2048

// ApplyRead keeps the summaries read, if they are still of the listing.
func (m *Model) ApplyRead(msg Read) {
	x := m.listed
	if msg.listing != x.l {
		return
	}
	for k, i := range msg.at {
		delete(x.asked, i)
		if msg.Err == nil && !x.off[i] {
			x.read[i] = msg.sessions[k]
		}
	}
	if msg.Err != nil {
		// Not asked again until the rows move: an error is said once.
		for _, i := range msg.at {
			x.asked[i] = true
		}
	}
	if len(x.read) > maxRead {
		keep := map[int]bool{}
		page := max(1, m.Height-1)
		for k := max(0, m.offset-2*page); k < min(len(m.rows), m.offset+3*page); k++ {
			keep[int(m.rows[k].at)] = true
		}
		for i := range x.read {
			if !keep[i] {
				delete(x.read, i)
			}
		}
	}
}
