package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// access is what a request's token allows.
type access int

const (
	denied access = iota
	readOnly
	full
)

// Link is the page at base with tok in its fragment (never sent to the
// server, and taken out of the address bar by the page), escaped whole so
// that a token of any characters (serve --token) reads back as it is: the
// page decodes it with decodeURIComponent, which takes no + for a space.
func Link(base, tok string) string {
	return base + "/#token=" + strings.ReplaceAll(url.QueryEscape(tok), "+", "%20")
}

// NewToken is a random token, 128 bits in hex.
func NewToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// accessOf is what the request's bearer token allows.
func (s *Server) accessOf(r *http.Request) access {
	// The scheme's case is the client's (RFC 9110): "bearer" is "Bearer".
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return denied
	}
	return s.tokenAccess(tok)
}

func (s *Server) tokenAccess(tok string) access {
	switch {
	case subtle.ConstantTimeCompare([]byte(tok), []byte(s.opt.Token)) == 1:
		return full
	case s.opt.ReadOnlyToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.opt.ReadOnlyToken)) == 1:
		return readOnly
	}
	return denied
}

// sameOrigin says a request that changes something comes from the page
// itself: its Origin, when a browser sent one, names the host the
// browser asked for, as the request's Host (or a proxy's
// X-Forwarded-Host) says it. The scheme is not compared: behind a
// proxy that ends TLS the page is https and the request reaching zwarm
// plain http. Requests from other programs (no Origin) pass on their
// token alone.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return r.Header.Get("Sec-Fetch-Site") == "" || r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || o != u.Scheme+"://"+u.Host {
		return false // "null", or not an origin at all
	}
	for _, host := range []string{r.Host, r.Header.Get("X-Forwarded-Host")} {
		if host != "" && strings.EqualFold(u.Host, host) {
			return true
		}
	}
	return false
}

// tickets are the single-use passes to the event stream.
type tickets struct {
	mu   sync.Mutex
	live map[string]ticket
}

type ticket struct {
	access  access
	expires time.Time
}

// ticketLife is how long a ticket may wait to be used.
const ticketLife = 30 * time.Second

func (t *tickets) issue(a access) string {
	id := NewToken()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		t.live = map[string]ticket{}
	}
	now := time.Now()
	for k, v := range t.live {
		if now.After(v.expires) {
			delete(t.live, k)
		}
	}
	t.live[id] = ticket{access: a, expires: now.Add(ticketLife)}
	return id
}

// use spends a ticket: what it allows, denied for one unknown, spent or
// expired.
func (t *tickets) use(id string) access {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.live[id]
	delete(t.live, id)
	if !ok || time.Now().After(v.expires) {
		return denied
	}
	return v.access
}
