package record

import (
	"fmt"
	"strings"
)

// SourceKind says who started a session.
type SourceKind string

const (
	// SourceUser is a person at the command line or the dashboard.
	SourceUser SourceKind = "user"
	// SourceRun is an orchestrator run; Source.Run names it.
	SourceRun SourceKind = "run"
	// SourceMCP is an agent driving zwarm over `zwarm mcp`.
	SourceMCP SourceKind = "mcp"
)

// Source is who started a session. In meta.json and --json it is one word:
// "user", "mcp" or "run:RUN_ID".
type Source struct {
	Kind SourceKind
	Run  string // the run id when Kind is SourceRun
}

// UserSource is the source of sessions a person started.
var UserSource = Source{Kind: SourceUser}

// RunSource is the source of the workers of orchestrator run id.
func RunSource(id string) Source { return Source{Kind: SourceRun, Run: id} }

func (s Source) String() string {
	switch {
	case s.Kind == "":
		return string(SourceUser)
	case s.Kind == SourceRun:
		return "run:" + s.Run
	}
	return string(s.Kind)
}

// IsZero reports whether no source was given.
func (s Source) IsZero() bool { return s.Kind == "" }

// ParseSource reads "user", "mcp" or "run:ID". The Python zwarm wrote
// "orchestrator:ID" for a run's workers; that is read as a run too.
func ParseSource(text string) (Source, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "" || text == string(SourceUser):
		return UserSource, nil
	case text == string(SourceMCP):
		return Source{Kind: SourceMCP}, nil
	case strings.HasPrefix(text, "run:") && len(text) > len("run:"):
		return RunSource(text[len("run:"):]), nil
	case strings.HasPrefix(text, "orchestrator:") && len(text) > len("orchestrator:"):
		return RunSource(text[len("orchestrator:"):]), nil
	}
	return Source{}, fmt.Errorf("unknown source %q (want user, mcp or run:RUN_ID)", text)
}

// MarshalText implements encoding.TextMarshaler.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler. A source this zwarm
// does not know is kept as its own kind rather than failing the record.
func (s *Source) UnmarshalText(b []byte) error {
	v, err := ParseSource(string(b))
	if err != nil {
		v = Source{Kind: SourceKind(b)}
	}
	*s = v
	return nil
}

// Matches reports whether s is what filter asks for: the same kind, and for
// a run filter with an id, the same run (a prefix of its id is enough).
func (s Source) Matches(filter Source) bool {
	if filter.IsZero() {
		return true
	}
	if s.Kind != filter.Kind {
		return false
	}
	return filter.Run == "" || strings.HasPrefix(s.Run, filter.Run)
}
