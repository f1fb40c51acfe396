package algos_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// An allreduce on six simulated ranks: each holds four float32 values,
// rank r the values r+1, and every rank ends with their sums. Six is not a
// power of two, so halving-doubling folds ranks 0 and 2 into ranks 1 and 3
// first and sends them the result at the end: on alpha-beta the time of
// four ranks, 4α + 2(3/4)nβ + (3/4)nγ, plus 2α + 2nβ + nγ.
func ExampleHalvingDoublingAllreduce() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}
	res, err := sim.Run(sim.Config{World: 6, Model: model, HostData: true}, func(ctx context.Context, l algos.Link) error {
		buf := make(device.Host, 4*4)
		for i := 0; i < 4; i++ {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(l.Rank()+1)))
		}
		if err := algos.HalvingDoublingAllreduce(ctx, l, buf, device.F32, device.Sum); err != nil {
			return err
		}
		if l.Rank() == 0 {
			sums := make([]float32, 4)
			for i := range sums {
				sums[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
			fmt.Println(sums)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("simulated time:", res.End)
	// Output:
	// [21 21 21 21]
	// simulated time: 30.0056us
}

// Which allreduce nexar's own rule picks, on either side of its
// thresholds.
func ExampleTuning_Select() {
	nexar := algos.DefaultTuning()
	for _, c := range []struct{ world, bytes int }{
		{8, 1 << 20},  // up to 8 ranks: ring
		{16, 1 << 20}, // more ranks, below 8 MiB: halving-doubling
		{16, 8 << 20}, // from 8 MiB: pipelined ring
		{16, 4 * 15},  // 15 float32 on 16 ranks: ring
	} {
		ch, err := nexar.Select("allreduce", c.world, c.bytes, c.bytes/4)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%3d ranks %8d bytes: %s %v (%s)\n", c.world, c.bytes, ch.Algorithm, ch.Params, ch.From)
	}
	// Output:
	//   8 ranks  1048576 bytes: ring map[] (rule 2)
	//  16 ranks  1048576 bytes: halving_doubling map[] (rule 4)
	//  16 ranks  8388608 bytes: pipelined_ring map[segment:2097152] (rule 1)
	//  16 ranks       60 bytes: ring map[] (rule 3)
}

// A training loop's compressed allreduce on four simulated ranks, each
// holding one Compressor across steps: top-k with a ratio of 1/4 sends one
// of four gradients per rank per step. Every rank computes the gradient
// [4 3 2 1] at every step. What a step does not send stays in the
// rank's residual and is added to the next step's gradient (error
// feedback), so the smaller gradients get through later; the sum of the
// results always trails the uncompressed sum by the sum of the residuals.
func ExampleComm_AllReduceCompressed() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}
	floats := func(b device.Host) []float32 {
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v
	}
	_, err := sim.Run(sim.Config{World: 4, Model: model, HostData: true}, func(ctx context.Context, l algos.Link) error {
		c, err := algos.NewComm(l)
		if err != nil {
			return err
		}
		comp := &algos.Compressor{Compression: algos.Compression{Method: algos.TopK, Ratio: 0.25}}
		for step := range 3 {
			grad := make(device.Host, 4*4)
			for i, g := range []float32{4, 3, 2, 1} {
				binary.LittleEndian.PutUint32(grad[4*i:], math.Float32bits(g))
			}
			if err := c.AllReduceCompressed(ctx, comp, grad, device.F32, device.Sum); err != nil {
				return err
			}
			if l.Rank() == 0 {
				fmt.Println("step", step, "result", floats(grad), "residual", floats(comp.Residual().(device.Host)))
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// step 0 result [16 0 0 0] residual [0 3 2 1]
	// step 1 result [0 24 0 0] residual [4 0 4 2]
	// step 2 result [32 0 0 0] residual [0 3 6 3]
}

// The fold of 6 ranks onto 4, as halving_doubling and recursive_doubling
// place them: ranks 0 and 2 fold into 1 and 3 and take no virtual rank.
func ExampleFold() {
	f := algos.NewFold(6)
	fmt.Println("P2", f.P2(), "extra", f.Extra())
	var v []int
	for r := range 6 {
		v = append(v, f.VRank(r))
	}
	fmt.Println(v)
	fmt.Println("virtual 2 is rank", f.Rank(2))
	// Output:
	// P2 4 extra 2
	// [-1 0 -1 1 2 3]
	// virtual 2 is rank 4
}
