package algos

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// DefaultCompressionPPM is the share of elements the catalogue's compressed
// allreduces send by default, in parts per million: 1%.
const DefaultCompressionPPM = 10_000

// Compressor is one rank's compressed allreduce across calls, as a training
// loop uses it: the Compression, and the error-feedback residual, what the
// rank did not send in earlier calls, which is added to its next input so
// that nothing is lost, only delayed. A loop keeps one Compressor per
// tensor (or bucket) it reduces, on every rank, and calls AllReduce (or
// Comm.AllReduceCompressed) on it every step:
//
//	c := &algos.Compressor{Compression: algos.Compression{Method: algos.TopK, Ratio: 0.01}}
//	for step := range steps {
//		computeGradient(grad)
//		if err := c.AllReduce(ctx, link, grad, device.F32, device.Sum); err != nil { ... }
//		apply(grad)
//	}
//
// The residual is allocated on the first call, of the buffer's size and
// kind (host memory, or phantom sizes in the simulator); later calls must
// pass buffers of the same size. A Compressor is used by one goroutine at
// a time, like its Link.
type Compressor struct {
	Compression
	residual device.Buffer
	steps    uint64
}

// Residual returns what the rank has not yet sent: after a call, the
// rank's input plus the previous residual, less what the call sent. It is
// nil before the first call and after Reset.
func (c *Compressor) Residual() device.Buffer { return c.residual }

// Steps returns the number of calls made since the Compressor was made or
// Reset; RandomK's draws are seeded with it.
func (c *Compressor) Steps() uint64 { return c.steps }

// Reset forgets the residual and the step count, as after restoring a
// checkpoint that did not save them. Every rank must reset together.
func (c *Compressor) Reset() { c.residual, c.steps = nil, 0 }

// AllReduce reduces buf across all ranks with op, in place, compressed:
// every rank ends with the same result, the reduction with op, in rank
// order, of every rank's sparse contribution, which holds the elements the
// rank sent and zeros elsewhere. With Sum that is the sum of what each rank
// sent, element by element.
//
// Each rank adds its residual to buf (error feedback), picks k =
// c.K(count) elements of the sum by c.Method, keeps the rest as its new
// residual, and sends k (index, value) pairs, 32-bit indices then values,
// to every rank by Bruck's allgather ([AllgatherBruck]); then it
// decompresses the p blocks in rank order: rank 0's pairs into a zeroed
// buf, and each later rank's reduced into it. With Sum only the k elements
// a block names are gathered, reduced (Link.Reduce) and put back; with
// other ops each block is expanded into a dense buffer, zeros where it
// names nothing, and reduced whole, as nexar's all_reduce_compressed does
// for every op. Reducing in rank order on every rank keeps the results
// identical to the last bit on every rank, which replicas of a model need.
// On one rank the result is the rank's own compressed contribution.
//
// The work of compressing is charged to the rank's compute through the
// Link: the error-feedback add is a Link.Reduce of n bytes, and top-k's
// selection, one pass over the n bytes, a Link.Reduce of n phantom bytes
// (free on hardware, where the selection took its own time; the
// simulator charges what a reduction of n bytes takes). Random-k draws
// its indices without reading the data, and packing pairs, zeroing and
// scattering are copies, free on the model like every Link.Copy.
//
// The buffer must be host memory (the rank reads its elements to select
// them) or phantom (the simulator's timing runs, where the selection is
// charged but picks nothing, so the messages and their sizes are the same
// as with data). count must be below 2^32.
func (c *Compressor) AllReduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := checkBuffer(buf, dt); err != nil {
		return err
	}
	count := buf.Len() / dt.Size()
	if count > maxCompressedCount {
		return fmt.Errorf("algos: compressed allreduce of %d elements: its indices are 32-bit, so at most 2^32 elements (cut the buffer into buckets)", count)
	}
	host, isHost := device.HostBytes(buf)
	phantom := device.IsPhantom(buf)
	if !isHost && !phantom {
		return fmt.Errorf("algos: compressed allreduce on a buffer of %T: it selects elements on the host, so it needs host memory (or phantom buffers in the simulator)", buf)
	}
	if c.residual == nil {
		if phantom {
			c.residual = device.Phantom(buf.Len())
		} else {
			c.residual = make(device.Host, buf.Len())
		}
	} else if c.residual.Len() != buf.Len() || device.IsPhantom(c.residual) != phantom {
		return fmt.Errorf("algos: compressed allreduce of %d bytes with a residual of %d bytes from earlier calls (%T): each tensor needs its own Compressor", buf.Len(), c.residual.Len(), c.residual)
	}
	step := c.steps
	c.steps++
	if count == 0 {
		return nil
	}
	p, k, e := l.Size(), c.K(count), dt.Size()
	m := blockBytes(k, dt)

	// Compress: error feedback, then selection.
	if err := l.Reduce(buf, c.residual, dt, device.Sum); err != nil {
		return err
	}
	if c.Method == TopK {
		if err := charge(l, buf.Len()); err != nil {
			return err
		}
	}
	var send, recv device.Buffer = device.Phantom(m), device.Phantom(p * m)
	if !phantom {
		send, recv = make(device.Host, m), make(device.Host, p*m)
		c.pack(host, dt, step, k, send.(device.Host))
	}

	// Exchange.
	if err := AllgatherBruck(ctx, l, send, recv, device.U8); err != nil {
		return err
	}

	// Decompress, in rank order.
	reduced := k * e // the bytes reduced per block
	if op != device.Sum {
		reduced = buf.Len()
	}
	if phantom {
		for range p - 1 {
			if err := l.Reduce(device.Phantom(reduced), device.Phantom(reduced), dt, op); err != nil {
				return err
			}
		}
		return nil
	}
	return unpackAll(l, host, recv.(device.Host), dt, op, k)
}

