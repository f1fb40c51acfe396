package derive_test

import (
	"fmt"
	"os"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// Derive the crossover of two allreduce algorithms from four measured
// points and write the tuning table that encodes it. ln(t_rd/t_ring) is
// ln(20/75) at 1 KiB and ln(400/250) at 1 MiB; the straight line between
// them on the log scale crosses zero at e^12.045 = 170199 bytes. The
// table covers the one world swept; every other takes nexar's own rule.
func ExampleDerive() {
	rows := []sweep.Row{
		{Row: results.Row{Collective: "allreduce", Algorithm: "recursive_doubling", World: 8, Bytes: 1 << 10, DType: "f32", Time: 20e-6}},
		{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1 << 10, DType: "f32", Time: 75e-6}},
		{Row: results.Row{Collective: "allreduce", Algorithm: "recursive_doubling", World: 8, Bytes: 1 << 20, DType: "f32", Time: 400e-6}},
		{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1 << 20, DType: "f32", Time: 250e-6}},
	}
	res, err := derive.Derive(rows, derive.Options{Description: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, x := range res.Crossovers {
		fmt.Printf("world %d: %s below %.0f bytes, %s above\n", x.World, x.Below, x.Bytes, x.Above)
	}
	res.Tuning.WriteTo(os.Stdout)
	// Output:
	// world 8: recursive_doubling below 170199 bytes, ring above
	// # nexar-go tuning table (see algos.Tuning for the format).
	// version = 1
	// description = "example [allreduce from worlds 8 (nexar's rule elsewhere)]"
	//
	// [[collective.allreduce.crossover]]
	// world = 8
	// [[collective.allreduce.crossover.step]]
	// from_bytes = 0
	// algorithm = "recursive_doubling"
	// [[collective.allreduce.crossover.step]]
	// from_bytes = 170199
	// algorithm = "ring"
	//
	// [[collective.allreduce.rule]]
	// algorithm = "pipelined_ring"
	// params = { segment = 2097152 }
	// min_bytes = 8388608
	//
	// [[collective.allreduce.rule]]
	// algorithm = "ring"
	// max_world = 8
	//
	// [[collective.allreduce.rule]]
	// algorithm = "ring"
	// count_below_world = true
	//
	// [[collective.allreduce.rule]]
	// algorithm = "halving_doubling"
}

// Derive the bulk threshold of realnet's two paths on loopback: QUIC at
// 30 us and 1.65 Gbit/s, the TCP connections at 16.5 us and 1.09 GB/s.
// The bulk path pays a rendezvous before its payload (a request to send
// and a clear to send, both on TCP), so it wins from
// (3 x 16.5 us - 30 us) / (1/206 MB/s - 1/1.09 GB/s) = 4961 bytes; between
// the swept 4 and 8 KiB the log-scale interpolation puts it at 4861.
func ExampleDeriveTransport() {
	tr := &scenario.Transport{QUICLatency: 30 * sim.Microsecond, QUICBandwidth: 1.65e9 / 8, BulkLatency: 16500 * sim.Nanosecond, BulkBandwidth: 1.09e9}
	x, err := derive.DeriveTransport(tr, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range x.Points {
		if p.Bytes >= 4<<10 && p.Bytes <= 32<<10 {
			fmt.Printf("%6d bytes: quic %5.1f us, bulk %5.1f us\n", p.Bytes, p.QUIC*1e6, p.Bulk*1e6)
		}
	}
	fmt.Printf("bulk_threshold = %d (between %d and %d)\n", x.Threshold, x.Lo, x.Hi)
	// Output:
	//   4096 bytes: quic  49.9 us, bulk  53.3 us
	//   8192 bytes: quic  69.7 us, bulk  57.0 us
	//  16384 bytes: quic 109.4 us, bulk  64.5 us
	//  32768 bytes: quic 188.9 us, bulk  79.6 us
	// bulk_threshold = 4861 (between 4096 and 8192)
}
