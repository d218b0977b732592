package listing

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// How a settled session's summary is kept in an entry of the listing
// cache (package sessions/index keeps the file; the entry's id, creation
// time and file identity are its). Integers are little endian, strings a
// uvarint length and their bytes. Decoding points every string into the
// bytes read, so a listing of thousands of sessions allocates no string of
// its own. An entry that does not decode is no cache at all.

var errBadIndex = errors.New("malformed listing cache")

type encoder struct{ b []byte }

func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) i64(v int64)  { e.u64(uint64(v)) }
func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

type decoder struct {
	b   []byte
	err error
	// The workspaces of a listing are made in slabs, a few allocations
	// for thousands, as the summaries are.
	workspaces []record.Workspace
	stats      []workspace.Stat
	landings   []record.Landing
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errBadIndex
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) i64() int64 { return int64(d.u64()) }

// str returns a string that shares the file's bytes.
func (d *decoder) str() string {
	n, k := binary.Uvarint(d.b)
	if d.err != nil || k <= 0 || n > uint64(len(d.b)-k) {
		d.err = errBadIndex
		return ""
	}
	s := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	if len(s) == 0 {
		return ""
	}
	return unsafe.String(&s[0], len(s))
}

// entry is sum as the cache keeps it. The encoder's buffer is reused:
// each entry's bytes are copied out of it.
func (e *encoder) entry(s *summary) index.Entry {
	e.b = e.b[:0]
	for _, v := range []string{s.Task, s.Status, s.Adapter, s.Model, s.Sandbox, s.WorkingDir, s.Source, s.ThreadID, s.LastMessage, s.Error} {
		e.str(v)
	}
	for _, v := range []int64{s.UpdatedAt, s.EndedAt, s.LastEventAt, int64(s.PID), int64(s.Turn),
		int64(s.PendingInjects), int64(s.NextInboxSeq), int64(s.ExitCode), B2i(s.HasExit), B2i(s.HasCost),
		s.InputTokens, s.CachedInputTokens, s.CacheWriteTokens, s.OutputTokens, s.ReasoningTokens, s.TotalTokens} {
		e.i64(v)
	}
	e.u64(math.Float64bits(s.Cost))
	e.i64(int64(s.Denied))
	e.workspace(s.Workspace)
	e.str(s.JobRunner)
	e.str(s.JobID)
	e.str(s.Role)
	e.str(s.ReasoningEffort)
	e.str(s.Instructions)
	e.u64(math.Float64bits(s.MaxCostUSD))
	return index.Entry{ID: s.ID, Key: s.Key, Created: s.CreatedAt, Data: slices.Clone(e.b)}
}

// summary decodes en into s; false if it does not decode.
func (d *decoder) summary(en index.Entry, s *summary) bool {
	d.b, d.err = en.Data, nil
	s.Key, s.ID, s.CreatedAt = en.Key, en.ID, en.Created
	for _, p := range []*string{&s.Task, &s.Status, &s.Adapter, &s.Model, &s.Sandbox, &s.WorkingDir, &s.Source, &s.ThreadID, &s.LastMessage, &s.Error} {
		*p = d.str()
	}
	s.UpdatedAt, s.EndedAt, s.LastEventAt = d.i64(), d.i64(), d.i64()
	s.PID, s.Turn, s.PendingInjects, s.NextInboxSeq, s.ExitCode = int(d.i64()), int(d.i64()), int(d.i64()), int(d.i64()), int(d.i64())
	s.HasExit, s.HasCost = d.i64() != 0, d.i64() != 0
	s.InputTokens, s.CachedInputTokens, s.CacheWriteTokens = d.i64(), d.i64(), d.i64()
	s.OutputTokens, s.ReasoningTokens, s.TotalTokens = d.i64(), d.i64(), d.i64()
	s.Cost = math.Float64frombits(d.u64())
	s.Denied = int(d.i64())
	s.Workspace = d.workspace()
	s.JobRunner, s.JobID = d.str(), d.str()
	s.Role, s.ReasoningEffort, s.Instructions = d.str(), d.str(), d.str()
	s.MaxCostUSD = math.Float64frombits(d.u64())
	return d.err == nil && len(d.b) == 0
}

