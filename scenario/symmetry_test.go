package scenario

import (
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

// TestSweepSymmetry reads a sweep's symmetry key: "auto" by default,
// "off", and a clear error, with the file, line and key, otherwise.
func TestSweepSymmetry(t *testing.T) {
	for _, c := range []struct {
		line string
		want sim.Symmetry
		err  string
	}{
		{"", sim.SymmetryAuto, ""},
		{`symmetry = "auto"`, sim.SymmetryAuto, ""},
		{`symmetry = "off"`, sim.SymmetryOff, ""},
		{`symmetry = "on"`, 0, `s.toml:18: sweep[0].symmetry: unknown symmetry "on" (want off or auto)`},
		{`symmetry = true`, 0, `sweep[0].symmetry: want "auto" or "off", got the boolean true`},
	} {
		s, err := Parse("s.toml", []byte(good+c.line+"\n"))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		if got := s.Sweeps[0].Symmetry; got != c.want {
			t.Errorf("%q: symmetry %v, want %v", c.line, got, c.want)
		}
	}
}
