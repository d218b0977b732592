// Package fakeagent impersonates an agent CLI for supervision tests: a test
// binary serves Main (see testbin). It follows a script: print JSONL,
// write stderr, sleep, start grandchildren (one may escape with setsid),
// wait for a file, exit with a chosen code.
//
// The script is a JSON file named by FAKEAGENT_SCRIPT:
//
//	{"before": [STEP...], "default": [STEP...], "by_prompt": {"PROMPT": [STEP...]}, "live": BOOL}
//
// "before" runs first, before the prompt is read. Then, like codex, the
// prompt is the argument after "--" ("THREAD PROMPT" for a resume), read
// from stdin when it is "-". With "live", like claude with stream-json
// input, every stdin line is a user message ({"type":"user","message":
// {"content":[{"type":"text","text":...}]}}) run as the next turn, until
// end of input.
//
// Steps: {"out": LINE} prints LINE and a newline ($THREAD and $PROMPT are
// replaced); {"partial": TEXT} prints without a newline; {"out_bytes": N}
// prints N bytes of raw lines; {"line_bytes": N} prints one line of N
// bytes, its newline included, and {"partial_bytes": N} N bytes with no
// newline (never held whole here); {"out_lines": N} prints N short lines of
// codex events (reasoning, commands with output, messages); {"err": TEXT} writes to stderr;
// {"sleep_ms": N}; {"run": SHELL} runs a command to its end (the work an
// agent does); {"spawn": SHELL, "setsid": BOOL} starts a grandchild;
// {"pidfile": PATH} with spawn records its pid; {"wait_file": PATH} waits
// until PATH exists; {"ignore_sigterm": true}; {"exit": N} exits.
//
// Every prompt appends {"argv": [...], "cwd": DIR, "prompt": PROMPT} as one
// JSON line to FAKEAGENT_ARGS_LOG, if set.
package fakeagent

import (
	"bufio"
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
	Out          *string `json:"out"`
	Partial      *string `json:"partial"`
	OutBytes     int     `json:"out_bytes"`
	LineBytes    int64   `json:"line_bytes"`
	PartialBytes int64   `json:"partial_bytes"`
	OutLines     int     `json:"out_lines"`
	Err          *string `json:"err"`
	SleepMS      int     `json:"sleep_ms"`
	Spawn        string  `json:"spawn"`
	Run          string  `json:"run"`
	Setsid       bool    `json:"setsid"`
	PIDFile      string  `json:"pidfile"`
	WaitFile     string  `json:"wait_file"`
	Exit         *int    `json:"exit"`
	// IgnoreTerm makes the agent ignore SIGTERM, so only SIGKILL stops it.
	IgnoreTerm bool `json:"ignore_sigterm"`
}

type script struct {
	Before   []step            `json:"before"`
	Default  []step            `json:"default"`
	ByPrompt map[string][]step `json:"by_prompt"`
	Live     bool              `json:"live"`
}

// Main is the agent: args are its command line after its name; it exits
// the process itself when a step says so or the script is wrong.
func Main(args []string) int {
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
	data, err := os.ReadFile(os.Getenv("FAKEAGENT_SCRIPT"))
	if err != nil {
		fail(97, "no script: %v", err)
	}
	var sc script
	if err := json.Unmarshal(data, &sc); err != nil {
		fail(98, "bad script: %v", err)
	}
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	run(out, sc.Before, thread, "")
	if sc.Live {
		in := bufio.NewReaderSize(os.Stdin, 1<<20)
		for {
			line, err := in.ReadString('\n')
			if strings.TrimSpace(line) != "" {
				p := userText(line)
				logPrompt(args, p)
				run(out, steps(sc, p), thread, p)
			}
			if err != nil {
				return 0 // end of input: the session has nothing more to say
			}
		}
	}
	if prompt == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(95, "read stdin: %v", err)
		}
		prompt = string(b)
	}
	logPrompt(args, prompt)
	run(out, steps(sc, prompt), thread, prompt)
	return 0
}

func steps(sc script, prompt string) []step {
	if s, ok := sc.ByPrompt[prompt]; ok {
		return s
	}
	return sc.Default
}

