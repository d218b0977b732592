// Command fakeagent impersonates an agent CLI for supervision tests. It
// follows a script: print JSONL, write stderr, sleep, start grandchildren
// (one may escape with setsid), wait for a file, exit with a chosen code.
//
// The script is a JSON file named by FAKEAGENT_SCRIPT:
//
//	{"default": [STEP...], "by_prompt": {"PROMPT": [STEP...]}}
//
// Steps: {"out": LINE} prints LINE and a newline ($THREAD and $PROMPT are
// replaced); {"partial": TEXT} prints without a newline; {"err": TEXT} writes
// to stderr; {"sleep_ms": N}; {"spawn": SHELL, "setsid": BOOL} starts a
// grandchild; {"pidfile": PATH} with spawn records its pid; {"wait_file":
// PATH} waits until PATH exists; {"exit": N} exits.
//
// Steps also: {"ignore_sigterm": true}.
//
// A prompt of "-" is read from stdin, as codex does. Every run appends
// {"argv": [...], "cwd": DIR, "prompt": PROMPT} as one JSON line to
// FAKEAGENT_ARGS_LOG, if set.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type step struct {
	Out      *string `json:"out"`
	Partial  *string `json:"partial"`
	Err      *string `json:"err"`
	SleepMS  int     `json:"sleep_ms"`
	Spawn    string  `json:"spawn"`
	Setsid   bool    `json:"setsid"`
	PIDFile  string  `json:"pidfile"`
	WaitFile string  `json:"wait_file"`
	Exit     *int    `json:"exit"`
	// IgnoreTerm makes the agent ignore SIGTERM, so only SIGKILL stops it.
	IgnoreTerm bool `json:"ignore_sigterm"`
}

type script struct {
	Default  []step            `json:"default"`
	ByPrompt map[string][]step `json:"by_prompt"`
}

func main() {
	args := os.Args[1:]
	thread, prompt := "0199a213-81c0-7800-8aa1-bbab2a035a53", ""
	for i, a := range args {
		if a == "--" {
			rest := args[i+1:]
			if len(rest) == 2 {
				thread, prompt = rest[0], rest[1]
			} else if len(rest) == 1 {
				prompt = rest[0]
			}
		}
	}
	if prompt == "-" {
		// The prompt comes on stdin, as codex reads it given "-".
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeagent: read stdin:", err)
			os.Exit(95)
		}
		prompt = string(b)
	}
	if p := os.Getenv("FAKEAGENT_ARGS_LOG"); p != "" {
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
			cwd, _ := os.Getwd()
			b, _ := json.Marshal(map[string]any{"argv": args, "cwd": cwd, "prompt": prompt})
			f.Write(append(b, '\n'))
			f.Close()
		}
	}
	data, err := os.ReadFile(os.Getenv("FAKEAGENT_SCRIPT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent: no script:", err)
		os.Exit(97)
	}
	var sc script
	if err := json.Unmarshal(data, &sc); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent: bad script:", err)
		os.Exit(98)
	}
	steps, ok := sc.ByPrompt[prompt]
	if !ok {
		steps = sc.Default
	}
	subst := strings.NewReplacer("$THREAD", thread, "$PROMPT", strings.ReplaceAll(prompt, `"`, `\"`))
	for _, s := range steps {
		switch {
		case s.Out != nil:
			os.Stdout.WriteString(subst.Replace(*s.Out) + "\n")
		case s.Partial != nil:
			os.Stdout.WriteString(subst.Replace(*s.Partial))
		case s.Err != nil:
			os.Stderr.WriteString(*s.Err + "\n")
		case s.SleepMS > 0:
			time.Sleep(time.Duration(s.SleepMS) * time.Millisecond)
		case s.Spawn != "":
			cmd := exec.Command("/bin/sh", "-c", s.Spawn)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: s.Setsid}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "fakeagent: spawn:", err)
				os.Exit(96)
			}
			if s.PIDFile != "" {
				os.WriteFile(s.PIDFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
			}
		case s.WaitFile != "":
			for {
				if _, err := os.Stat(s.WaitFile); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		case s.IgnoreTerm:
			signal.Ignore(syscall.SIGTERM)
		case s.Exit != nil:
			os.Exit(*s.Exit)
		}
	}
}
