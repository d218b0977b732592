package agent

import (
	"encoding/json"
	"testing"
)

func TestContentText(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{``, ""},
		{`"plain"`, "plain"},
		{`[{"type":"output_text","text":"a"},{"type":"input_image"},{"type":"output_text","text":"b"}]`, "a\nb"},
		{`[{"type":"text","text":""}]`, ""},
		{`{"not":"content"}`, ""},
	} {
		if got := ContentText(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("ContentText(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}
