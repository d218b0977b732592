package orchestrator

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The example in .zwarm-example loads, and says the defaults.
func TestExampleConfigLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", ".zwarm-example", "orchestrator.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(t, string(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	def.AllowedDirs = []string{}
	def.ContextWindow = DefaultContextWindow
	c.ContextWindows = nil
	if !reflect.DeepEqual(c, def) {
		t.Errorf("the example's values are not the defaults:\n%+v\n%+v", c, def)
	}
}
