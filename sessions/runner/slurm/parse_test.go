package slurm

import "testing"

func TestParseJobID(t *testing.T) {
	for out, want := range map[string]string{"42\n": "42", "42;cluster\n": "42", " 7 ": "7"} {
		if got, err := parseJobID(out); err != nil || got != want {
			t.Errorf("parseJobID(%q) = %q, %v; want %q", out, got, err, want)
		}
	}
	for _, out := range []string{"", "Submitted batch job 42", "4x2"} {
		if got, err := parseJobID(out); err == nil {
			t.Errorf("parseJobID(%q) = %q, want an error", out, got)
		}
	}
}

func TestClock(t *testing.T) {
	for in, want := range map[string]string{
		"1:00": "00:01:00", "30:00": "00:30:00", "2:03:04": "02:03:04",
		"1-00:00:00": "24:00:00", "UNLIMITED": "UNLIMITED", "": "",
	} {
		if got := clock(in); got != want {
			t.Errorf("clock(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExitCode(t *testing.T) {
	for in, want := range map[string]string{"0": "0:0", "768": "3:0", "9": "0:9", "15": "0:15", "N/A": ""} {
		if got := exitCode(in); got != want {
			t.Errorf("exitCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseState(t *testing.T) {
	s, err := parseState("12|TIMEOUT|TimeLimit|vm|1:00|1:01|15|/s/slurm-%j.out|zwarm-a|b c|")
	if err != nil {
		t.Fatal(err)
	}
	want := State{ID: "12", State: "TIMEOUT", Reason: "TimeLimit", Nodes: "vm", TimeLimit: "1:00", TimeUsed: "1:01", ExitCode: "0:15", Name: "zwarm-a|b c", StdOut: "/s/slurm-%j.out"}
	if s != want || !s.Terminal() || s.Why() != "time limit 00:01:00" || s.Output() != "/s/slurm-12.out" {
		t.Fatalf("parseState: %+v (why %q)", s, s.Why())
	}
	if _, err := parseState("12|RUNNING|None|vm|1:00|0:01"); err == nil {
		t.Fatal("parseState took a short line")
	}
}
