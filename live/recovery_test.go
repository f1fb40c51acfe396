package live

import (
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
)

func TestParseRecovery(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Recovery
		ok   bool
	}{{"abort", RecoveryAbort, true}, {"shrink", RecoveryShrink, true}, {"Shrink", "", false}, {"", "", false}} {
		got, err := ParseRecovery(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ParseRecovery(%q) = %q, %v", c.in, got, err)
		}
	}
}

// TestResizeJob: the rest of a 4-rank job at 3 ranks keeps the points'
// indexes, leaves out the algorithms for powers of two, and has an ID of
// its own.
func TestResizeJob(t *testing.T) {
	s, err := scenario.Parse("x.toml", []byte(`name = "x"
[network]
model = "alpha-beta"
latency = "1us"
bandwidth = "1GB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling"]
world = [4]
bytes = [8, 1024]
data = "host"
`))
	if err != nil {
		t.Fatal(err)
	}
	job, err := NewJob(s, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rest, left := resizeJob(job, 1, 3)
	var idx []int
	for _, p := range rest.Points {
		idx = append(idx, p.Index)
		if p.World != 3 || p.Root >= 3 {
			t.Errorf("point %d: world %d, root %d", p.Index, p.World, p.Root)
		}
	}
	pow2 := job.Points[2].Algorithm.PowerOfTwo
	want, wantLeft := []int{1, 2, 3}, []int(nil)
	if pow2 {
		want, wantLeft = []int{1}, []int{2, 3}
	}
	if !slices.Equal(idx, want) || !slices.Equal(left, wantLeft) {
		t.Errorf("points %v, left out %v; want %v, %v", idx, left, want, wantLeft)
	}
	if rest.ID == job.ID {
		t.Error("the resized job has the ID of the first")
	}
	if job.Points[1].World != 4 {
		t.Error("resizeJob changed the job it was given")
	}
}
