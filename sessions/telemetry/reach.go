package telemetry

import (
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// reach says whether the collector takes connections, so that spans for a
// collector that refuses them are dropped before they are built: a
// collector that is down costs a run nothing but the drop. It dials the
// collector when the tracer opens and, while it is down, again at most
// every reprobe, in the background; a collector that never answers a dial
// counts as up (its exports time out instead, bounded as ever).
type reach struct {
	addr    string
	down    atomic.Bool
	probing atomic.Bool
	last    atomic.Int64 // unix nanoseconds of the last probe's start
	wg      sync.WaitGroup
}

const (
	reprobe      = 30 * time.Second
	probeTimeout = 2 * time.Second
)

// newReach probes the collector at rawURL, or returns nil for a URL it
// cannot name a host of.
func newReach(rawURL string) *reach {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	r := &reach{addr: addr}
	r.probe()
	return r
}

// up says spans may be built and sent; while the collector is down it
// starts a new probe once reprobe has passed.
func (r *reach) up() bool {
	if r == nil || !r.down.Load() {
		return true
	}
	if time.Since(time.Unix(0, r.last.Load())) > reprobe {
		r.probe()
	}
	return false
}

func (r *reach) probe() {
	if !r.probing.CompareAndSwap(false, true) {
		return
	}
	r.last.Store(time.Now().UnixNano())
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.probing.Store(false)
		c, err := net.DialTimeout("tcp", r.addr, probeTimeout)
		if err == nil {
			c.Close()
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			err = nil // no answer is not a refusal: let the export say
		}
		r.down.Store(err != nil)
	}()
}

// wait waits for a probe under way (Close: every goroutine is waited for).
func (r *reach) wait() {
	if r != nil {
		r.wg.Wait()
	}
}