func B2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// workspace writes a session's workspace: a presence flag, then its
// fields; lists as a count and their entries.
func (e *encoder) workspace(w *record.Workspace) {
	if w == nil {
		e.u64(0)
		return
	}
	e.u64(1)
	for _, v := range []string{w.Repo, w.GitDir, w.Origin, w.Path, w.Subdir, w.Branch, w.Base, w.BaseCommit, string(w.State), w.Head, w.Error} {
		e.str(v)
	}
	e.i64(B2i(w.BaseBranch) | B2i(w.WithChanges)<<1 | B2i(w.Changes != nil)<<2 | B2i(w.Landed != nil)<<3 | B2i(len(w.Earlier) > 0)<<4)
	e.i64(int64(w.Committed))
	if w.Changes != nil {
		e.i64(int64(w.Changes.Files))
		e.i64(int64(w.Changes.Added))
		e.i64(int64(w.Changes.Deleted))
	}
	if l := w.Landed; l != nil {
		e.landing(l)
	}
	if len(w.Earlier) > 0 {
		e.u64(uint64(len(w.Earlier)))
		for i := range w.Earlier {
			e.landing(&w.Earlier[i])
		}
	}
	e.strs(w.Brought)
	e.strs(w.Conflict)
}

func (e *encoder) landing(l *record.Landing) {
	for _, v := range []string{l.Commit, l.Into, string(l.Strategy), l.Head} {
		e.str(v)
	}
	e.i64(l.At.UnixNano())
}

func (e *encoder) strs(list []string) {
	e.u64(uint64(len(list)))
	for _, v := range list {
		e.str(v)
	}
}

func (d *decoder) workspace() *record.Workspace {
	switch d.u64() {
	case 0:
		return nil
	case 1:
	default:
		d.err = errBadIndex
		return nil
	}
	if len(d.workspaces) == cap(d.workspaces) {
		d.workspaces = make([]record.Workspace, 0, 256)
	}
	d.workspaces = append(d.workspaces, record.Workspace{})
	w := &d.workspaces[len(d.workspaces)-1]
	var state string
	for _, p := range []*string{&w.Repo, &w.GitDir, &w.Origin, &w.Path, &w.Subdir, &w.Branch, &w.Base, &w.BaseCommit, &state, &w.Head, &w.Error} {
		*p = d.str()
	}
	w.State = record.WorkspaceState(state)
	flags := d.i64()
	w.BaseBranch, w.WithChanges = flags&1 != 0, flags&2 != 0
	w.Committed = int(d.i64())
	if flags&4 != 0 {
		if len(d.stats) == cap(d.stats) {
			d.stats = make([]workspace.Stat, 0, 256)
		}
		d.stats = append(d.stats, workspace.Stat{Files: int(d.i64()), Added: int(d.i64()), Deleted: int(d.i64())})
		w.Changes = &d.stats[len(d.stats)-1]
	}
	if flags&8 != 0 {
		if len(d.landings) == cap(d.landings) {
			d.landings = make([]record.Landing, 0, 256)
		}
		d.landings = append(d.landings, d.landing())
		w.Landed = &d.landings[len(d.landings)-1]
	}
	if flags&16 != 0 {
		n := d.u64()
		if d.err != nil || n > uint64(len(d.b)) {
			d.err = errBadIndex
			return nil
		}
		w.Earlier = make([]record.Landing, n)
		for i := range w.Earlier {
			w.Earlier[i] = d.landing()
		}
	}
	w.Brought, w.Conflict = d.strs(), d.strs()
	return w
}

func (d *decoder) landing() record.Landing {
	l := record.Landing{Commit: d.str(), Into: d.str()}
	l.Strategy = workspace.Strategy(d.str())
	l.Head = d.str()
	l.At = time.Unix(0, d.i64()).UTC()
	return l
}

func (d *decoder) strs() []string {
	n := d.u64()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errBadIndex
		return nil
	}
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}
