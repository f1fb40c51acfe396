package algos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// poisonPool decorates a link with a ScratchPool that hands out what a
// pool reusing memory would at its worst: fresh buffers full of random
// bytes, released ones with the bytes they held. It records the buffers
// out, so that a test can tell a release of a buffer it never handed out
// (or twice), and scratch an algorithm kept.
type poisonPool struct {
	algos.Link
	rng  *rand.Rand
	mu   sync.Mutex
	free map[int][]device.Host
	out  map[*byte]int // the buffers handed out, by their first byte: their length
	bad  error
}

func newPoisonPool(l algos.Link, seed uint64) *poisonPool {
	return &poisonPool{Link: l, rng: rand.New(rand.NewPCG(seed, uint64(l.Rank()))), free: map[int][]device.Host{}, out: map[*byte]int{}}
}

func (p *poisonPool) Unwrap() algos.Link { return p.Link }

func (p *poisonPool) Scratch(n int) device.Buffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n == 0 {
		return device.Host{}
	}
	var b device.Host
	if q := p.free[n]; len(q) > 0 {
		b, p.free[n] = q[len(q)-1], q[:len(q)-1]
	} else {
		b = make(device.Host, n)
		for i := range b {
			b[i] = byte(p.rng.Uint32())
		}
	}
	p.out[&b[0]] = n
	return b
}

func (p *poisonPool) Release(buf device.Buffer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := buf.(device.Host)
	if !ok || len(b) == 0 {
		return
	}
	if n, out := p.out[&b[0]]; !out || n != len(b) {
		p.bad = fmt.Errorf("released %d bytes that Scratch did not hand out, or released them twice", len(b))
		return
	}
	delete(p.out, &b[0])
	p.free[len(b)] = append(p.free[len(b)], b)
}

// kept returns an error if scratch is still out, or a release was wrong.
func (p *poisonPool) kept() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bad != nil {
		return p.bad
	}
	if len(p.out) > 0 {
		return fmt.Errorf("%d scratch buffers not released", len(p.out))
	}
	return nil
}

// TestScratchContents runs every algorithm of the catalogue (this
// package's, not another library's) with scratch memory from a pool that
// hands out garbage and the garbage earlier calls left, as realnet's does,
// and checks each result against the collective's reference: no
// algorithm may read scratch it has not written. Every scratch buffer an
// algorithm takes must be back in the pool when its call succeeds, or
// realnet would allocate it afresh on the next call.
func TestScratchContents(t *testing.T) {
	const seed = 11
	dt, op := device.F32, device.Sum
	model := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}
	for _, p := range []int{1, 2, 3, 4, 5, 7, 8} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			root := 1 % p
			_, err := sim.Run(sim.Config{World: p, Model: model, HostData: true}, func(ctx context.Context, l algos.Link) error {
				pool := newPoisonPool(l, seed)
				var seq uint64
				for _, name := range algos.CollectiveNames() {
					c, err := algos.Lookup(name)
					if err != nil {
						return err
					}
					ref, known := algotest.LookupReference(name)
					for _, a := range c.Algorithms {
						if a.Family != "" || a.PowerOfTwo && p&(p-1) != 0 || !known {
							continue
						}
						// Twice each: the second call gets the first's
						// scratch back, with what it left there.
						for _, count := range []int{4099 * p, 4099 * p, p, 1} {
							send, recv, used := c.Layout(count, p)
							seq++
							sendBuf, buf := make([]byte, send*dt.Size()), make([]byte, recv*dt.Size())
							want := ref(algotest.Case{Algorithm: a, DType: dt, Op: op, Root: root, World: p, Count: used, Seed: seed})(l.Rank(), sendBuf, buf)
							call := algos.Call{DType: dt, Op: op, Root: root, Buf: device.Host(buf)}
							if send > 0 {
								call.Send = device.Host(sendBuf)
							}
							err := a.Run(ctx, algos.Scoped(pool, 0, seq), call)
							if err == nil {
								err = algotest.Check(buf, want, dt)
							}
							if err == nil {
								err = pool.kept()
							}
							if err != nil {
								return fmt.Errorf("%s/%s, count %d: %w", name, a.Name, count, err)
							}
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Errorf("p=%d (seed %d): %v", p, seed, err)
			}
		})
	}
}
