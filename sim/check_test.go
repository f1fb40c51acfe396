package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestCheckNetwork checks that CheckNetwork refuses what Run of an empty
// body refuses, with the same error, and accepts what it accepts.
func TestCheckNetwork(t *testing.T) {
	ab := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}
	tree := sim.Flow{Topology: sim.FatTree{Tiers: 2, Radix: 4, Link: sim.LinkParams{Bandwidth: 1e9, Latency: sim.Microsecond}}}
	for _, c := range []struct {
		name  string
		cfg   sim.Config
		error string
	}{
		{"alpha-beta", sim.Config{World: 1 << 20, Model: ab}, ""},
		{"no world", sim.Config{World: 0, Model: ab}, "world size 0"},
		{"no model", sim.Config{World: 4}, "no network model"},
		{"fat tree fits", sim.Config{World: 8, Model: tree}, ""},
		{"fat tree too small", sim.Config{World: 9, Model: tree}, "9"},
		{"placement outside", sim.Config{World: 2, Model: sim.Flow{Topology: tree.Topology, Placement: sim.Placement{0, 99}}}, "99"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := sim.CheckNetwork(c.cfg)
			if c.error == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Fatalf("got %v, want an error naming %q", err, c.error)
			}
			if c.cfg.World < 1 || c.cfg.Model == nil {
				return
			}
			_, runErr := sim.Run(c.cfg, func(context.Context, algos.Link) error { return nil })
			if runErr == nil || runErr.Error() != err.Error() {
				t.Fatalf("Run says %v, CheckNetwork %v", runErr, err)
			}
		})
	}
}
