package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// zwarm's identity on the commits it makes itself.
const (
	zwarmName  = "zwarm"
	zwarmEmail = "zwarm@localhost"
)

// ErrNoGit is returned (wrapped) when the git binary cannot be found.
var ErrNoGit = errors.New("git not found")

// GitError is a git command that failed: Stderr is what git said.
type GitError struct {
	Args   []string
	Code   int
	Stderr string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Code)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// ExitCode is git's exit status, for commands whose status is an answer
// (merge-tree exits 1 on a conflict, diff --quiet 1 on a difference).
func exitCodeOf(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.Code
	}
	return -1
}

// git is one git invocation: where it runs, what it reads and writes,
// and whether it may change the repository.
type git struct {
	dir    string
	env    []string // added to the cleaned environment
	stdin  io.Reader
	stdout io.Writer // nil: collected and returned
	// writes marks commands that change the repository: the user's hooks
	// and automatic maintenance are switched off for them.
	writes bool
	// zwarm makes the commit: zwarm's identity, never signed.
	zwarm bool
	// config is more of git's -c options, "key=value" each.
	config []string
	// whole runs git to its end whatever befalls zwarm: in a process
	// group of its own (a Ctrl+C at the terminal is zwarm's, not its),
	// not stopped when ctx ends, nor when zwarm dies. For a checkout of
	// your files, which git stopped midway would leave half written.
	whole bool
	// left, when set, gives the lock files a write may find that a
	// killed git left (leftlock.go): one that is a leftover is removed,
	// and the write run once more. Asked only when a write fails.
	left func() leftLocks
}

// redirecting are the variables with which a caller's environment (a git
// hook that runs zwarm, say) would point git at another repository,
// work tree or index than the one zwarm names.
var redirecting = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_QUARANTINE_PATH", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
	"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS"}

func cleanEnv(extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+4)
outer:
	for _, kv := range os.Environ() {
		for _, k := range redirecting {
			if strings.HasPrefix(kv, k+"=") {
				continue outer
			}
		}
		env = append(env, kv)
	}
	// Never wait for a person: no editor, no credential prompt.
	env = append(env, "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	return append(env, extra...)
}

// zwarmIdentity is the author and committer of zwarm's own commits.
var zwarmIdentity = []string{"GIT_AUTHOR_NAME=" + zwarmName, "GIT_AUTHOR_EMAIL=" + zwarmEmail,
	"GIT_COMMITTER_NAME=" + zwarmName, "GIT_COMMITTER_EMAIL=" + zwarmEmail}

