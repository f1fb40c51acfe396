package sim_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestStagedOneMessage checks a staged message alone on alpha-beta (1 us,
// 1 GB/s) against the closed form of sim.Staged's documentation: the
// receive completes at α + n/min(B, H) + 2·min(n, c)/H, the send (which
// completes when the message arrives) one chunk copy earlier.
func TestStagedOneMessage(t *testing.T) {
	ab := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}
	tests := []struct {
		name        string
		n, chunk    int
		host, known float64 // H, and B as told to Staged (0: unknown)
		recv        sim.Time
	}{
		// One chunk: 1 us + 1 us + 2 x 100 ns.
		{"small", 1000, 4096, 10e9, 1e9, 2200 * sim.Nanosecond},
		// Copies faster than the network: 1 us + 1 ms + 2 x 65536/10e9 s.
		{"fast copies", 1e6, 65536, 10e9, 1e9, sim.Microsecond + sim.Millisecond + 2*sim.TransferTime(65536, 10e9)},
		// Copies slower: the transfer runs at H: 1 us + 2 ms + 2 x 65536/0.5e9 s.
		{"slow copies", 1e6, 65536, 0.5e9, 1e9, sim.Microsecond + 2*sim.Millisecond + 2*sim.TransferTime(65536, 0.5e9)},
		// The same, with B unknown: only the chunk copies are added.
		{"slow copies, B unknown", 1e6, 65536, 0.5e9, 0, sim.Microsecond + sim.Millisecond + 2*sim.TransferTime(65536, 0.5e9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sim.Staged{Model: ab, HostBandwidth: tt.host, Chunk: tt.chunk, Bandwidth: tt.known}
			res := runModel(t, m, 2, func(ctx context.Context, l algos.Link) error {
				if l.Rank() == 0 {
					return algos.Send(ctx, l, 1, 0, l.Alloc(tt.n))
				}
				return algos.Recv(ctx, l, 0, 0, l.Alloc(tt.n))
			})
			copyLast := sim.TransferTime(min(tt.n, tt.chunk), tt.host)
			if res.Finish[1] != tt.recv || res.Finish[0] != tt.recv-copyLast {
				t.Errorf("finish %v, want [%v %v]", res.Finish, tt.recv-copyLast, tt.recv)
			}
		})
	}
}

func TestStagedValidate(t *testing.T) {
	ab := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}
	for _, m := range []sim.Staged{
		{HostBandwidth: 1e9, Chunk: 1},
		{Model: ab, HostBandwidth: 0, Chunk: 1},
		{Model: ab, HostBandwidth: 1e9, Chunk: 0},
		{Model: ab, HostBandwidth: 1e9, Chunk: 1, Bandwidth: -1},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v: valid", m)
		}
	}
}

// TestHostBandwidthOf finds the hierarchical topology's host bandwidth
// through the models that wrap the flow model, and none elsewhere.
func TestHostBandwidthOf(t *testing.T) {
	flow := sim.Flow{Topology: sim.Hierarchical{DevicesPerNode: 2, HostBandwidth: 64e9, Inter: sim.Crossbar{Bandwidth: 1e9}}}
	wrapped := sim.WithFaults(sim.Overhead{Model: flow, Send: 1}, 1)
	for _, c := range []struct {
		m    sim.Model
		want float64
	}{
		{flow, 64e9},
		{wrapped, 64e9},
		{sim.Flow{Topology: sim.Crossbar{Bandwidth: 1e9}}, 0},
		{sim.AlphaBeta{Latency: 1, Bandwidth: 1e9}, 0},
	} {
		got, err := sim.HostBandwidthOf(c.m, 4)
		if err != nil || got != c.want {
			t.Errorf("HostBandwidthOf(%T) = %g, %v; want %g", c.m, got, err, c.want)
		}
	}
}
