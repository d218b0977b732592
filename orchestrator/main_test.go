package orchestrator

import (
	"os"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
)

var bins *testenv.Bins

func TestMain(m *testing.M) {
	if dir := os.Getenv(runHelperEnv); dir != "" {
		os.Exit(runHelper(dir))
	}
	testenv.Main(m, &bins)
}
