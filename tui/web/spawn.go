package web

import (
	"net/http"
	"strings"

	"github.com/zwarm/zwarm/sessions"
)

// spawn starts a worker (POST /api/spawn {task, adapter, model, role}) in
// the directory zwarm serve was started in, as zwarm spawn run there
// would: in a worktree of its own inside a repository.
func (s *Server) spawn(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Task    string `json:"task"`
		Adapter string `json:"adapter"`
		Model   string `json:"model"`
		Role    string `json:"role"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Task) == "" {
		fail(w, http.StatusBadRequest, "a worker needs its task")
		return
	}
	sess, err := s.opt.Manager.Spawn(r.Context(), sessions.SpawnRequest{Task: body.Task, Adapter: body.Adapter, Model: body.Model,
		Role: body.Role, WorkingDir: s.opt.Dir})
	if err != nil {
		s.failed(w, err)
		return
	}
	reply(w, map[string]any{"session": toJSON(sess)})
}
