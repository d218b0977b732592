package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// The root's --version prints versionString through its template, so that
// reading the build's information (every dependency it lists) is done
// only when it is asked for, not at every start.
func init() { cobra.AddTemplateFunc("zwarmVersion", versionString) }

// versionString says which zwarm this is, from what the Go toolchain
// recorded in the binary: the module version (a tag, a pseudo-version, or
// "(devel)"), the VCS revision and whether the tree had local changes.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	parts := []string{v}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		r := "revision " + rev
		if at != "" {
			r += " of " + strings.SplitN(at, "T", 2)[0]
		}
		if modified {
			r += " with local changes"
		}
		parts = append(parts, r)
	}
	parts = append(parts, fmt.Sprintf("%s %s/%s", bi.GoVersion, runtime.GOOS, runtime.GOARCH))
	return strings.Join(parts, ", ")
}

func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print zwarm's version and the revision it was built from",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.io.Out, "zwarm %s\n", versionString())
			return err
		},
	}
}
