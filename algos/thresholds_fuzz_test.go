package algos_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/algos"
)

// FuzzParseThresholds: whatever ParseThresholds accepts, String writes so
// that it reads back the same thresholds; nothing panics.
func FuzzParseThresholds(f *testing.F) {
	for _, s := range []string{"bulk=64KiB,eager=off", "bulk=never,eager=16KiB", " bulk = 16 KiB , eager = 0 ", "eager=1,bulk=1", "bulk=1", "bulk=x,eager=0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := algos.ParseThresholds(s)
		if err != nil {
			return
		}
		again, err := algos.ParseThresholds(th.String())
		if err != nil || again != th {
			t.Fatalf("%q read as %v, written %q, read back as %v, %v", s, th, th.String(), again, err)
		}
	})
}
