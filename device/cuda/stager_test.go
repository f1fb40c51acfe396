package cuda

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda/cudamock"
)

// TestStager runs a Stager's operations in the order a staging link issues
// them (upload, reduce, download; copy, download) and checks the bytes,
// the pooled and pinned memory's rules, and, on the mock, that Close frees
// every allocation, stream and event the Stager made.
func TestStager(t *testing.T) {
	onDevices(t, func(t *testing.T, d *Device, large bool) {
		onMock := mock.ctl != nil && d.drv == mock.drv
		var before cudamock.Counts
		if onMock {
			before = mockCounters()
		}
		st, err := NewStager(d)
		if err != nil {
			t.Fatal(err)
		}
		const n = 4096 // f32 elements
		a, err := st.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := st.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		if !st.IsDevice(a) || st.IsDevice(device.Host(nil)) {
			t.Error("IsDevice does not tell device from host memory")
		}
		if err := a.Free(); err == nil {
			t.Error("Free of a pooled buffer succeeded")
		}
		pin, err := st.AllocPinned(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		x, y := make([]byte, 4*n), make([]byte, 4*n)
		for i := range x {
			x[i], y[i] = byte(i%7), byte(i%5) // small exact sums in every byte of each f32
		}
		for _, c := range []struct {
			dst *Buffer
			src []byte
		}{{a, x}, {b, y}} {
			copy(pin, c.src)
			f, err := st.FromHost(c.dst, pin)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Reduce(a, b, device.F32, device.Sum); err != nil {
			t.Fatal(err)
		}
		if err := st.Synchronize(); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), x...)
		device.ReduceHost(want, y, device.F32, device.Sum)
		download := func(src *Buffer) []byte {
			t.Helper()
			clear(pin)
			f, err := st.ToHost(pin, src)
			if err != nil {
				t.Fatal(err)
			}
			for polls := 0; ; polls++ {
				done, err := f.Done()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
				if polls == 1_000_000 {
					t.Fatal("a fence never completed")
				}
			}
			if err := f.Wait(); err != nil { // a completed fence stays completed
				t.Fatal(err)
			}
			return append([]byte(nil), pin...)
		}
		if got := download(a); !bytes.Equal(got, want) {
			t.Error("the download after a reduction does not see its result")
		}
		if err := st.Copy(b, a); err != nil {
			t.Fatal(err)
		}
		if got := download(b); !bytes.Equal(got, want) {
			t.Error("the download after a device copy does not see its result")
		}
		if err := st.FreePinned(pin); err != nil {
			t.Fatal(err)
		}
		if err := st.FreePinned(pin); err == nil {
			t.Error("a second FreePinned succeeded")
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Alloc(16); err == nil {
			t.Error("Alloc after Close succeeded")
		}
		if onMock {
			if after := mockCounters(); after.Allocs != before.Allocs || after.Pinned != before.Pinned ||
				after.Streams != before.Streams || after.Events != before.Events {
				t.Errorf("the Stager leaked: before %+v, after %+v", before, after)
			}
		}
	})
}
