package staging

import (
	"context"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda"
	"github.com/nexar-go/nexar-go/sim"
)

// The streams program of a training step runs on GPU buffers as it does
// on the simulator: the compute stream writes each layer's gradients into
// device memory, records an event; the communication stream waits for it
// and allreduces them. A staging Link cannot spawn, so the streams run
// their work as it is queued, in order (algos.Streams); the results are
// exact on the real GPU and on the mock driver.
func TestStreamsOnDevice(t *testing.T) {
	onDevices(t, func(t *testing.T, d *cuda.Device, _ bool) {
		const p, layers, count = 4, 3, 1001
		dt, op := device.F32, device.Sum
		_, err := sim.Run(sim.Config{World: p, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
			l, err := NewLink(inner, d, WithChunk(1<<12))
			if err != nil {
				return err
			}
			defer l.Close()
			c, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
			if err != nil {
				return err
			}
			computed := 0
			ss := algos.NewStreams(l, algos.WithCompute(func(context.Context, time.Duration) error { computed++; return nil }))
			cs, ds := ss.NewStream("compute"), ss.NewStream("dp")
			bufs := make([]device.Buffer, layers)
			for i := range layers {
				bufs[i] = l.Alloc(count * dt.Size())
				var ready algos.Event
				cs.Compute(ctx, time.Millisecond, "backward")
				cs.Do(ctx, "gradients", func(context.Context) error {
					return d.CopyFromHost(bufs[i], algotest.Input(count, dt, op, l.Rank(), p, uint64(i)))
				})
				cs.Record(&ready)
				ds.WaitEvent(&ready)
				ds.AllReduce(ctx, c, bufs[i], dt, op, "bucket")
			}
			var done algos.Event
			ds.Record(&done)
			if err := done.Synchronize(ctx); err != nil {
				return err
			}
			if computed != layers {
				t.Errorf("rank %d: %d computes ran, want %d", l.Rank(), computed, layers)
			}
			for i, b := range bufs {
				got := make([]byte, b.Len())
				if err := d.CopyToHost(got, b); err != nil {
					return err
				}
				if err := algotest.Compare(got, algotest.Reduced(count, dt, op, p, uint64(i)), dt); err != nil {
					t.Errorf("rank %d layer %d: %v", l.Rank(), i, err)
				}
			}
			return ss.Synchronize(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
