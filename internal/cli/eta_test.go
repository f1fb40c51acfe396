package cli

import (
	"fmt"
	"math"
	"testing"
)

func TestETA(t *testing.T) {
	for _, c := range []struct {
		name                              string
		remaining, done, elapsed, current float64
		want                              float64
	}{
		{"nothing left", 0, 100, 50, 0, 0},
		{"nothing done: the estimate", 100, 0, 30, 0, 100},
		{"nothing done, a point under way for 30 s", 100, 0, 30, 30, 70},
		{"estimate too low, under way longer than it: 0", 10, 0, 30, 30, 0},
		// A first point 10x slower than its estimate, 1% of the work: the
		// pace counts for 1%/25% = 4% of the scale.
		{"first point slow", 99, 1, 10, 0, 99 * math.Pow(10, 0.04)},
		// A quarter done at half the pace: the pace alone.
		{"a quarter done", 75, 25, 50, 0, 150},
		{"half done on time", 50, 50, 50, 0, 50},
		{"half done, a point under way", 50, 50, 60, 10, 40},
	} {
		got := ETA(c.remaining, c.done, c.elapsed, c.current)
		if math.Abs(got-c.want) > 1e-9*max(1, c.want) {
			t.Errorf("%s: ETA(%g, %g, %g, %g) = %g, want %g", c.name, c.remaining, c.done, c.elapsed, c.current, got, c.want)
		}
	}
}

// The ETA of the run the issue saw: the first point of many took 10 s,
// ten times its estimate; extrapolating from it alone would say 15 min
// where the estimates say 100 s.
func ExampleETA() {
	fmt.Printf("%.0f s\n", ETA(99, 1, 10, 0))
	// Output: 109 s
}
