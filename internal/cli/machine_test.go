package cli

import (
	"strings"
	"testing"
)

func TestParseMeminfo(t *testing.T) {
	for _, c := range []struct {
		text         string
		total, avail int64
	}{
		{"MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20480000 kB\n", 24576000 << 10, 20480000 << 10},
		{"MemTotal: 1024 kB\nbad line\nMemAvailable: lots kB\n", 1 << 20, 0},
		{"", 0, 0},
	} {
		total, avail := ParseMeminfo(strings.NewReader(c.text))
		if total != c.total || avail != c.avail {
			t.Errorf("%q: %d, %d; want %d, %d", c.text, total, avail, c.total, c.avail)
		}
	}
}

// FuzzParseMeminfo: any text reads without a panic, as sizes of 0 or more.
func FuzzParseMeminfo(f *testing.F) {
	f.Add("MemTotal:       24576000 kB\nMemAvailable:   20480000 kB\n")
	f.Add("MemTotal: -5 kB\nMemAvailable: 99999999999999999999 kB\n")
	f.Fuzz(func(t *testing.T, text string) {
		if total, avail := ParseMeminfo(strings.NewReader(text)); total < 0 || avail < 0 {
			t.Fatalf("%q: %d, %d", text, total, avail)
		}
	})
}
