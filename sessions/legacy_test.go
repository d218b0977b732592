package sessions

import "testing"

func TestDecodeLegacy(t *testing.T) {
	data := []byte(`{"id":"3f2a","task":"fix it","status":"running","working_dir":"/w","created_at":"2025-03-01T10:00:00.123456",
"updated_at":1740823200.5,"pid":4242,"exit_code":null,"model":"gpt-5.1-codex-mini","turn":2,
"messages":[{"role":"user","content":"fix it","timestamp":"2025-03-01T10:00:00"},{"role":"assistant","content":"fixed","timestamp":"x","metadata":{}}],
"token_usage":{"input_tokens":100,"output_tokens":20},"error":null,"source":"user","adapter":"codex"}`)
	s, err := decodeSession("3f2a", data)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Legacy || s.Status != StatusFailed || s.Error == "" || s.LastMessage != "fixed" || s.Usage.TotalTokens != 120 {
		t.Fatalf("%+v", s)
	}
	if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() {
		t.Fatalf("times not parsed: %v %v", s.CreatedAt, s.UpdatedAt)
	}
	if err := (&Store{dir: t.TempDir()}).save(s); err == nil {
		t.Fatal("a legacy record was written")
	}
	if _, err := decodeSession("x", []byte(`{"version": 99, "id": "x"}`)); err == nil {
		t.Fatal("future schema accepted")
	}
}
