package launch

import (
	"strings"
	"testing"
)

// FuzzParseStatus: any line a worker (or a stray write on the pipe) could
// send is read without a panic, and a point line keeps its index only
// when the index is written as a plain number.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"ready", "point 3 allreduce ring 8 B", "point 03 x", "point -1", "alive", "error 2 peer 2 lost", "error x", "done", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l := parseStatus(line)
		if word, _, _ := strings.Cut(line, " "); l.word != word {
			t.Fatalf("%q: word %q, want %q", line, l.word, word)
		}
		if l.index >= 0 && l.word != "point" {
			t.Fatalf("%q: index %d on a %q line", line, l.index, l.word)
		}
	})
}
