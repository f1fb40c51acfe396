package sim_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// nodesTopology is 6 devices on one switch, in domains 0, 0, 0, 1, 1, 2.
func nodesTopology() *sim.Topology {
	t, err := sim.Crossbar{Bandwidth: 1e9, Latency: sim.Microsecond}.Build(6)
	if err != nil {
		panic(err)
	}
	for i, d := range []int{0, 0, 0, 1, 1, 2} {
		t.SetDomain(i, d)
	}
	return t
}

// machines runs body-less ranks that each keep the Machine their link
// gives, and returns them.
func machines(t *testing.T, cfg sim.Config) []*algos.Machine {
	t.Helper()
	got := make([]*algos.Machine, cfg.World)
	res, err := sim.Run(cfg, func(ctx context.Context, l algos.Link) error {
		got[l.Rank()] = algos.MachineOf(l)
		// Something to replay.
		return algos.RingAllreduce(ctx, l, l.Alloc(64), device.F32, device.Sum)
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Replay && !res.Replayed {
		t.Fatal("not replayed")
	}
	for r, m := range got[1:] {
		if m != got[0] {
			t.Fatalf("rank %d's Machine %p is not rank 0's %p", r+1, m, got[0])
		}
	}
	return got
}

func TestMachine(t *testing.T) {
	hopper := &algos.Machine{GPU: "hopper", CPU: "intel", Figures: map[string]float64{"x": 1}}
	flow := sim.Flow{Topology: nodesTopology(), Placement: sim.Placement{5, 0, 3, 1, 4}}
	for _, replay := range []bool{false, true} {
		for _, tc := range []struct {
			name    string
			model   sim.Model
			machine *algos.Machine
			want    *algos.Machine // nil: want the Config's own
		}{
			{"alpha-beta, none", worked, nil, nil},
			{"alpha-beta", worked, hopper, nil},
			{"flow, nodes given", flow, &algos.Machine{Node: []int{7, 7, 7, 7, 7}}, nil},
			{"flow, none", flow, nil, &algos.Machine{Node: []int{2, 0, 1, 0, 1}}},
			{"flow", flow, hopper, &algos.Machine{GPU: "hopper", CPU: "intel", Figures: hopper.Figures, Node: []int{2, 0, 1, 0, 1}}},
			{"flow under decorators", sim.Protocol{Model: sim.WithFaults(flow, 1, sim.Jitter{Dist: "constant", Mean: sim.Nanosecond}), EagerLimit: 100},
				hopper, &algos.Machine{GPU: "hopper", CPU: "intel", Figures: hopper.Figures, Node: []int{2, 0, 1, 0, 1}}},
			{"realnet", sim.TwoPaths{QUIC: worked, Bulk: worked}, hopper, nil},
		} {
			t.Run(fmt.Sprintf("%s replay=%v", tc.name, replay), func(t *testing.T) {
				var before algos.Machine
				if tc.machine != nil {
					before = *tc.machine
				}
				got := machines(t, sim.Config{World: 5, Model: tc.model, Machine: tc.machine, Replay: replay})[0]
				switch {
				case tc.want == nil && got != tc.machine:
					t.Errorf("Machine %+v, want the Config's %+v", got, tc.machine)
				case tc.want != nil && !reflect.DeepEqual(got, tc.want):
					t.Errorf("Machine %+v, want %+v", got, tc.want)
				}
				if tc.machine != nil && !reflect.DeepEqual(*tc.machine, before) {
					t.Errorf("the Config's Machine was modified: %+v", *tc.machine)
				}
			})
		}
	}
}
