package nccl

import (
	"encoding/binary"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// NCCL's buffers and steps (src/include/device.h, src/init.cc,
// src/include/collectives.h of NCCL 2.30.7).
const (
	// Steps is NCCL_STEPS: the slots of a connection's FIFO, so the steps
	// a sender may have outstanding to one peer.
	Steps = 8
	// llLineBytes is an LL line (union ncclLLFifoLine): 8 bytes of data
	// and 8 of flag, as data1, flag1, data2, flag2 of 4 bytes each.
	llLineBytes = 16
	llLineData  = 8
	// ll128LineBytes is an LL128 line: 16 words of 8 bytes, 15 of data
	// and one of flag (NCCL_LL128_LINEELEMS, NCCL_LL128_DATAELEMS).
	ll128LineBytes = 128
	ll128LineData  = 120
	// BufferLL is DEFAULT_LL_BUFFSIZE: 8 lines per thread x 512 threads
	// x 8 steps x 16 bytes.
	BufferLL = 8 * 512 * Steps * llLineBytes
	// BufferLL128 is DEFAULT_LL128_BUFFSIZE: 120 elements per thread x
	// 640 threads x 8 steps x 8 bytes.
	BufferLL128 = 120 * 640 * Steps * 8
	// BufferSimple is DEFAULT_BUFFSIZE, 4 MiB.
	BufferSimple = 4 << 20
	// flagBytes is the size of Simple's tail flag: one 8-byte word.
	flagBytes = 8
)

// buffer is the protocol's FIFO buffer per connection, in wire bytes.
func (p Protocol) buffer() int {
	switch p {
	case LL:
		return BufferLL
	case LL128:
		return BufferLL128
	}
	return BufferSimple
}

// stepSize is the wire bytes of one FIFO slot: buffer / NCCL_STEPS.
func (p Protocol) stepSize() int { return p.buffer() / Steps }

// grain is ncclProtoGrainSize: the unit chunk sizes are aligned to.
func (p Protocol) grain() int {
	switch p {
	case LL:
		return 16
	case LL128:
		return 32 * 8 / 16 * 15 * 8 // 1920: a warp's shared-memory lines of data
	}
	return 512
}

// wire is the number of bytes n bytes of data take on the wire: LL
// doubles them (a flag word beside every data word) in lines of 16,
// LL128 sends lines of 128 bytes carrying 120, Simple sends the data as
// it is (its flag goes as a message of its own).
func (p Protocol) wire(n int) int {
	switch p {
	case LL:
		return (n + llLineData - 1) / llLineData * llLineBytes
	case LL128:
		return (n + ll128LineData - 1) / ll128LineData * ll128LineBytes
	}
	return n
}

// ParseProtocol parses "ll", "ll128" or "simple" (any case).
func ParseProtocol(s string) (Protocol, error) {
	for i, n := range protocolNames {
		if equalFold(s, n) {
			return Protocol(i), nil
		}
	}
	return 0, fmt.Errorf("unknown NCCL protocol %q (want ll, ll128 or simple)", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// pack writes data into wire in the protocol's line format with flag,
// the step's flag value. wire must hold p.wire(data.Len()) bytes. Host
// buffers get the real format, so that the receiver checks every line's
// flag; phantom buffers need nothing; other memory (a GPU's) gets the
// data at the front of the wire buffer, whose flags the GPU's own
// kernels would write.
func (p Protocol) pack(l algos.Link, wire, data device.Buffer, flag uint32) error {
	n := data.Len()
	if p == Simple {
		if n == 0 {
			return nil
		}
		return l.Copy(wire.Slice(0, n), data)
	}
	if device.IsPhantom(wire) || device.IsPhantom(data) {
		return nil
	}
	w, wok := device.HostBytes(wire)
	d, dok := device.HostBytes(data)
	if !wok || !dok {
		if n == 0 {
			return nil
		}
		return l.Copy(wire.Slice(0, n), data)
	}
	switch p {
	case LL:
		var line [llLineData]byte
		for i, o := 0, 0; i < n; i, o = i+llLineData, o+llLineBytes {
			chunk := d[i:min(i+llLineData, n)]
			if len(chunk) < llLineData {
				line = [llLineData]byte{}
				copy(line[:], chunk)
				chunk = line[:]
			}
			copy(w[o:o+4], chunk[0:4])
			binary.LittleEndian.PutUint32(w[o+4:], flag)
			copy(w[o+8:o+12], chunk[4:8])
			binary.LittleEndian.PutUint32(w[o+12:], flag)
		}
	case LL128:
		for i, o := 0, 0; i < n; i, o = i+ll128LineData, o+ll128LineBytes {
			k := copy(w[o:o+ll128LineData], d[i:min(i+ll128LineData, n)])
			clear(w[o+k : o+ll128LineData])
			binary.LittleEndian.PutUint64(w[o+ll128LineData:], uint64(flag))
		}
	}
	return nil
}

// unpack reads the data of a step out of wire into data, checking every
// line's flag against flag on host buffers (see pack).
func (p Protocol) unpack(l algos.Link, data, wire device.Buffer, flag uint32) error {
	n := data.Len()
	if p == Simple {
		if n == 0 {
			return nil
		}
		return l.Copy(data, wire.Slice(0, n))
	}
	if device.IsPhantom(wire) || device.IsPhantom(data) {
		return nil
	}
	w, wok := device.HostBytes(wire)
	d, dok := device.HostBytes(data)
	if !wok || !dok {
		if n == 0 {
			return nil
		}
		return l.Copy(data, wire.Slice(0, n))
	}
	switch p {
	case LL:
		for i, o := 0, 0; i < n; i, o = i+llLineData, o+llLineBytes {
			f1, f2 := binary.LittleEndian.Uint32(w[o+4:]), binary.LittleEndian.Uint32(w[o+12:])
			if f1 != flag || f2 != flag {
				return fmt.Errorf("nccl: LL line at byte %d has flags %d, %d, want %d", o, f1, f2, flag)
			}
			var line [llLineData]byte
			copy(line[0:4], w[o:o+4])
			copy(line[4:8], w[o+8:o+12])
			copy(d[i:min(i+llLineData, n)], line[:])
		}
	case LL128:
		for i, o := 0, 0; i < n; i, o = i+ll128LineData, o+ll128LineBytes {
			if f := binary.LittleEndian.Uint64(w[o+ll128LineData:]); f != uint64(flag) {
				return fmt.Errorf("nccl: LL128 line at byte %d has flag %d, want %d", o, f, flag)
			}
			copy(d[i:min(i+ll128LineData, n)], w[o:o+ll128LineData])
		}
	}
	return nil
}
