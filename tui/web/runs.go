package web

import (
	"errors"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// runJSON is a run as the page shows it: with its workers' ids, which the
// page lists under it, and the question it waits on.
type runJSON struct {
	ID      string   `json:"id"`
	Short   string   `json:"short"`
	Task    string   `json:"task"`
	Status  string   `json:"status"`
	Model   string   `json:"model"`
	Steps   int      `json:"steps"`
	Tokens  int64    `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
	// As zwarm runs shows them.
	TokensText string         `json:"tokens_text"`
	CostText   string         `json:"cost_text"`
	Workers    []string       `json:"workers"`
	Question   *runs.Question `json:"question"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

func toRunJSON(r *runs.Record) runJSON {
	out := runJSON{ID: r.ID, Short: record.ShortID(r.ID), Task: r.Task, Status: string(r.Status), Model: r.Model, Steps: r.Steps,
		Tokens: r.TotalTokens(), Workers: r.Workers, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		TokensText: render.Tokens(r.TotalTokens())}
	c, known := r.TotalCost()
	out.CostText = render.LaterCost(r.CostNotYet(), c, known)
	if c, known := r.TotalCost(); known {
		out.CostUSD = &c
	}
	if r.Status == runs.StatusWaiting {
		out.Question = r.Question
	}
	if out.Workers == nil {
		out.Workers = []string{}
	}
	return out
}

func (s *Server) runsAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/runs", s.look(s.runList))
	mux.HandleFunc("GET /api/runs/{id}", s.look(s.run))
	mux.HandleFunc("GET /api/runs/{id}/story", s.runStory)
	mux.HandleFunc("POST /api/runs/{id}/say", s.act(s.say))
	mux.HandleFunc("POST /api/runs/{id}/answer", s.act(s.answer))
}

func (s *Server) stateDir() string { return s.opt.Manager.Store().Dir() }

// runList is every run that can be read, and, when some cannot, why:
// one broken record must not hide the others (runs lists them too, and
// warns).
func (s *Server) runList(w http.ResponseWriter, _ *http.Request, _ access) {
	list, err := runs.ListRuns(s.stateDir())
	if err != nil && list == nil && !errors.Is(err, fs.ErrNotExist) {
		s.failed(w, err)
		return
	}
	sort.Slice(list, func(i, j int) bool { return list[i].CreatedAt.After(list[j].CreatedAt) })
	out := make([]runJSON, len(list))
	for i, r := range list {
		out[i] = toRunJSON(r)
	}
	body := map[string]any{"runs": out}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		body["unreadable"] = err.Error()
	}
	reply(w, body)
}

// run is a run and its story, as runs show prints it.
func (s *Server) run(w http.ResponseWriter, r *http.Request, a access) {
	rec, err := runs.LoadRecord(s.stateDir(), r.PathValue("id"))
	if err != nil {
		fail(w, runCode(err), err.Error())
		return
	}
	events, err := runs.ReadEvents(s.stateDir(), rec.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.failed(w, err)
		return
	}
	rd := orchestrator.Renderer{MaxSteps: rec.Limits.MaxSteps}
	lines := storyLines(&rd, events)
	reply(w, map[string]any{"run": toRunJSON(rec), "lines": lines, "can_act": a == full})
}

// runCode is the HTTP status of a run that could not be read: 404 for
// none, 400 for what names none, 500 for a record that cannot be read.
func runCode(err error) int {
	switch {
	case errors.Is(err, runs.ErrNoRun):
		return http.StatusNotFound
	case errors.Is(err, runs.ErrRunID):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func (s *Server) runMessage(w http.ResponseWriter, r *http.Request) (*runs.Record, string, bool) {
	var body struct {
		Text string `json:"text"`
	}
	if !s.decode(w, r, &body) {
		return nil, "", false
	}
	if strings.TrimSpace(body.Text) == "" {
		fail(w, http.StatusBadRequest, "a message needs its text")
		return nil, "", false
	}
	if len(body.Text) > runs.MaxMessageBytes {
		fail(w, http.StatusBadRequest, "the message is too long")
		return nil, "", false
	}
	rec, err := runs.LoadRecord(s.stateDir(), r.PathValue("id"))
	if err != nil {
		fail(w, runCode(err), err.Error())
		return nil, "", false
	}
	return rec, body.Text, true
}

// say gives a run's model a message (zwarm runs say).
func (s *Server) say(w http.ResponseWriter, r *http.Request) {
	rec, text, ok := s.runMessage(w, r)
	if !ok {
		return
	}
	e, err := runs.Send(r.Context(), runs.RunDir(s.stateDir(), rec.ID), runs.MessageSay, text, "")
	if err != nil {
		s.failed(w, err)
		return
	}
	reply(w, map[string]any{"seq": e.Seq, "status": rec.Status})
}

// answer answers the question a run waits on (zwarm runs answer): the
// text, or the number of one of its options.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	rec, text, ok := s.runMessage(w, r)
	if !ok {
		return
	}
	if rec.Status != runs.StatusWaiting || rec.Question == nil {
		// As runs answer exits 2 for it: the request names no question.
		fail(w, http.StatusBadRequest, "run "+record.ShortID(rec.ID)+" is "+string(rec.Status)+" and asks nothing")
		return
	}
	q := *rec.Question
	text, _, err := q.Pick(text)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	e, err := runs.Send(r.Context(), runs.RunDir(s.stateDir(), rec.ID), runs.MessageAnswer, text, q.ID)
	if err != nil {
		s.failed(w, err)
		return
	}
	reply(w, map[string]any{"seq": e.Seq})
}
