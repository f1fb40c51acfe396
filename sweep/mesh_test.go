package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestMeshCatalogueCorrect runs the whole allreduce catalogue with real
// data over relayed sparse meshes, on worlds that fit each mesh (1, 2,
// primes, powers of two) and awkward counts (0, 1, fewer than the ranks):
// every result is checked, and no run falls back from relaying.
func TestMeshCatalogueCorrect(t *testing.T) {
	var names []string
	for _, a := range mustLookup("allreduce").Algorithms {
		names = append(names, fmt.Sprintf("%q", a.Name))
	}
	for _, c := range []struct{ mesh, worlds string }{
		{"hypercube", "1, 2, 3, 5, 8, 13, 16"},
		{"kregular:3", "4, 6, 8, 10"},
		{"kregular:4", "5, 7, 9, 11"},
	} {
		t.Run(c.mesh, func(t *testing.T) {
			s, err := scenario.Parse("m.toml", []byte(fmt.Sprintf(`name = "mesh"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"
switch_reduce_bandwidth = "25GB/s" # for the in-network algorithms (NVLS, CollNet)
mesh = %q

[[sweep]]
collective = "allreduce"
algorithms = [%s]
world = [%s]
bytes = [0, 4, 8, 4100]
data = "host"
`, c.mesh, strings.Join(names, ", "), c.worlds)))
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := s.Network.Sim.(sim.Relayed); !ok || r.Mesh.String() != c.mesh {
				t.Fatalf("network %#v, want relayed over %s", s.Network.Sim, c.mesh)
			}
			points, err := sweep.Plan(s)
			if err != nil {
				t.Fatal(err)
			}
			var kept []sweep.Point
			for _, p := range points {
				if !p.Algorithm.PowerOfTwo || p.World&(p.World-1) == 0 {
					kept = append(kept, p)
				}
			}
			n := 0
			if err := sweep.Run(context.Background(), kept, sweep.Options{Jobs: 2}, func(sweep.Row) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d points checked", c.mesh, n)
			if n != len(kept) || n == 0 {
				t.Fatalf("%d rows of %d points", n, len(kept))
			}
		})
	}
}
