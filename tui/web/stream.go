package web

import (
	"context"
	"net/http"
	"time"
)

// writeWait is how long one event's write may take: a page that stops
// reading (a laptop asleep, a proxy that holds the connection) would
// otherwise hold its handler in the write for as long as the server runs,
// and Serve's shutdown waiting for it.
const writeWait = 30 * time.Second

// stream is an open event stream.
type stream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	stop func() bool
}

// startStream answers r with an event stream, its first comment written,
// or says it cannot (ok false, the answer sent). The request's end (the
// page gone, the server stopping) cuts short a write under way; close
// releases what that takes.
func startStream(w http.ResponseWriter, r *http.Request) (*stream, bool) {
	if _, ok := w.(http.Flusher); !ok {
		fail(w, http.StatusInternalServerError, "streaming unsupported")
		return nil, false
	}
	st := &stream{w: w, rc: http.NewResponseController(w)}
	st.stop = context.AfterFunc(r.Context(), func() { st.rc.SetWriteDeadline(time.Now()) })
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if err := st.send([]byte(": zwarm\n\n")); err != nil {
		st.close()
		return nil, false
	}
	return st, true
}

// send writes msg and flushes it, within writeWait.
func (st *stream) send(msg []byte) error {
	if err := st.rc.SetWriteDeadline(time.Now().Add(writeWait)); err != nil {
		return err
	}
	if _, err := st.w.Write(msg); err != nil {
		return err
	}
	return st.rc.Flush()
}

func (st *stream) close() { st.stop() }
