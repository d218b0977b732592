package web

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// land lands a session (POST /api/sessions/{id}/land {verify, strategy,
// into}) from the checkout it was spawned from, as zwarm land run there
// would: its answer is a stream of JSON lines, {"out": TEXT} for the
// verify command's output as it runs, then {"landed": {...}} or
// {"error": TEXT, "status": CODE}.
func (s *Server) land(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Verify   string `json:"verify"`
		Strategy string `json:"strategy"`
		Into     string `json:"into"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	sess, err := s.opt.Manager.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failed(w, err)
		return
	}
	opt := sessions.LandOptions{Strategy: workspace.Strategy(body.Strategy), Into: body.Into, Verify: body.Verify}
	if ws := sess.Workspace; ws != nil {
		opt.Dir = ws.Origin
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	lines := &ndjson{w: w}
	opt.VerifyOut = lines
	res, err := s.opt.Manager.Land(r.Context(), sess.ID, opt)
	if err != nil {
		s.opt.Log.Info("web: landing refused", "err", err)
		lines.send(map[string]any{"error": err.Error(), "status": codeOf(err)})
		return
	}
	lines.send(map[string]any{"landed": map[string]any{"into": res.Into, "commit": res.Commit, "files": res.Stat.Files, "added": res.Stat.Added,
		"deleted": res.Stat.Deleted, "verified": res.Verified, "already": res.Already, "nothing": res.Nothing, "removed": res.Removed}})
}

// ndjson writes JSON lines, each flushed at once.
type ndjson struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (n *ndjson) Write(p []byte) (int, error) {
	n.send(map[string]string{"out": string(p)})
	return len(p), nil
}

func (n *ndjson) send(v any) {
	b, _ := json.Marshal(v)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.w.Write(append(b, '\n'))
	if f, ok := n.w.(http.Flusher); ok {
		f.Flush()
	}
}
