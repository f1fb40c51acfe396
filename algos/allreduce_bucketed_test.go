package algos_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// TestSplitTensors checks that the tensors tile the buffer in order, grow
// about linearly, and come out the same every time.
func TestSplitTensors(t *testing.T) {
	for _, c := range []struct{ count, tensors int }{{0, 3}, {1, 1}, {2, 5}, {1000, 4}, {100003, 8}, {7, 7}} {
		buf := make(device.Host, 4*c.count)
		ts := algos.SplitTensors(buf, device.F32, c.tensors)
		if len(ts) != c.tensors {
			t.Fatalf("%d tensors, want %d", len(ts), c.tensors)
		}
		off := 0
		for i, x := range ts {
			h := x.(device.Host)
			if len(h) > 0 && &h[0] != &buf[off] {
				t.Errorf("count %d, %d tensors: tensor %d does not start at byte %d", c.count, c.tensors, i, off)
			}
			// Tensor i holds count*(i+1)/(t(t+1)/2) elements, give or
			// take one for the rounding of each boundary.
			want := float64(c.count) * float64(i+1) / float64(c.tensors*(c.tensors+1)/2)
			if got := float64(len(h) / 4); got < want-1 || got > want+1 {
				t.Errorf("count %d, %d tensors: tensor %d has %g elements, want about %g", c.count, c.tensors, i, got, want)
			}
			off += len(h)
		}
		if off != len(buf) {
			t.Errorf("count %d, %d tensors: they cover %d of %d bytes", c.count, c.tensors, off, len(buf))
		}
	}
}
