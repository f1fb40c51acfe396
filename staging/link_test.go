package staging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

var testModel = sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}

// countingLink counts what a Link hands to its inner link.
type countingLink struct {
	algos.Link
	sends, recvs []int // bytes of each inner send and receive
}

func (c *countingLink) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	c.sends = append(c.sends, buf.Len())
	return c.Link.Isend(dst, tag, buf)
}

func (c *countingLink) Irecv(src int, tag algos.Tag, buf device.Buffer) algos.Request {
	c.recvs = append(c.recvs, buf.Len())
	return c.Link.Irecv(src, tag, buf)
}

// stagedRun runs body on world simulated ranks, each through a Link with a
// fake mover, and then checks what every run must leave behind: no staging
// copy pending, no send pending, every pinned region back in the pool (and
// freed by Close).
func stagedRun(t *testing.T, world, chunk int, seed uint64, body func(ctx context.Context, l *Link, m *fakeMover) error) error {
	t.Helper()
	_, err := sim.Run(sim.Config{World: world, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
		m := newFakeMover(seed, inner.Rank())
		l := newLink(inner, m, linkConfig{chunk: chunk})
		l.onRelease = func(b []byte) {
			for i := range b {
				b[i] = poison
			}
		}
		if err := body(ctx, l, m); err != nil {
			return err
		}
		if m.pending() != 0 {
			return fmt.Errorf("%d staging copies never completed", m.pending())
		}
		if len(l.sends) != 0 {
			return fmt.Errorf("%d sends still pending", len(l.sends))
		}
		idle := 0
		for _, f := range l.pins.free {
			idle += len(f)
		}
		if idle != len(l.pins.all) {
			return fmt.Errorf("%d of %d pinned regions not returned to the pool", len(l.pins.all)-idle, len(l.pins.all))
		}
		return l.Close()
	})
	return err
}

// TestStagedAllreduce runs every allreduce algorithm of the catalogue
// through the staging Link (fake mover) on the simulator, for world sizes
// 2, 3 and 4, element counts 0, 1, odd and larger, chunk sizes that leave
// odd tails (3 and 100 bytes) and that hold whole messages, and checks the
// exact reduction on every rank.
func TestStagedAllreduce(t *testing.T) {
	coll, err := algos.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	types := []device.DType{device.F32, device.BF16, device.I8, device.F64, device.U16, device.F16}
	counts := []int{0, 1, 7, 1003}
	chunks := []int{3, 100, DefaultChunk}
	if testing.Short() {
		counts = []int{0, 1, 101}
		chunks = []int{3, 100}
	}
	params := map[string]int{"segment": 64, "group": 2, "tensors": 3}
	run := 0
	for _, a := range coll.Algorithms {
		if a.Lossy() {
			continue // a compressed allreduce selects on the host: it refuses device memory
		}
		for _, p := range []int{2, 3, 4} {
			if a.PowerOfTwo && p&(p-1) != 0 {
				continue
			}
			for _, count := range counts {
				for _, chunk := range chunks {
					run++
					dt := types[run%len(types)]
					op := device.Ops()[run%4]
					seed := uint64(run)
					want := algotest.Reduced(count, dt, op, p, seed)
					err := stagedRun(t, p, chunk, seed, func(ctx context.Context, l *Link, m *fakeMover) error {
						buf := fakeDev(algotest.Input(count, dt, op, l.Rank(), p, seed))
						if err := a.Run(ctx, l, algos.Call{Buf: buf, DType: dt, Op: op, Params: params}); err != nil {
							return err
						}
						if count > 0 && m.copies == 0 {
							return errors.New("nothing was staged")
						}
						return algotest.Compare(buf, want, dt)
					})
					if err != nil {
						t.Errorf("%s p=%d count=%d %s %s chunk=%d seed=%d: %v", a.Name, p, count, dt, op, chunk, seed, err)
					}
				}
			}
		}
	}
}

