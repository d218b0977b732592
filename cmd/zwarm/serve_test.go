package main

import (
	"strings"
	"testing"
)

// serve refuses what would put its token on the network in the clear, and
// a command line it cannot run, before it listens.
func TestServeRefusesPlainHTTPOffTheLoopback(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, "refusing plain HTTP on 0.0.0.0:0"},
		{[]string{"serve", "--addr", "192.0.2.1:7777"}, "--tls-cert and --tls-key"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "--addr", "nope"}, "want host:port"},
	} {
		r := w.bin(tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
