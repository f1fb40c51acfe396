// Package algotest holds what checks of collective algorithms share,
// whatever runs them (the simulator, QUIC, a GPU): inputs that make every
// reduction order give the same bits, the references results are checked
// against, and the registry of those references by collective
// (RegisterReference, LookupReference), from which nexar-sim's host-data
// points, nexar-live's measurements and the transports' tests all take
// each rank's input and expected output.
package algotest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nexar-go/nexar-go/device"
)

// Fill writes rank's input for a reduction with op over world ranks into
// buf, from a generator seeded by (seed, rank).
//
// The values are chosen so that every partial result of the reduction is
// exactly representable in dt, whatever the order of reduction: integers
// wrap modulo 2^bits, which is associative and commutative; min and max
// pick one of their inputs; float sums use small integers, whose sum over
// world ranks stays within the contiguous integers of the type (256 for
// bf16); float products use ±1 except for one factor of ±2 or ±1/2 on rank
// 0. So algorithms that reduce in different orders must agree bit for bit,
// and a test can demand exact equality for every type.
func Fill(buf []byte, dt device.DType, op device.Op, rank, world int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(rank)+1))
	sz := dt.Size()
	span := max(1, 256/world/2) // |value| <= span, so |sum| <= 128 < 256
	for i := 0; i+sz <= len(buf); i += sz {
		if !dt.IsFloat() {
			putInt(buf[i:], dt, rng.Uint64())
			continue
		}
		var v float64
		switch op {
		case device.Sum:
			v = float64(rng.IntN(2*span+1) - span)
		case device.Prod:
			v = float64(1 - 2*rng.IntN(2))
			if rank == 0 {
				v *= []float64{1, 2, 0.5}[rng.IntN(3)]
			}
		default:
			v = float64(rng.IntN(2001)-1000) / 8
		}
		putFloat(buf[i:], dt, v)
	}
}

// Input returns a fresh buffer of count elements filled by Fill.
func Input(count int, dt device.DType, op device.Op, rank, world int, seed uint64) []byte {
	b := make([]byte, count*dt.Size())
	Fill(b, dt, op, rank, world, seed)
	return b
}

// Reduced returns the reduction with op of every rank's Input: what every
// rank must hold after an allreduce. It reduces rank by rank, the dumbest
// order there is.
func Reduced(count int, dt device.DType, op device.Op, world int, seed uint64) []byte {
	acc := Input(count, dt, op, 0, world, seed)
	for r := 1; r < world; r++ {
		device.ReduceHost(acc, Input(count, dt, op, r, world, seed), dt, op)
	}
	return acc
}

// Compare returns nil if got equals want, or an error naming the first
// differing element and how many differ.
func Compare(got, want []byte, dt device.DType) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d bytes, want %d", len(got), len(want))
	}
	sz := dt.Size()
	first, wrong := -1, 0
	for i := 0; i < len(got); i += sz {
		if string(got[i:i+sz]) != string(want[i:i+sz]) {
			if first < 0 {
				first = i / sz
			}
			wrong++
		}
	}
	if wrong == 0 {
		return nil
	}
	i := first * sz
	return fmt.Errorf("%d of %d %s elements wrong; first at index %d: got %x, want %x",
		wrong, len(got)/sz, dt, first, got[i:i+sz], want[i:i+sz])
}

// Wrong counts the elements of got that differ from want.
func Wrong(got, want []byte, dt device.DType) int {
	sz, n := dt.Size(), 0
	for i := 0; i+sz <= len(got) && i+sz <= len(want); i += sz {
		if string(got[i:i+sz]) != string(want[i:i+sz]) {
			n++
		}
	}
	return n
}

func putInt(b []byte, dt device.DType, v uint64) {
	switch dt.Size() {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// putFloat stores v, which is exactly representable in every float type.
func putFloat(b []byte, dt device.DType, v float64) {
	f := math.Float32bits(float32(v))
	switch dt {
	case device.F64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	case device.F32:
		binary.LittleEndian.PutUint32(b, f)
	case device.BF16:
		binary.LittleEndian.PutUint16(b, uint16(f>>16)) // exact: v has few mantissa bits
	case device.F16:
		binary.LittleEndian.PutUint16(b, f32ToF16Exact(f))
	}
}

// f32ToF16Exact converts a float32 that is exactly representable as a normal
// f16 (or zero), which Fill guarantees.
func f32ToF16Exact(f uint32) uint16 {
	sign := uint16(f>>16) & 0x8000
	if f&0x7fffffff == 0 {
		return sign
	}
	exp := int((f>>23)&0xff) - 127 + 15
	mant := uint16((f >> 13) & 0x3ff)
	return sign | uint16(exp)<<10 | mant
}