// TestStagedChunking checks how messages are cut: a message of n bytes is
// ceil(n/chunk) inner messages (one if empty), received into pieces of the
// same sizes, and delivered intact.
func TestStagedChunking(t *testing.T) {
	for _, c := range []struct{ n, chunk int }{{0, 4}, {1, 4}, {4, 4}, {5, 4}, {1000, 64}, {1024, 64}, {1000, 1 << 20}} {
		var sent, recvd []int
		payload := make([]byte, c.n)
		for i := range payload {
			payload[i] = byte(i*7 + 1)
		}
		_, err := sim.Run(sim.Config{World: 2, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
			cl := &countingLink{Link: inner}
			m := newFakeMover(1, inner.Rank())
			l := newLink(cl, m, linkConfig{chunk: c.chunk})
			defer l.Close()
			buf := fakeDev(make([]byte, c.n))
			if l.Rank() == 0 {
				copy(buf, payload)
				if err := algos.Send(ctx, l, 1, 5, buf); err != nil {
					return err
				}
				sent = cl.sends
				return nil
			}
			if err := algos.Recv(ctx, l, 0, 5, buf); err != nil {
				return err
			}
			recvd = cl.recvs
			if !bytes.Equal(buf, payload) {
				return errors.New("payload corrupted")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("n=%d chunk=%d: %v", c.n, c.chunk, err)
		}
		want := []int{}
		for off := 0; off < c.n || off == 0; off += c.chunk {
			want = append(want, min(c.chunk, c.n-off))
			if c.n == 0 {
				break
			}
		}
		if fmt.Sprint(sent) != fmt.Sprint(want) || fmt.Sprint(recvd) != fmt.Sprint(want) {
			t.Errorf("n=%d chunk=%d: sent %v, received %v; want %v", c.n, c.chunk, sent, recvd, want)
		}
	}
}

// TestStagedOrdering sends several multi-chunk messages with one tag to
// one peer back to back, and one with another tag, with fences that
// complete out of step with the order they are polled in (the first
// message's need more polls than the second's), and checks that each
// receive gets its own message: chunks of later messages to the same
// (peer, tag) must not overtake those of earlier ones.
func TestStagedOrdering(t *testing.T) {
	const n, chunk, msgs = 1000, 64, 4
	for seed := range uint64(20) {
		_, err := sim.Run(sim.Config{World: 2, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
			m := newFakeMover(seed, inner.Rank())
			issued := 0
			m.polls = func() int {
				issued++
				if issued <= n/chunk+1 {
					return 3 + m.rng.IntN(3) // the first message's copies lag
				}
				return m.rng.IntN(2)
			}
			l := newLink(inner, m, linkConfig{chunk: chunk})
			defer l.Close()
			bufs := make([]fakeDev, msgs)
			var reqs []algos.Request
			for i := range bufs {
				bufs[i] = make(fakeDev, n)
				tag := algos.Tag(1)
				if i == msgs-1 {
					tag = 2
				}
				if l.Rank() == 0 {
					for j := range bufs[i] {
						bufs[i][j] = byte(i*31 + j)
					}
					reqs = append(reqs, l.Isend(1, tag, bufs[i]))
				} else {
					reqs = append(reqs, l.Irecv(0, tag, bufs[i]))
				}
			}
			// Poll progress a few times before waiting, as an
			// algorithm's later calls would.
			for range 3 {
				if err := l.Reduce(device.Host{}, device.Host{}, device.U8, device.Sum); err != nil {
					return err
				}
			}
			if err := l.Wait(ctx, reqs...); err != nil {
				return err
			}
			if l.Rank() == 1 {
				for i, b := range bufs {
					for j, v := range b {
						if v != byte(i*31+j) {
							return fmt.Errorf("message %d byte %d is %d, want %d", i, j, v, byte(i*31+j))
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestStagedHostBuffers exchanges messages between host and device
// buffers in every combination: host buffers are cut into the same chunks
// (so that a device buffer can receive a host buffer's message) but not
// copied, and a host-to-host exchange makes no staging copy at all.
func TestStagedHostBuffers(t *testing.T) {
	const n = 1000
	for _, kinds := range [][2]string{{"host", "host"}, {"host", "device"}, {"device", "host"}, {"device", "device"}} {
		err := stagedRun(t, 2, 64, 1, func(ctx context.Context, l *Link, m *fakeMover) error {
			mk := func(kind string, fill byte) device.Buffer {
				b := make([]byte, n)
				for i := range b {
					b[i] = fill + byte(i)
				}
				if kind == "host" {
					return device.Host(b)
				}
				return fakeDev(b)
			}
			me, peer := l.Rank(), 1-l.Rank()
			send := mk(kinds[me], byte(10*me))
			recv := mk(kinds[me], 0) // the peer's message, of the other kind if kinds differ
			if err := algos.SendRecv(ctx, l, peer, send, peer, recv, 4); err != nil {
				return err
			}
			var got []byte
			switch b := recv.(type) {
			case device.Host:
				got = b
			case fakeDev:
				got = b
			}
			for i, v := range got {
				if v != byte(10*peer)+byte(i) {
					return fmt.Errorf("byte %d is %d", i, v)
				}
			}
			if staged := kinds[me] == "device"; staged != (m.copies > 0) {
				return fmt.Errorf("%d staging copies", m.copies)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s to %s: %v", kinds[0], kinds[1], err)
		}
	}
}

// TestStagedCopyAndReduce covers Copy and Reduce between every kind of
// buffer: device and host work (the host-device copies through staging
// copies that Copy waits for); a reduction of mixed kinds is an error.
func TestStagedCopyAndReduce(t *testing.T) {
	err := stagedRun(t, 1, 16, 1, func(ctx context.Context, l *Link, m *fakeMover) error {
		d := l.Alloc(8).(fakeDev)
		if !bytes.Equal(d, bytes.Repeat([]byte{poison}, 8)) {
			return errors.New("Alloc did not come from the mover")
		}
		h := device.Host{1, 2, 3, 4, 5, 6, 7, 8}
		if err := l.Copy(d, h); err != nil || !bytes.Equal(d, h) {
			return fmt.Errorf("host to device: %v, %v", err, d)
		}
		d2 := l.Alloc(8)
		if err := l.Copy(d2, d); err != nil || !bytes.Equal(d2.(fakeDev), h) {
			return fmt.Errorf("device to device: %v", err)
		}
		if err := l.Reduce(d2, d, device.U8, device.Sum); err != nil {
			return err
		}
		back := make(device.Host, 8)
		if err := l.Copy(back, d2); err != nil || !bytes.Equal(back, device.Host{2, 4, 6, 8, 10, 12, 14, 16}) {
			return fmt.Errorf("device to host: %v, %v", err, back)
		}
		if err := l.Reduce(d, h, device.U8, device.Sum); err == nil || !strings.Contains(err.Error(), "device buffer") {
			return fmt.Errorf("mixed reduce: %v", err)
		}
		if err := l.Copy(d, make(device.Host, 4)); err == nil {
			return errors.New("copy of mismatched lengths succeeded")
		}
		if err := l.Copy(d, device.Phantom(8)); err == nil {
			return errors.New("copy of a phantom buffer into device memory succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStagedErrors covers requests Wait does not own, a failing staging
// copy, and a bad chunk option.
func TestStagedErrors(t *testing.T) {
	if _, err := configure([]Option{WithChunk(0)}); err == nil {
		t.Error("WithChunk(0) accepted")
	}
	if cfg, err := configure(nil); err != nil || cfg.chunk != DefaultChunk {
		t.Errorf("default configuration: %+v, %v", cfg, err)
	}
	_, err := sim.Run(sim.Config{World: 2, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
		m := newFakeMover(1, inner.Rank())
		l := newLink(inner, m, linkConfig{chunk: 8})
		other := newLink(inner, newFakeMover(2, inner.Rank()), linkConfig{chunk: 8})
		if err := l.Wait(ctx, other.Isend(l.Rank(), 9, device.Host{})); err == nil {
			return errors.New("Wait on another link's request succeeded")
		}
		if err := l.Wait(ctx, "request"); err == nil {
			return errors.New("Wait on a foreign request succeeded")
		}
		if l.Rank() == 0 {
			m.fail = errors.New("copy engine on fire")
			r := l.Isend(1, 3, fakeDev(make([]byte, 32)))
			if err := l.Wait(ctx, r); !errors.Is(err, m.fail) {
				return fmt.Errorf("failed copy: Wait returned %v", err)
			}
		}
		_ = other.Close()
		if err := l.Close(); err != nil {
			return err
		}
		if r := l.Isend(0, 1, fakeDev(make([]byte, 8))); l.Wait(ctx, r) == nil {
			return errors.New("send on a closed link succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPinnedClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1, minPinned}, {minPinned, minPinned}, {minPinned + 1, 2 * minPinned}, {3 << 20, 4 << 20}, {4 << 20, 4 << 20}} {
		if got := pinnedClass(c.n); got != c.want {
			t.Errorf("pinnedClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
