package orchestrator

import (
	"fmt"
	"os"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
)

var bins *testenv.Bins

func TestMain(m *testing.M) {
	if dir := os.Getenv(runHelperEnv); dir != "" {
		os.Exit(runHelper(dir))
	}
	var err error
	if bins, err = testenv.Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	bins.Close()
	os.Exit(code)
}
