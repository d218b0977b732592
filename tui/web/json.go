package web

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

// sessionJSON is a session as the page shows it.
type sessionJSON struct {
	ID      string   `json:"id"`
	Short   string   `json:"short"`
	Task    string   `json:"task"`
	Status  string   `json:"status"`
	Settled bool     `json:"settled"`
	Adapter string   `json:"adapter"`
	Model   string   `json:"model"`
	Source  string   `json:"source"`
	Turn    int      `json:"turn"`
	Tokens  int64    `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
	// TokensText and CostText are the two as zwarm ls shows them: "–"
	// while a running agent has reported nothing, "?" for a cost whose
	// price is unknown.
	TokensText  string     `json:"tokens_text"`
	CostText    string     `json:"cost_text"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	EndedAt     *time.Time `json:"ended_at"`
	LastMessage string     `json:"last_message"`
	Error       string     `json:"error"`
	Branch      string     `json:"branch,omitempty"`
	// Changes is the CHANGES cell of zwarm ls (+added -deleted in files,
	// landed, a conflict, "–" while unknown).
	Changes string `json:"changes"`
}

func toJSON(s *record.Session) sessionJSON {
	out := sessionJSON{ID: s.ID, Short: record.ShortID(s.ID), Task: s.Task, Status: string(s.Status()), Settled: s.Settled(),
		Adapter: s.Adapter, Model: s.Model, Source: s.Source.String(), Turn: s.Turn, Tokens: s.Usage.TotalTokens, CostUSD: s.CostUSD,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, EndedAt: s.EndedAt, LastMessage: s.LastMessage, Error: s.Error}
	if w := s.Workspace; w != nil {
		out.Branch = w.Branch
	}
	out.Changes = s.ChangesText()
	out.TokensText, out.CostText = render.SessionTokens(s), render.SessionCost(s)
	return out
}

// fieldJSON is one labelled line of where a session works and what became
// of its change, as zwarm show says it.
type fieldJSON struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

func workspaceOf(s *record.Session, now time.Time) []fieldJSON {
	out := []fieldJSON{}
	for _, f := range render.WorkspaceFields(s, now) {
		out = append(out, fieldJSON{Name: f.Name, Text: f.Text})
	}
	return out
}

// followUpJSON is a follow-up sent to a session: queued, delivered as a
// turn, or not delivered and why.
type followUpJSON struct {
	Text      string    `json:"text"`
	State     string    `json:"state"`
	Turn      int       `json:"turn,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Interrupt bool      `json:"interrupt,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func followUpsOf(inbox []record.InboxEntry) []followUpJSON {
	out := make([]followUpJSON, len(inbox))
	for i, e := range inbox {
		out[i] = followUpJSON{Text: clip(e.Text), State: string(e.State), Turn: e.Turn, Reason: e.Reason, Interrupt: e.Interrupt, CreatedAt: e.CreatedAt}
	}
	return out
}

// stepJSON is one step of a turn, its output bounded.
type stepJSON struct {
	Type     string   `json:"type"`
	Text     string   `json:"text,omitempty"`
	Command  string   `json:"command,omitempty"`
	Output   string   `json:"output,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Tool     string   `json:"tool,omitempty"`
	Files    []string `json:"files,omitempty"`
}

type turnJSON struct {
	N      int        `json:"n"`
	Prompt string     `json:"prompt"`
	Status string     `json:"status"`
	Steps  []stepJSON `json:"steps"`
}

// maxStepText bounds each text a step carries to the page.
const maxStepText = 16 << 10

func storyOf(turns []watch.TurnLog) []turnJSON {
	out := make([]turnJSON, 0, len(turns))
	for _, tl := range turns {
		t := turnJSON{N: tl.Turn.N, Prompt: tl.Turn.Prompt, Status: string(tl.Turn.Status()), Steps: []stepJSON{}}
		for _, ev := range record.Steps(tl.Events) {
			if ev.Type == record.EventTurnCompleted || ev.Type == record.EventUsage {
				continue // the turn's status and the session's tokens say it
			}
			st := stepJSON{Type: string(ev.Type), Text: clip(ev.Text), Command: clip(ev.Command), Output: clip(ev.Output), ExitCode: ev.ExitCode, Tool: ev.Tool}
			for _, c := range ev.Changes {
				st.Files = append(st.Files, c.Kind+" "+c.Path)
			}
			t.Steps = append(t.Steps, st)
		}
		out = append(out, t)
	}
	return out
}

func clip(s string) string {
	if len(s) <= maxStepText {
		return s
	}
	return s[:maxStepText] + "…"
}

// maxDiff bounds the diff read for the page; maxDiffAnswer what one
// answer carries of it (the other files' patches follow one by one).
const (
	maxDiff       = 16 << 20
	maxDiffAnswer = 512 << 10
)

// fileDiff is one file of a unified diff.
type fileDiff struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	Patch string `json:"patch"`
	More  bool   `json:"more,omitempty"`
	// Cut: the patch is its first part (what the page reads of a diff).
	Cut bool `json:"cut,omitempty"`
}

// splitDiff splits git's unified diff at each line that starts a file
// ("diff --git ...").
func splitDiff(patch string) []fileDiff {
	var starts []int
	for i := 0; i < len(patch); {
		if strings.HasPrefix(patch[i:], "diff --git ") {
			starts = append(starts, i)
		}
		nl := strings.IndexByte(patch[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	var out []fileDiff
	for k, at := range starts {
		end := len(patch)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		part := patch[at:end]
		out = append(out, fileDiff{Path: diffPath(part), Bytes: len(part), Patch: part})
	}
	return out
}

// diffPath is the file a diff's part is about: its "+++ b/PATH" line,
// else its "--- a/PATH" (a deletion), else the header's second path (a
// binary file, a mode change).
func diffPath(part string) string {
	minus := ""
	for _, l := range strings.Split(part, "\n") {
		if p, ok := strings.CutPrefix(l, "+++ "); ok && p != "/dev/null" {
			return gitPath(p, "b/")
		}
		if p, ok := strings.CutPrefix(l, "--- "); ok && p != "/dev/null" {
			minus = gitPath(p, "a/")
		}
		if strings.HasPrefix(l, "@@") {
			break
		}
	}
	if minus != "" {
		return minus
	}
	head, _, _ := strings.Cut(part, "\n")
	if i := strings.LastIndex(head, ` "b/`); i >= 0 && strings.HasSuffix(head, `"`) {
		return gitPath(head[i+1:], "b/")
	}
	if i := strings.LastIndex(head, " b/"); i >= 0 {
		return head[i+3:]
	}
	return head
}

// gitPath is a path as a diff's header writes it, without its a/ or b/:
// git ends one that holds a space with a tab, and writes one with other
// special bytes (a quote, a control character, non-ASCII) C-quoted, octal
// escapes and all, which Go's own quoting reads.
func gitPath(p, prefix string) string {
	p = strings.TrimSuffix(p, "\t")
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
	}
	return strings.TrimPrefix(p, prefix)
}

var errCut = errors.New("cut")

// limited takes at most n bytes, then fails the write (git stops) and
// says it cut: what the diff then returns is git's end by a broken pipe,
// not errCut, and is no failure.
type limited struct {
	w   io.Writer
	n   int
	cut bool
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.n {
		l.w.Write(p[:l.n])
		l.n, l.cut = 0, true
		return 0, errCut
	}
	l.n -= len(p)
	return l.w.Write(p)
}
