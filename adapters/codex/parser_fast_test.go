package codex

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readBoth reads b on the fast path and as jsontext reads it strictly,
// and fails t when the fast path accepts what jsontext would read another
// way or not at all.
func readBoth(t *testing.T, b []byte) (fastOK bool) {
	t.Helper()
	var fs, js scanner
	var fl, jl line
	fs.startFast(b)
	fastOK = fl.read(&fs)
	js.start(b, true)
	jsOK := jl.read(&js)
	if fastOK && (!jsOK || !reflect.DeepEqual(fl, jl)) {
		t.Fatalf("the fast path read %q as %+v; jsontext (ok %v) as %+v", b, fl, jsOK, jl)
	}
	// A line whose syntax only the fast path refused must be one it leaves
	// to jsontext on purpose.
	if !fastOK && jsOK && !fs.mismatch && !wantsJSONText(b) {
		t.Fatalf("the fast path refused %q, which jsontext reads", b)
	}
	return fastOK
}

// wantsJSONText reports lines the fast path leaves to jsontext: a \u
// escape of a surrogate, or nesting deeper than fastMaxDepth.
func wantsJSONText(b []byte) bool {
	s := strings.ToLower(string(b))
	for _, p := range []string{`\ud8`, `\ud9`, `\uda`, `\udb`, `\udc`, `\udd`, `\ude`, `\udf`} {
		if strings.Contains(s, p) {
			return true
		}
	}
	depth, most := 0, 0
	for _, c := range b {
		switch c {
		case '{', '[':
			depth++
			most = max(most, depth)
		case '}', ']':
			depth--
		}
	}
	return most > fastMaxDepth-1
}

// Every line of the recorded and real codex output that jsontext reads
// strictly takes the fast path and reads the same; the others (invalid
// UTF-8, a line cut short) are left to jsontext.
func TestFastPathReadsRealOutput(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	n, fast := 0, 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 || b[0] != '{' {
				continue
			}
			if readBoth(t, b) {
				fast++
			}
			n++
		}
	}
	if n < 50 || fast < n-5 {
		t.Fatalf("%d lines read, %d on the fast path", n, fast)
	}
}

// The tricky lines and their mutations: the fast path reads each as
// jsontext does, or leaves it to jsontext.
func TestFastPathAgreesOnTrickyLines(t *testing.T) {
	for _, l := range trickyLines {
		for _, m := range append([]string{l}, mutations(l)...) {
			readBoth(t, []byte(m))
		}
	}
	for _, bad := range []string{`{"a":1,}`, `{"a" 1}`, `{"a":}`, `[1 2]`, `{"a":1}x`, `{"a":01}`, `{"a":1.}`,
		`{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\u12g4"}`, `{1:2}`, `{"a":[}`, `{"a":1]`} {
		if readBoth(t, []byte(bad)) {
			t.Errorf("the fast path accepted %q", bad)
		}
	}
}

// FuzzFastPath: whatever the line, the fast path reads it as jsontext
// does or leaves it to jsontext.
func FuzzFastPath(f *testing.F) {
	for _, s := range trickyLines {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readBoth(t, b)
	})
}
