package scenario

import (
	"math"

	"github.com/nexar-go/nexar-go/sim"
)

// ModelInfo describes a network model that a scenario's [network] table
// may name, for listings and help.
type ModelInfo struct {
	Name    string
	Summary string
	// Keys are the keys the model reads from [network], besides model.
	Keys []KeyInfo
}

// KeyInfo describes one key of a table.
type KeyInfo struct {
	Name     string
	Required bool
	// Doc says what the value is, with an example.
	Doc string
}

// modelSpec is a network model: what it reads from [network] and how it
// builds a sim.Model. To add a model, add an entry to models; build reports
// problems through t (t.errorf) and returns nil if there were any.
type modelSpec struct {
	ModelInfo
	build func(t *table) sim.Model
}

var models = []modelSpec{
	{
		ModelInfo: ModelInfo{
			Name:    "alpha-beta",
			Summary: "contention-free Hockney model: a message of m bytes takes latency + m/bandwidth on its sender's egress and receiver's ingress port; reducing k bytes takes k/reduce_bandwidth",
			Keys: []KeyInfo{
				{"latency", true, `alpha, the fixed cost of a message: "5us" (units ps, ns, us, ms, s)`},
				{"bandwidth", true, `1/beta, per port: "12.5GB/s" (B/s, KB/s, MB/s, GB/s, TB/s are powers of 10; KiB/s, MiB/s, GiB/s, TiB/s powers of 2; Mbit/s, Gbit/s, Tbit/s bits)`},
				{"reduce_bandwidth", false, `1/gamma, bytes of one operand reduced per second: "25GB/s"; "inf" or left out: reductions are free`},
			},
		},
		build: func(t *table) sim.Model {
			lat, ok1 := t.duration("latency", true)
			bw, ok2 := t.bandwidth("bandwidth", true, 0)
			rbw, ok3 := t.bandwidth("reduce_bandwidth", false, math.Inf(1))
			if !ok1 || !ok2 || !ok3 {
				return nil
			}
			m := sim.AlphaBeta{Latency: lat, Bandwidth: bw, ReduceBandwidth: rbw}
			if err := m.Validate(); err != nil {
				t.errorf(t.path, "alpha-beta parameters: %v", err)
				return nil
			}
			return m
		},
	},
}

// Models lists the network models a scenario may name, in the order of the
// documentation.
func Models() []ModelInfo {
	out := make([]ModelInfo, len(models))
	for i, m := range models {
		out[i] = m.ModelInfo
	}
	return out
}

func modelNames() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	return names
}

func lookupModel(name string) *modelSpec {
	for i := range models {
		if models[i].Name == name {
			return &models[i]
		}
	}
	return nil
}
