package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// maxBody bounds what an action's request may carry.
const maxBody = 1 << 20

func (s *Server) api(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/sessions", s.look(s.list))
	mux.HandleFunc("GET /api/sessions/{id}", s.look(s.session))
	mux.HandleFunc("GET /api/sessions/{id}/diff", s.look(s.diff))
	mux.HandleFunc("POST /api/stream", s.look(s.ticket))
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("POST /api/sessions/{id}/inject", s.act(s.inject))
	mux.HandleFunc("POST /api/sessions/{id}/kill", s.act(s.kill))
	mux.HandleFunc("POST /api/sessions/{id}/land", s.act(s.land))
	mux.HandleFunc("POST /api/spawn", s.act(s.spawn))
	s.runsAPI(mux)
	for _, m := range apiMethods {
		mux.HandleFunc(m+" /api/", func(w http.ResponseWriter, r *http.Request) { none(mux, w, r) })
	}
}

// none answers anything else under /api/ as the API answers, in JSON: 405
// for a path the API has with another method, else 404.
func none(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	if allow := otherMethods(mux, r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), r.Method))
		return
	}
	fail(w, http.StatusNotFound, fmt.Sprintf("the API has no %s %s", r.Method, r.URL.Path))
}

// apiOnly has a method no pattern names (TRACE, PROPFIND) answered under
// /api/ as the others are: the mux's own answer is plain text, naming
// every method of the page's patterns.
func apiOnly(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") && r.Method != http.MethodHead && !slices.Contains(apiMethods, r.Method) {
			none(mux, w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// apiMethods are those the API answers in its own words; it takes GET
// and POST alone.
var apiMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// otherMethods are the methods other than r's with which mux has r's path.
func otherMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range apiMethods[:2] {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); m != r.Method && pattern != m+" /api/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// look lets a request through with either token.
func (s *Server) look(h func(http.ResponseWriter, *http.Request, access)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a := s.accessOf(r)
		if a == denied {
			fail(w, http.StatusUnauthorized, "a token is needed: open the link zwarm serve printed")
			return
		}
		if r.Method != http.MethodGet && !sameOrigin(r) {
			fail(w, http.StatusForbidden, "refused: the request came from another site")
			return
		}
		h(w, r, a)
	}
}

// act lets a request through with the full token only, from the page's
// own origin.
func (s *Server) act(h func(http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return s.look(func(w http.ResponseWriter, r *http.Request, a access) {
		if a != full {
			fail(w, http.StatusForbidden, "this link can look but not act: the read-only token changes nothing")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r)
	})
}

// list is a page of the sessions, newest first (GET /api/sessions?limit=N
// &after=CURSOR&q=TEXT&status=S): the first screen comes from the listing
// cache's front, and the page asks for the next, after the last one it
// shows (next), as its reader scrolls. A page costs its own sessions
// however deep it is, and holds while sessions are made meanwhile.
func (s *Server) list(w http.ResponseWriter, r *http.Request, a access) {
	q := r.URL.Query()
	limit := 200
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 5000 {
			fail(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want a number of sessions from 1 to 5000 (200 when not given)", l))
			return
		}
		limit = n
	}
	opt := listing.Options{Limit: limit + 1, Text: q.Get("q")}
	if st := q.Get("status"); st != "" {
		// A status that is none is the request's mistake, as ls says it
		// is: not an empty list.
		parsed, err := record.ParseStatus(st)
		if err != nil {
			fail(w, http.StatusBadRequest, "status: "+err.Error())
			return
		}
		opt.Status = parsed
	}
	if after := q.Get("after"); after != "" {
		c, err := listing.ParseCursor(after)
		if err != nil {
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		opt.After = c
	}
	list, err := s.opt.Manager.List(r.Context(), opt)
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		s.failed(w, err)
		return
	}
	more := len(list) > limit
	list = list[:min(limit, len(list))]
	out := make([]sessionJSON, len(list))
	for i, sess := range list {
		out[i] = toJSON(sess)
	}
	next := ""
	if more {
		next = listing.CursorOf(list[len(list)-1]).String()
	}
	body := map[string]any{"sessions": out, "more": more, "next": next, "can_act": a == full}
	if le != nil {
		// As ls names them (and /api/runs its own): a session whose
		// record cannot be read is in no page, and would go unseen.
		body["unreadable"] = le.Error()
	}
	reply(w, body)
}

func (s *Server) session(w http.ResponseWriter, r *http.Request, a access) {
	sess, turns, err := s.opt.Manager.Transcript(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failed(w, err)
		return
	}
	inbox, err := s.opt.Manager.Inbox(sess.ID)
	if err != nil {
		s.failed(w, err)
		return
	}
	reply(w, map[string]any{"session": toJSON(sess), "turns": storyOf(turns), "workspace": workspaceOf(sess, time.Now()),
		"follow_ups": followUpsOf(inbox), "can_act": a == full})
}

// diff is a session's change (GET /api/sessions/{id}/diff): its --stat
// summary and its patch file by file. Files whose patches would take the
// answer past maxDiffAnswer come without them ("more": true); the page asks
// for one at a time (?file=PATH).
func (s *Server) diff(w http.ResponseWriter, r *http.Request, _ access) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	id := r.PathValue("id")
	var stat, patch bytes.Buffer
	statOut, patchOut := &limited{w: &stat, n: maxDiff}, &limited{w: &patch, n: maxDiff}
	if _, err := s.opt.Manager.Diff(ctx, id, statOut, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.StatOnly, Width: 100}}); err != nil && !statOut.cut {
		s.failed(w, err)
		return
	}
	if _, err := s.opt.Manager.Diff(ctx, id, patchOut, sessions.DiffRequest{}); err != nil && !patchOut.cut {
		s.failed(w, err)
		return
	}
	files := splitDiff(patch.String())
	if files == nil {
		files = []fileDiff{} // "files": [], for a change of none
	}
	if patchOut.cut && len(files) > 0 {
		files[len(files)-1].Cut = true // the one the bound cut short
	}
	if want := r.URL.Query().Get("file"); want != "" {
		for _, f := range files {
			if f.Path == want && !f.Cut {
				reply(w, f)
				return
			}
		}
		if patchOut.cut {
			// Past the cut, or cut by it: that file's diff alone.
			s.fileDiff(ctx, w, id, want)
			return
		}
		fail(w, http.StatusNotFound, "the change has no file "+want)
		return
	}
	budget := maxDiffAnswer
	for i := range files {
		if len(files[i].Patch) > budget {
			files[i].Patch, files[i].More = "", true
			continue
		}
		budget -= len(files[i].Patch)
	}
	reply(w, map[string]any{"stat": stat.String(), "files": files, "cut": patchOut.cut})
}

