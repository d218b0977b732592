package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

// The table that lets a command line make only its command names each
// command as the command itself does, and holds every command.
func TestTheCommandTableNamesEachCommand(t *testing.T) {
	f := &factory{io: &cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}}
	for _, c := range commandTable {
		made := c.make(f)
		if want := append([]string{made.Name()}, made.Aliases...); !slices.Equal(c.names, want) {
			t.Errorf("the table names %v, the command %v", c.names, want)
		}
	}
	root := newRootCmd(f)
	for _, sub := range root.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		if commandNamed(sub.Name()) == nil {
			t.Errorf("%s is not in the table", sub.Name())
		}
	}
	// A line that starts with a command's name makes that command alone;
	// any other line, the whole tree.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"diff", "--stat", "3f2a"}, []string{"diff"}},
		{[]string{"list", "-L", "3"}, []string{"ls"}},
		{[]string{"continue", "3f2a", "go on"}, []string{"inject"}},
	} {
		var got []string
		for _, sub := range newRootCmdFor(f, tc.args).Commands() {
			got = append(got, sub.Name())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v made %v, want %v", tc.args, got, tc.want)
		}
	}
	all := len(root.Commands())
	for _, args := range [][]string{nil, {"help", "diff"}, {"--state-dir", "x", "diff"}, {"__complete", "di"}, {"completion", "bash"}, {"dif"}} {
		if n := len(newRootCmdFor(f, args).Commands()); n != all {
			t.Errorf("%v made %d commands, want all %d", args, n, all)
		}
	}
}
