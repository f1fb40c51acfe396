package verify

import (
	"fmt"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/staging"
)

// staged reports whether a result's messages were staged through host
// memory.
func staged(r results.Row) bool { return r.Device == results.DeviceCUDA }

// networkFor returns the network that predicts result r of a run on the
// network n: n itself for a run on host memory; for a run on GPUs, n with
// every message staged through host memory at the device's host
// bandwidth, the host_bandwidth of n's hierarchical topology
// (sim.Staged, with staging's DefaultChunk, the chunk of nexar-live's
// staging Link), or n itself if n has none (StagingNote says so).
func networkFor(n *scenario.Network, r results.Row) (*scenario.Network, error) {
	if !staged(r) {
		return n, nil
	}
	h, err := sim.HostBandwidthOf(n.Sim, r.World)
	if err != nil || h == 0 {
		return n, err
	}
	return n.Wrapped(func(m sim.Model) sim.Model {
		return sim.Staged{Model: m, HostBandwidth: h, Chunk: staging.DefaultChunk, Bandwidth: n.LinkBandwidth}
	}), nil
}

// StagingNote says how predictions of results rs on the network of s
// treat the staging copies of points measured on GPUs: "" if there are
// none.
func StagingNote(s *scenario.Scenario, rs []results.Row) string {
	for _, r := range rs {
		if !staged(r) {
			continue
		}
		h, err := sim.HostBandwidthOf(s.Network.Sim, r.World)
		if err != nil || h == 0 {
			return "buffers on GPUs, but the model has no host_bandwidth (topology = \"hierarchical\"): the predictions leave out the staging copies"
		}
		return fmt.Sprintf("buffers on GPUs: the predictions add the staging copies at the model's host_bandwidth (%.4g GB/s), in chunks of %d KiB",
			h/1e9, staging.DefaultChunk>>10)
	}
	return ""
}
