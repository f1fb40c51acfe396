package algos

import (
	"context"
	"fmt"
	"maps"

	"github.com/nexar-go/nexar-go/device"
)

// AutoAlgorithm returns the "auto" algorithm of the named collective: the
// dispatcher. On each call it measures the message with size, selects an
// algorithm with the call's Tuning table (DefaultTuning if nil; its
// Policy first, if it has one, told the link's Machine) and runs it, with
// the parameters the table sets and, for the others, the call's own or
// the algorithm's defaults.
//
// size returns the message bytes as nccl-tests counts them and the element
// count; it must return the same on every rank, since all ranks must pick
// the same algorithm. Collectives register their "auto" with it.
func AutoAlgorithm(collective string, size func(p int, c Call) (bytes, count int)) *Algorithm {
	return &Algorithm{
		Name:    "auto",
		Summary: "dispatcher: picks by message and world size from a tuning table (default: nexar's rule)",
		Run: func(ctx context.Context, l Link, c Call) error {
			coll, err := Lookup(collective)
			if err != nil {
				return err
			}
			t := c.Tuning
			if t == nil {
				t = DefaultTuning()
			}
			bytes, count := size(l.Size(), c)
			ch, err := t.SelectFor(MachineOf(l), collective, l.Size(), bytes, count)
			if err != nil {
				return err
			}
			a, err := coll.Algorithm(ch.Algorithm)
			if err != nil {
				return fmt.Errorf("tuning %s: %w", ch.From, err)
			}
			if a.Name == "auto" {
				return fmt.Errorf("tuning %s: selects auto itself", ch.From)
			}
			params := maps.Clone(ch.Params)
			for k, v := range c.Params {
				if _, declared := a.Params[k]; declared {
					if _, set := params[k]; !set {
						if params == nil {
							params = map[string]int{}
						}
						params[k] = v
					}
				}
			}
			c.Params = params
			return a.Run(ctx, l, c)
		},
	}
}

// allreduceSize is the message of an allreduce: its buffer.
func allreduceSize(_ int, c Call) (bytes, count int) {
	return c.Buf.Len(), c.Buf.Len() / c.DType.Size()
}

// wholeSize is the message of a collective as nccl-tests and NCCL count
// it: the larger of its buffers, which is the whole buffer of p blocks
// for allgather (its output) and reduce_scatter (its input), and the
// buffer of broadcast and reduce.
func wholeSize(_ int, c Call) (bytes, count int) {
	n := 0
	for _, b := range []device.Buffer{c.Buf, c.Send} {
		if b != nil {
			n = max(n, b.Len())
		}
	}
	return n, n / max(c.DType.Size(), 1)
}

// AutoAllreduce runs the allreduce that t selects for this world and
// buffer (DefaultTuning if t is nil), as the catalogue's "auto" does. With
// nexar's table: PipelinedRingAllreduce with 2 MiB segments from 8 MiB,
// RingAllreduce on up to 8 ranks or when buf has fewer elements than there
// are ranks, HalvingDoublingAllreduce otherwise. Its time is the chosen
// algorithm's.
func AutoAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, t *Tuning) error {
	if err := checkBuffer(buf, dt); err != nil {
		return err
	}
	return autoAllreduce.Run(ctx, l, Call{Buf: buf, DType: dt, Op: op, Tuning: t})
}

var autoAllreduce = AutoAlgorithm("allreduce", allreduceSize)
