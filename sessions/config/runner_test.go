package config

import (
	"strings"
	"testing"
)

type testRunnerSettings struct {
	Partition string   `toml:"partition"`
	Poll      Duration `toml:"poll"`
}

func testRunnerSection() Section {
	return Section{Name: RunnerSection("slurm"), New: func() any { return &testRunnerSettings{} }, Keys: "partition, poll"}
}

// [runner] kind and a runner's own table decode into what the runner
// declared; a kind no runner has, a table of an unknown runner and an
// unknown key in a runner's table are errors that say what is known.
func TestRunnerConfig(t *testing.T) {
	dir := writeConfig(t, `
[runner]
kind = "slurm"
[runner.slurm]
partition = "cpu"
poll = "3s"
`)
	c, err := Load(dir, testRunnerSection())
	if err != nil {
		t.Fatal(err)
	}
	set := c.Section("runner.slurm").(*testRunnerSettings)
	if c.Runner.Kind != "slurm" || set.Partition != "cpu" || set.Poll.Seconds() != 3 {
		t.Fatalf("kind %q, settings %+v", c.Runner.Kind, set)
	}
	if c, err := Load(writeConfig(t, "")); err != nil || c.Runner.Kind != "" {
		t.Fatalf("no [runner]: kind %q, %v", c.Runner.Kind, err)
	}
	for body, want := range map[string]string{
		"[runner]\nkind = \"k8s\"\n":                      `kind "k8s" is not a runner (known: local, slurm)`,
		"[runner.k8s]\nnamespace = \"x\"\n":               "unknown key runner.k8s (known: [runner] kind, [runner.slurm])",
		"[runner.slurm]\npartitoin = \"cpu\"\n":           "unknown key runner.slurm.partitoin (known: [runner] kind, [runner.slurm] partition, poll)",
		"[runner]\nkind = \"slurm\"\nflavour = \"x\"\n":   "unknown key runner.flavour",
		"[runner.slurm]\npoll = \"often\"\n":              "runner.slurm",
		"[runner]\nkind = \"local\"\n[runner.slurm]\n":    "",
		"[runner]\nkind = \"local\"\n[runner.slurm]\nx=1": "unknown key runner.slurm.x",
	} {
		_, err := Load(writeConfig(t, body), testRunnerSection())
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want an error containing %q", body, err, want)
		}
	}
}
