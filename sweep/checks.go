package sweep

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// The host-data checks of the catalogue's collectives other than
// allreduce. Each fills the inputs from algotest (data built so that a
// misplaced or missing block, or a reduction in any order, is caught) and
// the outputs with Garbage, so an element the collective never writes is
// caught too; then it compares every rank's output with algotest's
// reference, computed once per point.
func init() {
	for name, m := range map[string]CheckMaker{
		"allgather":      AllgatherCheck,
		"alltoall":       AlltoallCheck,
		"broadcast":      BroadcastCheck,
		"gather":         GatherCheck,
		"reduce_scatter": ReduceScatterCheck,
		"reduce":         ReduceCheck,
		"scan":           ScanCheck,
		"scatter":        ScatterCheck,
	} {
		RegisterCheck(name, m)
	}
}

// hostBytes returns the bytes of b, which must be host memory.
func hostBytes(b device.Buffer) ([]byte, error) {
	if b == nil {
		return nil, fmt.Errorf("no buffer")
	}
	h, ok := device.HostBytes(b)
	if !ok {
		return nil, fmt.Errorf("buffer is %T, not host memory", b)
	}
	return h, nil
}

// fill copies src into b, if b is host memory; Verify reports the rest.
func fill(b device.Buffer, src []byte) {
	if b == nil {
		return
	}
	if h, ok := device.HostBytes(b); ok {
		copy(h, src)
	}
}

// compare checks that b holds want.
func compare(b device.Buffer, want []byte, dt device.DType) error {
	h, err := hostBytes(b)
	if err != nil {
		return err
	}
	if len(h) < len(want) {
		return fmt.Errorf("buffer of %d bytes, want %d", len(h), len(want))
	}
	return algotest.Compare(h[:len(want)], want, dt)
}

// blockOf returns the per-rank block of a point whose layout is the whole
// buffer of p equal blocks (used elements / world).
func blockOf(p Point) int {
	_, _, used := p.Layout()
	if p.World == 0 {
		return 0
	}
	return used / p.World
}

// AllgatherCheck: rank r's Send is AllgatherInput; every rank's Buf must end
// as Allgathered, rank i's block at block i.
func AllgatherCheck(p Point) *Check {
	block := blockOf(p)
	want := algotest.Allgathered(block, p.DType, p.World, p.Seed)
	garbage := algotest.Garbage(want)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			fill(c.Send, algotest.AllgatherInput(block, p.DType, rank, p.Seed))
			fill(c.Buf, garbage)
		},
		Verify: func(_ int, c algos.Call) error { return compare(c.Buf, want, p.DType) },
	}
}

// AlltoallCheck: block j of rank r's Send is meant for rank j and differs
// for every pair; block j of rank r's Buf must be what rank j meant for r.
func AlltoallCheck(p Point) *Check {
	block := blockOf(p)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			fill(c.Send, algotest.AlltoallInput(block, p.DType, rank, p.World, p.Seed))
			fill(c.Buf, algotest.Garbage(algotest.AlltoallOutput(block, p.DType, rank, p.World, p.Seed)))
		},
		Verify: func(rank int, c algos.Call) error {
			return compare(c.Buf, algotest.AlltoallOutput(block, p.DType, rank, p.World, p.Seed), p.DType)
		},
	}
}

// BroadcastCheck: the root's buffer holds its data, every other rank's
// garbage; every rank must end with the root's data.
func BroadcastCheck(p Point) *Check {
	_, _, used := p.Layout()
	want := algotest.Broadcasted(used, p.DType, p.Root, p.Seed)
	garbage := algotest.Garbage(want)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			if rank == p.Root {
				fill(c.Buf, want)
			} else {
				fill(c.Buf, garbage)
			}
		},
		Verify: func(_ int, c algos.Call) error { return compare(c.Buf, want, p.DType) },
	}
}

// GatherCheck: rank r's Send is Distinct(r); the root's Buf must end as
// Gathered. Other ranks' Buf is not the collective's to write.
func GatherCheck(p Point) *Check {
	block := blockOf(p)
	want := algotest.Gathered(block, p.DType, p.World, p.Seed)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			fill(c.Send, algotest.Distinct(block, p.DType, rank, p.Seed))
			if rank == p.Root {
				fill(c.Buf, algotest.Garbage(want))
			}
		},
		Verify: func(rank int, c algos.Call) error {
			if rank != p.Root {
				return nil
			}
			return compare(c.Buf, want, p.DType)
		},
	}
}

// ReduceScatterCheck: rank r's Send is ReduceScatterInput; its Buf must end
// as block r of the reduction of every rank's input.
func ReduceScatterCheck(p Point) *Check {
	block := blockOf(p)
	want := algotest.ReduceScattered(block, p.DType, p.Op, p.World, p.Seed)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			fill(c.Send, algotest.ReduceScatterInput(block, p.DType, p.Op, rank, p.World, p.Seed))
			fill(c.Buf, algotest.Garbage(want[rank]))
		},
		Verify: func(rank int, c algos.Call) error { return compare(c.Buf, want[rank], p.DType) },
	}
}

// ReduceCheck: every rank's Buf holds algotest.Input; the root's must end
// as the reduction of all of them (other ranks' buffers are unspecified).
func ReduceCheck(p Point) *Check {
	_, _, used := p.Layout()
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			if h, ok := device.HostBytes(c.Buf); ok {
				algotest.Fill(h, p.DType, p.Op, rank, p.World, p.Seed)
			}
		},
		Verify: func(rank int, c algos.Call) error {
			h, err := hostBytes(c.Buf)
			if err != nil {
				return err
			}
			if n := used * p.DType.Size(); len(h) >= n {
				h = h[:n]
			}
			return algotest.CheckRootedReduce(h, p.DType, p.Op, rank, p.Root, p.World, p.Seed)
		},
	}
}

// ScanCheck: every rank's Buf holds algotest.Input and must end as the
// reduction of ranks 0..r (0..r-1 with the parameter exclusive = 1).
func ScanCheck(p Point) *Check {
	_, _, used := p.Layout()
	exclusive := p.Params["exclusive"] != 0
	want := algotest.Scanned(used, p.DType, p.Op, p.World, p.Seed, exclusive)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			if h, ok := device.HostBytes(c.Buf); ok {
				algotest.Fill(h, p.DType, p.Op, rank, p.World, p.Seed)
			}
		},
		Verify: func(rank int, c algos.Call) error { return compare(c.Buf, want[rank], p.DType) },
	}
}

// ScatterCheck: the root's Send holds every rank's block (Gathered); rank
// r's Buf must end as block r.
func ScatterCheck(p Point) *Check {
	block := blockOf(p)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			if rank == p.Root {
				fill(c.Send, algotest.ScatterInput(block, p.DType, rank, p.Root, p.World, p.Seed))
			}
			fill(c.Buf, algotest.Garbage(algotest.Scattered(block, p.DType, rank, p.Seed)))
		},
		Verify: func(rank int, c algos.Call) error {
			return compare(c.Buf, algotest.Scattered(block, p.DType, rank, p.Seed), p.DType)
		},
	}
}