// userText reads the text of a stream-json user message.
func userText(line string) string {
	var m struct {
		Message struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || len(m.Message.Content) == 0 {
		return strings.TrimSpace(line)
	}
	return m.Message.Content[0].Text
}

func logPrompt(args []string, prompt string) {
	p := os.Getenv("FAKEAGENT_ARGS_LOG")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	cwd, _ := os.Getwd()
	b, _ := json.Marshal(map[string]any{"argv": args, "cwd": cwd, "prompt": prompt})
	f.Write(append(b, '\n'))
}

func run(out *bufio.Writer, steps []step, thread, prompt string) {
	defer out.Flush()
	subst := strings.NewReplacer("$THREAD", thread, "$PROMPT", strings.ReplaceAll(prompt, `"`, `\"`))
	for _, s := range steps {
		switch {
		case s.Out != nil:
			out.WriteString(subst.Replace(*s.Out) + "\n")
			out.Flush()
		case s.Partial != nil:
			out.WriteString(subst.Replace(*s.Partial))
			out.Flush()
		case s.OutBytes > 0:
			line := `{"type":"noise","text":"` + strings.Repeat("x", 1000) + "\"}\n"
			for n := 0; n < s.OutBytes; n += len(line) {
				out.WriteString(line)
			}
			out.Flush()
		case s.LineBytes > 0:
			longLine(out, s.LineBytes, true)
		case s.PartialBytes > 0:
			longLine(out, s.PartialBytes, false)
		case s.OutLines > 0:
			codexLines(out, s.OutLines)
		case s.Err != nil:
			os.Stderr.WriteString(*s.Err + "\n")
		case s.SleepMS > 0:
			time.Sleep(time.Duration(s.SleepMS) * time.Millisecond)
		case s.Run != "":
			if err := exec.Command("/bin/sh", "-c", s.Run).Run(); err != nil {
				fail(94, "run: %v", err)
			}
		case s.Spawn != "":
			cmd := exec.Command("/bin/sh", "-c", s.Spawn)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: s.Setsid}
			if err := cmd.Start(); err != nil {
				fail(96, "spawn: %v", err)
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
			out.Flush()
			os.Exit(*s.Exit)
		}
	}
}

func fail(code int, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "fakeagent: "+format+"\n", a...)
	os.Exit(code)
}

// longLine prints a noise event of n bytes (a newline ends it when nl is
// set), a piece at a time.
func longLine(out *bufio.Writer, n int64, nl bool) {
	head, tail := `{"type":"noise","text":"`, "\"}"
	if nl {
		tail += "\n"
	}
	out.WriteString(head)
	piece := []byte(strings.Repeat("x", 64<<10))
	for left := n - int64(len(head)+len(tail)); left > 0; {
		k := min(left, int64(len(piece)))
		out.Write(piece[:k])
		left -= k
	}
	out.WriteString(tail)
	out.Flush()
}

// codexLines prints n lines of what codex prints while it works, each
// under 300 bytes: reasoning, a command started and completed with its
// output, a message.
func codexLines(out *bufio.Writer, n int) {
	for i := range n {
		id := i / 4
		switch i % 4 {
		case 0:
			fmt.Fprintf(out, `{"type":"item.completed","item":{"id":"item_%d","type":"reasoning","text":"**Checking step %d** of the retry loop before changing it"}}`+"\n", id, i)
		case 1:
			fmt.Fprintf(out, `{"type":"item.started","item":{"id":"item_%d","type":"command_execution","command":"/bin/bash -lc 'go test ./settle'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`+"\n", id)
		case 2:
			fmt.Fprintf(out, `{"type":"item.completed","item":{"id":"item_%d","type":"command_execution","command":"/bin/bash -lc 'go test ./settle'","aggregated_output":"ok  \tgithub.com/acme/payments/settle\t0.012s\n","exit_code":0,"status":"completed"}}`+"\n", id)
		case 3:
			fmt.Fprintf(out, `{"type":"item.completed","item":{"id":"item_%d","type":"agent_message","text":"Step %d done; the tests pass."}}`+"\n", id, i)
		}
	}
	out.Flush()
}
