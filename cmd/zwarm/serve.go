package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/tui/web"
)

type serveOptions struct {
	f               *factory
	addr            string
	token           string
	readOnly        bool
	open            bool
	tlsCert, tlsKey string
	insecure        bool
}

func newServeCmd(f *factory) *cobra.Command {
	o := &serveOptions{f: f}
	c := &cobra.Command{
		Use:   "serve",
		Short: "The swarm in a browser: sessions, their stories and diffs, live, with follow-ups and kills",
		Long: `serve shows the state dir's runs and sessions in a browser, live as they
change: the lists as the dashboard has them, a session's story (turns,
commands with their output, messages, its worktree and landing), its diff,
a run's story call by call, and the actions the commands have (spawn, a
follow-up, a kill, a landing with a verify command, saying to a run and
answering it), each through the same calls the commands make.

Every request needs a token, sent in a header: serve prints a link that
carries it in the URL's fragment, which never reaches a server or its log.
The token is random unless --token (or ZWARM_SERVE_TOKEN) gives one.
--read-only-token prints a second link whose token can look but not act.

serve listens on the loopback only unless --addr says otherwise; another
address needs TLS (--tls-cert and --tls-key) or an explicit --insecure, as
the token would otherwise cross the network in the clear. To reach it from
another machine, an SSH tunnel keeps it on the loopback:
ssh -L 7777:127.0.0.1:7777 buildbox, then open the link there.`,
		Example: `  zwarm serve
  zwarm serve --read-only-token
  zwarm serve --addr 0.0.0.0:7777 --tls-cert cert.pem --tls-key key.pem`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runServe(c, o) },
	}
	fl := c.Flags()
	fl.StringVar(&o.addr, "addr", "127.0.0.1:7777", "where to listen (host:port)")
	fl.StringVar(&o.token, "token", "", "the full token (default: $ZWARM_SERVE_TOKEN, else a random one)")
	fl.BoolVar(&o.readOnly, "read-only-token", false, "also make a token that can look but not act, and print its link")
	fl.BoolVar(&o.open, "open", false, "open the page in a browser, where there is one")
	fl.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	fl.StringVar(&o.tlsKey, "tls-key", "", "the certificate's key (PEM)")
	fl.BoolVar(&o.insecure, "insecure", false, "allow plain HTTP on an address other than the loopback")
	return c
}

func runServe(c *cobra.Command, o *serveOptions) error {
	tlsOn, err := o.checkAddr()
	if err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	log, closeLog, err := fileLogger(m.Store().Dir())
	if err != nil {
		return err
	}
	defer closeLog()
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	opt := web.Options{Manager: m, Dir: dir, Token: cmp.Or(o.token, os.Getenv("ZWARM_SERVE_TOKEN"), web.NewToken()), Log: log}
	if o.readOnly {
		opt.ReadOnlyToken = web.NewToken()
	}
	srv, err := web.New(opt)
	if err != nil {
		return err
	}
	var wrap func(net.Listener) net.Listener
	if tlsOn {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return cli.Usagef("--tls-cert/--tls-key: %v", err)
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		wrap = func(ln net.Listener) net.Listener { return tls.NewListener(ln, cfg) }
	}
	ln, err := net.Listen("tcp", o.addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		// The command line is right; the port is taken (exit 1).
		return fmt.Errorf("cannot listen on %s: another program listens there (choose another port with --addr)", o.addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("cannot listen on %s: %v (a port below 1024 needs privileges: choose a higher one with --addr)", o.addr, err)
	case err != nil:
		return cli.Usagef("cannot listen on %s: %v", o.addr, err)
	}
	base := pageURL(ln.Addr().String(), o.addr, tlsOn)
	io := o.f.io
	fmt.Fprintln(io.Out, web.Link(base, opt.Token))
	if opt.ReadOnlyToken != "" {
		fmt.Fprintf(io.Out, "%s   (read-only)\n", web.Link(base, opt.ReadOnlyToken))
	}
	if o.open {
		if err := openBrowser(web.Link(base, opt.Token)); err != nil {
			fmt.Fprintf(io.ErrOut, "--open: %v; open the link above yourself\n", err)
		}
	}
	err = srv.Serve(c.Context(), ln, wrap)
	if errors.Is(c.Context().Err(), context.Canceled) {
		return context.Canceled
	}
	return err
}

// checkAddr refuses a plain-HTTP address that is not the loopback unless
// asked to with --insecure; it says whether TLS is on.
func (o *serveOptions) checkAddr() (tlsOn bool, err error) {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return false, cli.Usagef("--addr %q: %v (want host:port, such as 127.0.0.1:7777)", o.addr, err)
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return false, cli.Usagef("--tls-cert and --tls-key go together")
	}
	tlsOn = o.tlsCert != ""
	if !tlsOn && !o.insecure && !loopback(host) {
		return false, cli.Usagef("refusing plain HTTP on %s: the token would cross the network in the clear. Give --tls-cert and --tls-key, "+
			"or keep the default loopback address and reach it through an SSH tunnel, or say --insecure on a network you trust", o.addr)
	}
	return tlsOn, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pageURL is the base of the page's link: the asked-for host (a name
// people type), with the port the listener got.
func pageURL(bound, asked string, tlsOn bool) string {
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	host, _, _ := net.SplitHostPort(asked)
	_, port, _ := net.SplitHostPort(bound)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// openBrowser hands url to the desktop's opener (xdg-open, or open on a
// Mac); it says why it could not.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("no %s here to open a browser with", name)
	}
	cmd := exec.Command(path, url)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	go cmd.Wait() // reaped whenever the opener exits; serve does not wait for it
	return nil
}
