package jsonscan

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// walk reads the next value through the Scanner's API, as the parsers
// do, and writes what it read: containers entered at even depths, read
// whole at odd ones.
func walk(s *Scanner, b *strings.Builder, depth int) {
	switch k := s.Kind(); {
	case (k == '{' || k == '[') && depth%2 == 0:
		s.Enter()
		b.WriteByte(byte(k))
		for s.More() {
			if k == '{' {
				b.WriteString(s.Member())
				b.WriteByte(':')
			}
			walk(s, b, depth+1)
			b.WriteByte(',')
		}
		b.WriteByte(byte(k) + 2)
	default:
		b.Write(s.Value())
		b.WriteByte(' ')
	}
}

func read(s *Scanner) (string, bool) {
	var b strings.Builder
	walk(s, &b, 0)
	return b.String(), s.Done()
}

// readBoth reads b on the fast path and as jsontext reads it strictly,
// and fails t when the fast path accepts what jsontext would read another
// way or not at all, or refuses what jsontext reads for no reason of its
// own.
func readBoth(t *testing.T, b []byte) (fastOK bool) {
	t.Helper()
	var fs, js Scanner
	fs.StartFast(b)
	got, fastOK := read(&fs)
	js.Start(b, true)
	want, jsOK := read(&js)
	if fastOK && (!jsOK || got != want) {
		t.Fatalf("the fast path read %q as %q; jsontext (ok %v) as %q", b, got, jsOK, want)
	}
	if !fastOK && jsOK && !leftToJSONText(b) {
		t.Fatalf("the fast path refused %q, which jsontext reads", b)
	}
	return fastOK
}

// leftToJSONText reports the lines the fast path leaves to jsontext on
// purpose: a \u escape of a surrogate, or nesting deeper than fastMaxDepth.
func leftToJSONText(b []byte) bool {
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

// Every line of the adapters' recorded and real output that jsontext
// reads strictly takes the fast path and reads the same; the others
// (invalid UTF-8, a line cut short) are left to jsontext.
func TestFastPathReadsRealOutput(t *testing.T) {
	files, _ := filepath.Glob("../../*/testdata/*.jsonl")
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
	if n < 100 || fast < n-10 {
		t.Fatalf("%d lines read, %d on the fast path", n, fast)
	}
}

// fastSeeds: lines the fast path reads, then (from badFrom on) lines it
// must refuse.
var fastSeeds = []string{
	`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"tab\there \"q\" \\ \/ \b\f\n\r \u00e9 \u2615 \u0000 end"}}`,
	`{"a":[1,-0.5e+3,0,-0,1E9,true,false,null,{"b":{},"c":[[]]}],"a":"dup"}`,
	"{\"a\":\"caf\xc3\xa9 \xe2\x98\x95\"}",
	` { "a" : "b" , "c" : [ 1 , 2 ] } `, `"just a string"`, `12`, `[]`, `{}`,
	// refused: left to jsontext, or not JSON at all
	`{"a":"\ud83d\ude00 pair"}`, `{"a":"lone \ud800"}`, "{\"a\":\"\xff\"}",
	`{"a":1,}`, `{"a" 1}`, `{"a":}`, `[1 2]`, `{"a":1}x`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
	`{"a":tru}`, "{\"a\":\"\x01\"}", `{"a":"\q"}`, `{"a":"\u12g4"}`, `{1:2}`, `{"a":[}`, `{"a":1]`, `{"a":"x`, `{"a"`,
}

const badFrom = 8

// The fast path reads what jsontext reads, and refuses what it refuses
// and what it leaves to jsontext.
func TestFastPathAgrees(t *testing.T) {
	for i, l := range fastSeeds {
		if ok := readBoth(t, []byte(l)); ok != (i < badFrom) {
			t.Errorf("the fast path read %q: %v", l, ok)
		}
	}
	deep := strings.Repeat(`{"a":`, fastMaxDepth+1) + "1" + strings.Repeat("}", fastMaxDepth+1)
	if readBoth(t, []byte(deep)) {
		t.Errorf("the fast path read nesting deeper than %d", fastMaxDepth)
	}
}

// FuzzFastPath: whatever the line, the fast path reads it as jsontext
// does or leaves it to jsontext.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readBoth(t, b)
	})
}

// skipString ends a string where reading it byte by byte would, and
// accepts what that accepts, on random strings of quotes, escapes,
// controls and multi-byte characters.
func TestSkipStringAgreesWithAByteByByteReading(t *testing.T) {
	pieces := []string{"a", "bc", " ", "~", `\n`, `\"`, `\\`, `\u00e9`, `\ud83d`, `\x`, `\u12`, "\"", "\\", "\x01", "\x7f", "é", "\xe2\x80\xae", "\xff", "\xc3", "0123456789abcdef"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		b := []byte{'"'}
		for range r.IntN(12) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		end, ok := skipString(b, 0)
		wantEnd, wantOK := skipStringByByte(b, 0)
		if ok != wantOK || ok && end != wantEnd {
			t.Fatalf("skipString(%q) = %d, %v; byte by byte %d, %v", b, end, ok, wantEnd, wantOK)
		}
	}
}

// skipStringByByte is skipString as it was, one byte at a time.
func skipStringByByte(in []byte, i int) (int, bool) {
	i++
	for i < len(in) {
		switch c := in[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(in) {
				return i, false
			}
			switch in[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(in) {
					return i, false
				}
				v, err := strconv.ParseUint(string(in[i+2:i+6]), 16, 32)
				if err != nil || v >= 0xd800 && v <= 0xdfff {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

// special8 marks none of eight bytes exactly when plainByte says each is
// plain, for every byte in every position among plain ones, and for words
// of random bytes.
func TestSpecial8MarksNoneOfEightPlainBytes(t *testing.T) {
	check := func(w [8]byte) {
		want := true
		for _, c := range w {
			want = want && plainByte[c]
		}
		if got := special8(binary.LittleEndian.Uint64(w[:])) == 0; got != want {
			t.Fatalf("special8(%q) == 0 is %v, want %v", w[:], got, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			w := [8]byte{'a', 'b', 'c', ' ', '~', '0', 'z', '!'}
			w[pos] = byte(c)
			check(w)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(textWord(r))
	}
}

// textWord is eight random bytes, mostly printable, as text is.
func textWord(r *rand.Rand) [8]byte {
	var w [8]byte
	for i := range w {
		w[i] = byte(r.IntN(256))
		if r.IntN(4) > 0 {
			w[i] = byte(0x20 + r.IntN(0x60))
		}
	}
	return w
}

// special8's lowest mark is the first byte that is not plainByte, whatever
// the bytes after it: skipString jumps straight to it.
func TestSpecial8FindsTheFirstByteThatIsNotPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300000 {
		w := textWord(r)
		want := 8
		for i, c := range w {
			if !plainByte[c] {
				want = i
				break
			}
		}
		m := special8(binary.LittleEndian.Uint64(w[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("special8(%q) points at byte %d, want %d", w[:], got, want)
		}
	}
}
