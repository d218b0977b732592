package state

import (
	"strings"
	"testing"
)

// A record of the wrong shape is named in its own terms (its JSON fields
// and kinds, never Go's types), with what removes it.
func TestARecordOfTheWrongShapeSaysWhatIsWrongInItsOwnTerms(t *testing.T) {
	const id = "0a1b2c3d-0000-4000-8000-000000000009"
	head := `{"version":1,"id":"` + id + `",`
	for _, tc := range []struct{ record, want string }{
		{head + `"task":5}`, "its field task is a number, want a string"},
		{head + `"turns":{"a":1}}`, "its field turns is an object, want an array"},
		{head + `"turns":[{"n":"one"}]}`, "its field turns.n is a string, want a whole number"},
		{head + `"turns":[{"usage":{"input_tokens":true}}]}`, "its field turns.usage.input_tokens is a boolean, want a whole number"},
		{head + `"created_at":"yesterday"}`, `a time in it, "yesterday", is not an RFC 3339 time`},
		{`[1]`, "it is an array, want an object"},
		{`{"version":"1"}`, "its field version is a string, want a whole number"},
	} {
		_, err := DecodeSession("meta.json", id, []byte(tc.record))
		if err == nil {
			t.Errorf("%s: read", tc.record)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "meta.json: not a session record: "+tc.want+"; zwarm rm --force 0a1b2c3d removes the session") ||
			strings.Contains(msg, "Go ") || strings.Contains(msg, "record.") {
			t.Errorf("%s:\n got %s\nwant %s", tc.record, msg, tc.want)
		}
	}
}

// Without a version a record must be the Python zwarm's, which named its
// session and when it began: an empty object, or one of another
// session's, is no session to show (it read as one that failed in the
// year 1).
func TestARecordWithoutAVersionMustBeThePythonZwarms(t *testing.T) {
	const id = "0a1b2c3d-0000-4000-8000-000000000009"
	for _, rec := range []string{
		`{}`,
		`{"task":"x","status":"completed"}`,
		`{"id":"0a1b2c3d-0000-4000-8000-000000000001","created_at":"2025-03-01T10:00:00"}`,
		`{"id":"` + id + `","created_at":"soon"}`,
		`{"id":"` + id + `","created_at":"NaN"}`,
		`{"id":"` + id + `","created_at":1e30}`,
	} {
		_, err := DecodeSession("meta.json", id, []byte(rec))
		if err == nil || !strings.Contains(err.Error(), "not a session record") || !strings.Contains(err.Error(), "zwarm rm --force 0a1b2c3d removes the session") {
			t.Errorf("%s: %v", rec, err)
		}
	}
	s, err := DecodeSession("meta.json", id, []byte(`{"id":"`+id+`","task":"t","created_at":"2025-03-01T10:00:00.123456","status":"completed"}`))
	if err != nil || !s.Legacy || s.Task != "t" {
		t.Fatalf("a Python record: %+v, %v", s, err)
	}
}

// A status zwarm does not know is a record it cannot read, not a live
// session whose supervisor is gone (which a reader would settle failed);
// nor is a record that names another session. Each says what removes it.
func TestARecordWithAStatusZwarmDoesNotKnow(t *testing.T) {
	const id = "0a1b2c3d-0000-4000-8000-000000000009"
	for rec, want := range map[string]string{
		`{"version":1,"id":"` + id + `","status":"bogus"}`:                               `its status "bogus" is not one zwarm knows`,
		`{"version":1,"id":"` + id + `"}`:                                                `its status "" is not one zwarm knows`,
		`{"version":1,"id":"0a1b2c3d-0000-4000-8000-000000000001","status":"completed"}`: `names id "0a1b2c3d-0000-4000-8000-000000000001", not the directory's`,
	} {
		_, err := DecodeSession("meta.json", id, []byte(rec))
		if err == nil || !strings.Contains(err.Error(), want+"; zwarm rm --force 0a1b2c3d removes the session") {
			t.Errorf("%s: %v", rec, err)
		}
	}
	if s, err := DecodeSession("meta.json", id, []byte(`{"version":1,"id":"`+id+`","status":"running"}`)); err != nil || s.Status() != "running" {
		t.Errorf("a running record: %v", err)
	}
}
