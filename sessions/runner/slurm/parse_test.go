package slurm

import (
	"testing"

	"github.com/zwarm/zwarm/sessions/runner"
)

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

// sacct's answer as slurmdbd gives it: an ended job with its steps, and a
// job the controller has ended but not yet told the database of, which is
// not its account yet.
func TestParseAccounting(t *testing.T) {
	text := "12|vm|9|||COMPLETED|1\n12.batch|vm|9|170815488||COMPLETED|1\n12.extern|vm|9|1024K|0:0|COMPLETED|1\n" +
		"13|vm|8||0:0|RUNNING|1\n13.batch|vm|8|90M||RUNNING|1\n" +
		"14|vm|3||0:15|CANCELLED by 1000|2\n"
	got := parseAccounting(text, map[string]runner.Account{})
	if len(got) != 2 {
		t.Fatalf("accounts %+v; want jobs 12 and 14 only", got)
	}
	if a := got["12"]; a.Node != "vm" || a.Elapsed != 9 || a.MaxRSS != 170815488 || a.State != "COMPLETED" || a.CPUs != 1 {
		t.Errorf("job 12: %+v", a)
	}
	if a := got["14"]; a.State != "CANCELLED" || a.ExitCode != "0:15" || a.CPUs != 2 {
		t.Errorf("job 14: %+v", a)
	}
}