// writeConfig switches off what a write would otherwise run on the
// user's behalf: hooks, automatic gc and maintenance (which may fork into
// the background), and for zwarm's commits, signing.
var writeConfig = []string{"-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "maintenance.auto=false"}

// alwaysConfig applies to every command: an fsmonitor is a program git
// runs, named by config a worker may be able to write.
var alwaysConfig = []string{"-c", "core.fsmonitor=false"}

// judgeSubmodulesByCommit has git's status and diffs judge a submodule by
// the commit it is at, never by its files: to tell whether those changed,
// git runs a status inside it, with that repository's own config and
// attributes (a clean filter, an fsmonitor), as you and outside any
// sandbox, and a worker may have made it (git init, then git add, in its
// worktree). The option, not diff.ignoreSubmodules, whose value a
// .gitmodules the worker writes would override.
func judgeSubmodulesByCommit(args []string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "-c" {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	switch args[i] {
	case "status", "diff", "diff-files", "diff-index":
		out := make([]string, 0, len(args)+1)
		out = append(append(append(out, args[:i+1]...), "--ignore-submodules=dirty"), args[i+1:]...)
		return out
	}
	return args
}

// run runs git and returns its stdout (unless g.stdout takes it).
func (g git) run(ctx context.Context, args ...string) (string, error) {
	path, err := gitPath()
	if err != nil {
		return "", fmt.Errorf("%w: install git (zwarm runs workers in git worktrees) or spawn with --in-place", ErrNoGit)
	}
	full := make([]string, 0, len(args)+12)
	full = append(full, alwaysConfig...)
	if g.writes {
		full = append(full, writeConfig...)
	}
	if g.zwarm {
		full = append(full, "-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false")
	}
	for _, c := range g.config {
		full = append(full, "-c", c)
	}
	full = append(full, judgeSubmodulesByCommit(args)...)
	out, err := g.exec(ctx, path, full, args)
	if err == nil || !g.writes || g.left == nil || ctx.Err() != nil {
		return out, err
	}
	// Each lock a killed git left is met in turn (HEAD's, then its
	// branch's): one more try for each.
	left := g.left()
	for range left.paths {
		var again bool
		if again, err = left.clear(ctx, err); !again || !rewind(g.stdin) {
			break
		}
		if out, err = g.exec(ctx, path, full, args); err == nil || ctx.Err() != nil {
			break
		}
	}
	return out, err
}

// exec runs git once, with full its whole command line (args what an
// error names).
func (g git) exec(ctx context.Context, path string, full, args []string) (string, error) {
	if g.whole {
		ctx = context.WithoutCancel(ctx)
	}
	cmd := exec.CommandContext(ctx, path, full...)
	cmd.Dir = g.dir
	env := g.env
	if g.zwarm {
		env = append(append([]string(nil), env...), zwarmIdentity...)
	}
	cmd.Env = cleanEnv(env)
	cmd.Stdin = g.stdin
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	if g.stdout != nil {
		cmd.Stdout = g.stdout
	}
	cmd.Stderr = &stderr
	// A cancelled command gets SIGTERM first: git removes its lock files
	// on it. One whose zwarm dies (a supervisor killed during the turn's
	// commit) is killed outright: nothing is left to wait for it, and a
	// git given SIGTERM can spin in its handler forever (git 2.39, seen
	// when the signal came as it set the handler up). A lock it leaves
	// is removed by the next write there (leftlock.go).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if g.whole {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), &GitError{Args: args, Code: ee.ExitCode(), Stderr: stderr.String()}
		}
		forgetGit(path) // gone since it was found, perhaps: looked for again next time
		if g.dir != "" {
			// A missing directory reads as a missing git ("fork/exec
			// /usr/bin/git: no such file or directory"). Looked at only
			// now: a stat before each git would cost every one of them.
			if _, serr := os.Stat(g.dir); serr != nil {
				return "", fmt.Errorf("git %s: %s is gone: %w", strings.Join(args, " "), g.dir, errors.Unwrap(serr))
			}
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// unjudged is g for a write that runs while other gits of zwarm's do: a
// lock file it runs into is not judged then (leftlock.go), as those gits
// would look like a git at work on it. Should the write fail, the caller
// runs it again as g once they are done, and the lock is judged then.
func (g git) unjudged() git {
	g.left = nil
	return g
}

// line runs git and returns the first line of its output.
func (g git) line(ctx context.Context, args ...string) (string, error) {
	out, err := g.run(ctx, args...)
	if err != nil {
		return "", err
	}
	l, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(l), nil
}

// splitZ splits NUL-separated output, dropping the empty tail.
func splitZ(s string) []string {
	s = strings.TrimSuffix(s, "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// MinGitVersion is the oldest git zwarm lands with: git merge-tree
// --write-tree (the conflict check that changes nothing) came in 2.38.
const MinGitVersion = "2.38"

// GitVersion returns git's version ("2.39.5"), and an error if git is
// missing or older than MinGitVersion.
func GitVersion(ctx context.Context) (string, error) {
	out, err := git{}.line(ctx, "version")
	if err != nil {
		return "", err
	}
	v := strings.TrimPrefix(out, "git version ")
	if f := strings.Fields(v); len(f) > 0 {
		v = f[0]
	}
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		return v, fmt.Errorf("git version %q: cannot tell if it is %s or newer", v, MinGitVersion)
	}
	if major < 2 || major == 2 && minor < 38 {
		return v, fmt.Errorf("git %s is older than %s, which zwarm needs to land workers' changes (git merge-tree --write-tree)", v, MinGitVersion)
	}
	return v, nil
}

// Short is a commit as zwarm shows it to people: 8 hex digits, as long as
// a session's short id.
func Short(commit string) string { return prefix(commit, 8) }

// Abbrev is a commit as a model or a log reads it, to name it back: 12
// hex digits, which stay unique in a large repository.
func Abbrev(commit string) string { return prefix(commit, 12) }

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// gitPath is where git is, as exec.LookPath finds it: looked up once for
// each PATH, not for each git (a lookup stats the PATH's directories in
// turn until it meets git).
func gitPath() (string, error) {
	p := os.Getenv("PATH")
	gitFound.Lock()
	defer gitFound.Unlock()
	if gitFound.path != "" && gitFound.in == p {
		return gitFound.path, nil
	}
	path, err := exec.LookPath("git")
	if err == nil {
		gitFound.path, gitFound.in = path, p
	}
	return path, err
}

// forgetGit drops path as git's, so that the next git is looked up in
// PATH again.
func forgetGit(path string) {
	gitFound.Lock()
	defer gitFound.Unlock()
	if gitFound.path == path {
		gitFound.path = ""
	}
}

var gitFound struct {
	sync.Mutex
	path, in string // git's path, found in PATH in
}
