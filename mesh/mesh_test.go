package mesh

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"full", Spec{Kind: Full}, ""},
		{"hypercube", Spec{Kind: Hypercube}, ""},
		{"kregular:3", Spec{Kind: KRegular, K: 3}, ""},
		{"kregular:2", Spec{Kind: KRegular, K: 2}, ""},
		{"kregular:1", Spec{}, "at least 2"},
		{"kregular:", Spec{}, "whole number"},
		{"kregular:x", Spec{}, "whole number"},
		{"ring", Spec{}, "want full, hypercube or kregular:K"},
		{"", Spec{}, "want full"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("Parse(%q).String() = %q", tc.in, got.String())
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"full", "hypercube", "kregular:3", "kregular:-1", "kregular:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(spec.String())
		if err != nil || again != spec {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, spec, spec.String(), again, err)
		}
	})
}

// distances is a breadth-first search over Neighbours alone, to hold the
// mesh's own routes against.
func distances(m *Mesh, from int) []int {
	d := make([]int, m.World())
	for i := range d {
		d[i] = -1
	}
	d[from] = 0
	queue := []int{from}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		for _, q := range m.Neighbours(r) {
			if d[q] < 0 {
				d[q] = d[r] + 1
				queue = append(queue, q)
			}
		}
	}
	return d
}

func TestRoutesAreShortestPathsOverNeighbours(t *testing.T) {
	specs := []Spec{{Kind: Full}, {Kind: Hypercube}, {Kind: KRegular, K: 2}, {Kind: KRegular, K: 3}, {Kind: KRegular, K: 4}, {Kind: KRegular, K: 5}}
	for _, spec := range specs {
		for p := 1; p <= 40; p++ {
			m, err := New(spec, p)
			if spec.Kind == KRegular && spec.K%2 == 1 && p%2 == 1 && p > spec.K+1 {
				if err == nil {
					t.Errorf("%s on %d ranks: built, want refused", spec, p)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s on %d: %v", spec, p, err)
			}
			name := fmt.Sprintf("%s/p=%d", spec, p)
			diameter := 0
			for a := 0; a < p; a++ {
				nb := m.Neighbours(a)
				switch {
				case spec.Kind == KRegular && p > spec.K+1 && len(nb) != spec.K:
					t.Errorf("%s: rank %d has %d neighbours %v, want %d", name, a, len(nb), nb, spec.K)
				case spec.Kind == Full && len(nb) != p-1:
					t.Errorf("%s: rank %d has %d neighbours", name, a, len(nb))
				}
				dist := distances(m, a)
				for b := 0; b < p; b++ {
					if m.Joined(a, b) != m.Joined(b, a) {
						t.Errorf("%s: Joined(%d,%d) not symmetric", name, a, b)
					}
					if dist[b] < 0 {
						t.Fatalf("%s: rank %d cannot reach %d", name, a, b)
					}
					if h := m.Hops(a, b); h != dist[b] {
						t.Errorf("%s: Hops(%d,%d) = %d, shortest is %d", name, a, b, h, dist[b])
					}
					route := m.Route(a, b)
					if len(route) != dist[b] {
						t.Errorf("%s: Route(%d,%d) = %v, shortest is %d hops", name, a, b, route, dist[b])
					}
					prev := a
					for _, r := range route {
						if !m.Joined(prev, r) {
							t.Errorf("%s: Route(%d,%d) = %v steps from %d to %d, not joined", name, a, b, route, prev, r)
						}
						prev = r
					}
					if prev != b {
						t.Errorf("%s: Route(%d,%d) = %v ends at %d", name, a, b, route, prev)
					}
					diameter = max(diameter, dist[b])
				}
			}
			if m.Diameter() != diameter {
				t.Errorf("%s: Diameter() = %d, want %d", name, m.Diameter(), diameter)
			}
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec  Spec
		world int
		err   string
	}{
		{Spec{Kind: Full}, 0, "at least 1 rank"},
		{Spec{Kind: KRegular, K: 3}, 9, "odd number of ranks"},
		{Spec{Kind: KRegular, K: 1}, 8, "degree 1"},
		{Spec{Kind: 9}, 4, "unknown kind"},
	} {
		if _, err := New(tc.spec, tc.world); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("New(%v, %d) = %v, want an error containing %q", tc.spec, tc.world, err, tc.err)
		}
	}
}

func TestLargeWorld(t *testing.T) {
	m, err := New(Spec{Kind: KRegular, K: 3}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// Offsets ±1 and the opposite rank: the farthest rank is a quarter of
	// the way round.
	if got, want := m.Diameter(), 1<<18; got != want {
		t.Errorf("Diameter = %d, want %d", got, want)
	}
	h, err := New(Spec{Kind: Hypercube}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Hops(0, 1<<20-1); got != 20 {
		t.Errorf("hypercube hops = %d, want 20", got)
	}
}