// fileDiff answers for one file of a change too large to read whole: its
// own diff, cut at the same bound.
func (s *Server) fileDiff(ctx context.Context, w http.ResponseWriter, id, path string) {
	var patch bytes.Buffer
	out := &limited{w: &patch, n: maxDiff}
	if _, err := s.opt.Manager.Diff(ctx, id, out, sessions.DiffRequest{Options: workspace.DiffOptions{Paths: []string{path}}}); err != nil && !out.cut {
		s.failed(w, err)
		return
	}
	for _, f := range splitDiff(patch.String()) {
		if f.Path == path {
			f.Cut = out.cut
			reply(w, f)
			return
		}
	}
	fail(w, http.StatusNotFound, "the change has no file "+path)
}

func (s *Server) ticket(w http.ResponseWriter, _ *http.Request, a access) {
	reply(w, map[string]any{"ticket": s.tickets.issue(a)})
}

func (s *Server) inject(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text      string `json:"text"`
		Interrupt bool   `json:"interrupt"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Text) == "" {
		fail(w, http.StatusBadRequest, "a follow-up needs its text")
		return
	}
	res, err := s.opt.Manager.InjectWith(r.Context(), r.PathValue("id"), body.Text, sessions.InjectOptions{Interrupt: body.Interrupt})
	if err != nil {
		s.failed(w, err)
		return
	}
	reply(w, map[string]any{"entry": res.Entry.ID, "session": toJSON(res.Session)})
}

func (s *Server) kill(w http.ResponseWriter, r *http.Request) {
	if !s.decode(w, r, &struct{}{}) {
		return
	}
	k, err := s.opt.Manager.KillReport(r.Context(), r.PathValue("id"), "killed from the web page (zwarm serve)")
	if err != nil {
		s.failed(w, err)
		return
	}
	reply(w, map[string]any{"session": toJSON(k.Session), "dropped": len(k.Dropped)})
}

// failed answers with what went wrong, classed as the commands' exit codes
// class it: no such session (404), a request that cannot be run as asked
// (400, the commands' 2), work that was refused or failed (409, their 1).
func (s *Server) failed(w http.ResponseWriter, err error) {
	code := codeOf(err)
	s.opt.Log.Info("web: request refused", "code", code, "err", err)
	fail(w, code, err.Error())
}

func codeOf(err error) int {
	var ce *config.Error
	var ae *sessions.AmbiguousError
	var ut *config.UntrustedError
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, config.ErrInvalidRequest), errors.Is(err, sessions.ErrInvalidID), errors.As(err, &ce), errors.As(err, &ae), errors.As(err, &ut):
		return http.StatusBadRequest
	}
	return http.StatusConflict
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// fieldsOf names the JSON fields of the struct v points to.
func fieldsOf(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
