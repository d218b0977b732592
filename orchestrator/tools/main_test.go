package tools

import (
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
)

var bins *testenv.Bins

func TestMain(m *testing.M) { testenv.Main(m, &bins) }
