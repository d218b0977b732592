package render

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// isSafeByByte is isSafe one byte at a time, as it was before it read
// eight at once.
func isSafeByByte(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
		} else if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return ascii || utf8.ValidString(s) && !hasUnsafeUnicode(s)
}

// isSafe agrees with the byte-by-byte reading for every byte in every
// position of words of printable text, and for random texts.
func TestIsSafeReadsEightBytesAsOne(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := isSafe(s), isSafeByByte(s); got != want {
			t.Fatalf("isSafe(%q) = %v, want %v", s, got, want)
		}
	}
	base := []byte("ab\tc d~0\nz!xy 12345678")
	for _, n := range []int{7, 8, 9, 16, len(base)} {
		for pos := range n {
			for c := range 256 {
				w := append([]byte(nil), base[:n]...)
				w[pos] = byte(c)
				check(string(w))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abc \t\n~\x7f\x1b\x00\x1f\x80\xe2\x80\xae\xc3\xa9\"\\")
	for range 100000 {
		w := make([]byte, r.IntN(40))
		for i := range w {
			if r.IntN(4) == 0 {
				w[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				w[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		check(string(w))
	}
}

// What a commit message drops (record.Invisible), a terminal printer
// escapes: tag characters and fillers too, a tag character as \U.
func TestSafeEscapesWhatReadsInvisibly(t *testing.T) {
	in := "ok\U000E0069 soft\u00adhyphen\u3164 \u202eevil"
	want := `ok\U000e0069 soft\xadhyphen\u3164 \u202eevil`
	if got := Safe(in); got != want {
		t.Errorf("Safe(%q) = %q, want %q", in, got, want)
	}
}
