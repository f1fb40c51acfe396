package nexarsim

import (
	"strings"
	"testing"
)

func TestCkHeader(t *testing.T) {
	for _, c := range []struct {
		line string
		want ckHeader
		ok   bool
	}{
		{checkpointMagic + " hash=abc shard=1/1", ckHeader{hash: "abc", shard: "1/1"}, true},
		{checkpointMagic + ` hash=abc shard=2/4 scenario="my study"`, ckHeader{hash: "abc", shard: "2/4", name: "my study"}, true},
		{checkpointMagic + " hash= shard=1/1", ckHeader{}, false},
		{checkpointMagic + " shard=1/1 hash=abc", ckHeader{}, false},
		{checkpointMagic + ` hash=abc shard=1/1 scenario=unquoted`, ckHeader{}, false},
		{"collective,algorithm,world", ckHeader{}, false},
	} {
		got, ok := parseCkHeader(c.line)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
		if ok {
			if again, _ := parseCkHeader(got.String()); again != got {
				t.Errorf("%q: %+v does not round-trip: %+v", c.line, got, again)
			}
		}
	}
	want := ckHeader{hash: "0123456789abcdef", shard: "1/1", name: "study"}
	for _, c := range []struct{ first, says string }{
		{ckHeader{hash: "fedcba9876543210", shard: "1/1", name: "other"}.String(), `scenario "other", not "study" (hash fedcba987654, this run's 0123456789ab)`},
		{ckHeader{hash: "fedcba9876543210", shard: "1/1", name: "study"}.String(), `scenario "study" as it was before it changed`},
		{ckHeader{hash: "fedcba9876543210", shard: "1/1"}.String(), "another scenario (hash"},
		{ckHeader{hash: "0123456789abcdef", shard: "2/3", name: "study"}.String(), "shard 2/3, not 1/1"},
		{"a,b,c", "does not start as a checkpoint"},
	} {
		if err := foreignCheckpoint("dir", c.first, want); !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v; want %q", c.first, err, c.says)
		}
	}
}

// FuzzCkHeader: any line parses without a panic, and what parses writes
// back as a line that parses to the same.
func FuzzCkHeader(f *testing.F) {
	f.Add(checkpointMagic + " hash=abc shard=1/1")
	f.Add(checkpointMagic + ` hash=abc shard=2/4 scenario="my study"`)
	f.Fuzz(func(t *testing.T, line string) {
		h, ok := parseCkHeader(line)
		if !ok {
			return
		}
		if again, ok := parseCkHeader(h.String()); !ok || again != h {
			t.Fatalf("%q: %+v writes as %q, which reads as %+v, %v", line, h, h.String(), again, ok)
		}
	})
}
