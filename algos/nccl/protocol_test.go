package nccl

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/device"
)

// FuzzProtocolLines holds LL's and LL128's line format: any data packed
// with a step's flag unpacks to itself; wire bytes from anywhere unpack
// without panicking and are refused unless every line carries the
// expected flag.
func FuzzProtocolLines(f *testing.F) {
	f.Add([]byte("hello, world"), uint32(1), []byte{})
	f.Add(bytes.Repeat([]byte{7}, 241), uint32(9), bytes.Repeat([]byte{1}, 256))
	f.Add([]byte{}, uint32(0), []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte, flag uint32, wire []byte) {
		for _, p := range []Protocol{LL, LL128} {
			w := make(device.Host, p.wire(len(data)))
			if err := p.pack(nil, w, device.Host(data), flag); err != nil {
				t.Fatal(err)
			}
			got := make(device.Host, len(data))
			if err := p.unpack(nil, got, w, flag); err != nil {
				t.Fatalf("%v: packed data does not unpack: %v", p, err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("%v: %x unpacked as %x", p, data, []byte(got))
			}
			if len(data) > 0 {
				if err := p.unpack(nil, got, w, flag+1); err == nil {
					t.Fatalf("%v: a line with flag %d was taken for step %d", p, flag, flag+1)
				}
			}
			// Arbitrary wire bytes: as many data bytes as they can carry.
			n := len(wire) / map[Protocol]int{LL: llLineBytes, LL128: ll128LineBytes}[p] * map[Protocol]int{LL: llLineData, LL128: ll128LineData}[p]
			_ = p.unpack(nil, make(device.Host, n), device.Host(wire[:p.wire(n)]), flag)
		}
	})
}
