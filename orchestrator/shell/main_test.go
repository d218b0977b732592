package shell

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the shells the tests start a home of their own: the
// machine's dotfiles may run slow set-up (a version manager's shims) that
// a shell killed halfway, as these tests do, leaves locked for every later
// shell on the machine.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "zwarm-shell-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
