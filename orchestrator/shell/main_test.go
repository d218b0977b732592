package shell

import (
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
)

// TestMain gives the shells the tests start a home of their own.
func TestMain(m *testing.M) { testenv.HomeMain(m) }
