package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// bounded gives a request that carries a body the body timeout to send
// it, whether or not its handler reads it: one that never sends it (its
// answer a 401, say, after which the server would wait to read it out)
// holds its connection no longer. A GET's stream, with no body, has no
// read deadline, which would end it.
func (s *Server) bounded(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTimeout()))
		}
		h.ServeHTTP(w, r)
	})
}

// bodyTimeout is Options.BodyTimeout, 30 s by default.
func (s *Server) bodyTimeout() time.Duration {
	if s.opt.BodyTimeout > 0 {
		return s.opt.BodyTimeout
	}
	return 30 * time.Second
}

// readBody reads an action's whole body (maxBody at most, act bounds it)
// within the body timeout (bounded), answering for it when it cannot:
// 413 over maxBody, 408 too slow, and the connection is closed after.
// Once it is read, the connection's read deadline is lifted: an answer
// that streams for long (a landing's verify) must not end with it.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		http.NewResponseController(w).SetReadDeadline(time.Time{})
		return data, true
	}
	w.Header().Set("Connection", "close")
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is over %d bytes", tooBig.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		fail(w, http.StatusRequestTimeout, fmt.Sprintf("the request's body did not arrive within %s", s.bodyTimeout()))
	default:
		fail(w, http.StatusBadRequest, "the request's body could not be read: "+err.Error())
	}
	return nil, false
}

// decode reads an action's JSON body into v, answering for it (and
// returning false) when it cannot be. The body is one JSON object (none,
// or only spaces, is {}), with the fields v has, named exactly, each
// once, and nothing after it: a field the request does not take (a
// misspelt one, "TEXT", or one the CLI takes and the API does not) is
// refused, not ignored or taken for another, as the MCP tools refuse it.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	data, ok := s.readBody(w, r)
	if !ok {
		return false
	}
	if data = bytes.TrimSpace(data); len(data) == 0 {
		data = []byte("{}")
	}
	if data[0] != '{' {
		fail(w, http.StatusBadRequest, "the request's body is not one JSON object (it takes "+takes(v)+")")
		return false
	}
	err := jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
	var se *jsonv2.SemanticError
	switch {
	case err == nil:
		return true
	case errors.Is(err, jsonv2.ErrUnknownName) && errors.As(err, &se):
		fail(w, http.StatusBadRequest, fmt.Sprintf("the request has a field it does not take, %q: it takes %s",
			strings.TrimPrefix(string(se.JSONPointer), "/"), takes(v)))
	default:
		fail(w, http.StatusBadRequest, "the request's body is not one JSON object with the fields it takes ("+takes(v)+"): "+err.Error())
	}
	return false
}

// takes names the fields v takes, or says it takes none.
func takes(v any) string {
	if f := fieldsOf(v); len(f) > 0 {
		return strings.Join(f, ", ")
	}
	return "no field: send {} or nothing"
}