// charge puts bytes of computation that no Link method performs (top-k's
// selection pass) on the rank's compute, as a reduction of that many
// bytes: a Link.Reduce of phantom buffers moves nothing, costs what
// reducing real bytes would in the simulator, and nothing on hardware,
// where the computation has already taken its time.
func charge(l Link, bytes int) error {
	return l.Reduce(device.Phantom(bytes), device.Phantom(bytes), device.U8, device.Sum)
}

// pack selects k elements of acc (the input plus the residual), writes
// their indices and values into block and leaves the others in the
// residual, whose selected elements become zero.
func (c *Compressor) pack(acc []byte, dt device.DType, step uint64, k int, block []byte) {
	e := dt.Size()
	idx := make([]uint32, k)
	c.sparsify(acc, dt, step, idx)
	res := c.residual.(device.Host)
	copy(res, acc)
	vals := block[indexBytes*k:]
	for j, i := range idx {
		binary.LittleEndian.PutUint32(block[indexBytes*j:], i)
		at := int(i) * e
		copy(vals[j*e:(j+1)*e], acc[at:at+e])
		clear(res[at : at+e])
	}
}

// unpackAll decompresses the p blocks of recv into buf in rank order: the
// first block's pairs into a zeroed buf, then each later block's reduced
// with op.
func unpackAll(l Link, buf, recv []byte, dt device.DType, op device.Op, k int) error {
	e := dt.Size()
	count := len(buf) / e
	m := blockBytes(k, dt)
	p := len(recv) / m
	idx := make([]uint32, k)
	decode := func(b int) ([]byte, error) {
		blk := recv[b*m : (b+1)*m]
		for j := range idx {
			i := binary.LittleEndian.Uint32(blk[indexBytes*j:])
			if int(i) >= count || (j > 0 && i <= idx[j-1]) {
				return nil, fmt.Errorf("algos: compressed allreduce: rank %d sent index %d (pair %d), not in increasing order below %d", b, i, j, count)
			}
			idx[j] = i
		}
		return blk[indexBytes*k:], nil
	}
	scatter := func(dst, vals []byte) {
		for j, i := range idx {
			copy(dst[int(i)*e:], vals[j*e:(j+1)*e])
		}
	}
	clear(buf)
	vals, err := decode(0)
	if err != nil {
		return err
	}
	scatter(buf, vals)
	var scratch []byte
	if op == device.Sum {
		scratch = make([]byte, k*e) // the elements a block names, gathered
	} else {
		scratch = make([]byte, len(buf)) // a block expanded
	}
	for b := 1; b < p; b++ {
		vals, err := decode(b)
		if err != nil {
			return err
		}
		if op != device.Sum {
			clear(scratch)
			scatter(scratch, vals)
			if err := l.Reduce(device.Host(buf), device.Host(scratch), dt, op); err != nil {
				return err
			}
			continue
		}
		for j, i := range idx {
			copy(scratch[j*e:(j+1)*e], buf[int(i)*e:])
		}
		if err := l.Reduce(device.Host(scratch), device.Host(vals), dt, op); err != nil {
			return err
		}
		scatter(buf, scratch)
	}
	return nil
}

// compressionParams returns the Compression of a catalogue call:
// parameter "ppm" is the share of elements sent in parts per million,
// "seed" seeds random-k.
func compressionParams(method Sparsifier, params map[string]int) (Compression, error) {
	ppm := DefaultCompressionPPM
	if v, ok := params["ppm"]; ok {
		ppm = v
	}
	if ppm < 1 || ppm > 1_000_000 {
		return Compression{}, fmt.Errorf("algos: compressed allreduce: parameter \"ppm\" is %d, want 1 to 1000000 (parts per million of the elements sent)", ppm)
	}
	seed := params["seed"]
	if seed < 0 {
		return Compression{}, fmt.Errorf("algos: compressed allreduce: parameter \"seed\" is %d, want 0 or more", seed)
	}
	return Compression{Method: method, Ratio: float64(ppm) / 1e6, Seed: uint64(seed)}, nil
}

// compressedAlgorithm is the catalogue entry of a compressed allreduce:
// each call is one step of a fresh Compressor, so its residual starts at
// zero and is dropped (a sweep's or a check's calls are then alike and
// their result is known); the time is any step's, since the residual's
// add and every other cost are paid whatever it holds.
func compressedAlgorithm(name string, method Sparsifier, summary string, params map[string]int) *Algorithm {
	return &Algorithm{Name: name, Summary: summary, Params: params,
		Compression: func(params map[string]int) (Compression, error) { return compressionParams(method, params) },
		Run: func(ctx context.Context, l Link, c Call) error {
			cfg, err := compressionParams(method, c.Params)
			if err != nil {
				return err
			}
			comp := Compressor{Compression: cfg}
			return comp.AllReduce(ctx, l, c.Buf, c.DType, c.Op)
		}}
}
