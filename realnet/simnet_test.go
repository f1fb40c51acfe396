package realnet

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/realnet/simnetbw"
	"github.com/nexar-go/nexar-go/sim"
)

// simWorld starts p ranks on an emulated network; call it inside a
// synctest bubble. Rank 0 hosts the seed. The credentials are made inside
// the bubble too: certificates are checked against the bubble's clock,
// which starts in 2000.
func simWorld(t *testing.T, n *simnetbw.Network, p int, cfg Config) ([]*Link, func()) {
	t.Helper()
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Credentials, err = ca.Credentials("rank"); err != nil {
		t.Fatal(err)
	}
	conns := make([]net.PacketConn, p)
	eps := make([]*Endpoint, p)
	for i := range eps {
		conns[i] = n.NewEndpoint(&net.UDPAddr{IP: net.IPv4(10, 0, byte(i>>8), byte(i+1)), Port: 9000})
		if eps[i], err = Listen(conns[i], cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := eps[0].HostSeed(p, ""); err != nil {
		t.Fatal(err)
	}
	seed := eps[0].Addr().String()
	links := make([]*Link, p)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { links[i], errs[i] = ep.Join(context.Background(), seed, i, p) })
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	return links, func() {
		closeWorld(t, links)
		for _, c := range conns {
			c.Close()
		}
		n.Close()
	}
}

// TestCatalogueSimnet runs the whole catalogue on the emulated network in
// virtual time, with a latency of 1 ms that costs no wall time.
func TestCatalogueSimnet(t *testing.T) {
	worlds := []int{2, 3, 4, 8}
	counts := []int{1, 4099, 100003}
	if testing.Short() {
		worlds, counts = []int{4}, counts[:2]
	}
	unchecked := map[string]bool{}
	for _, p := range worlds {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := &simnetbw.Network{Latency: time.Millisecond, Bandwidth: 1.25e9}
				links, closeAll := simWorld(t, n, p, Config{})
				defer closeAll()
				start := time.Now()
				runCatalogue(t, links, counts, unchecked)
				t.Logf("virtual time: %v", time.Since(start))
			})
		})
	}
}

// TestSimnetVsModel compares the duration of a QUIC ring allreduce on the
// emulated network, in virtual time, with the simulator's alpha-beta
// prediction for the same latency and bandwidth: the first check of the
// cost model against a real protocol stack. Reductions take no virtual
// time, so the model's reduce bandwidth is infinite.
func TestSimnetVsModel(t *testing.T) {
	const p = 4
	const latency = 100 * time.Microsecond
	const bandwidth = 125e6 // 1 Gbit/s
	sizes := []int{4 << 10, 64 << 10, 1 << 20, 8 << 20}
	if testing.Short() {
		sizes = sizes[:3]
	}
	model := sim.AlphaBeta{Latency: sim.Time(latency.Nanoseconds()) * sim.Nanosecond, Bandwidth: bandwidth}
	for _, n := range sizes {
		res, err := sim.Run(sim.Config{World: p, Model: model}, func(ctx context.Context, l algos.Link) error {
			return algos.RingAllreduce(ctx, l, l.Alloc(n), device.F32, device.Sum)
		})
		if err != nil {
			t.Fatal(err)
		}
		predicted := time.Duration(res.End.Seconds() * 1e9)
		var first, steady time.Duration
		synctest.Test(t, func(t *testing.T) {
			net := &simnetbw.Network{Latency: latency, Bandwidth: bandwidth}
			links, closeAll := simWorld(t, net, p, Config{Thresholds: algos.Thresholds{Bulk: -1}})
			defer closeAll()
			bufs := make([]device.Host, p)
			for i := range bufs {
				bufs[i] = make(device.Host, n)
			}
			var times []time.Duration
			for it := range 4 {
				synctest.Wait() // every rank idle: they start at one instant
				start := time.Now()
				errs := run(links, func(ctx context.Context, l *Link) error {
					return algos.RingAllreduce(ctx, algos.Scoped(l, 0, uint64(it+1)), bufs[l.Rank()], device.F32, device.Sum)
				})
				if err := firstErr(errs); err != nil {
					t.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			first = times[0]
			rest := slices.Clone(times[1:])
			slices.Sort(rest)
			steady = rest[len(rest)/2]
		})
		t.Logf("ring allreduce p=%d n=%7d B: alpha-beta %9v, QUIC first %9v (x%.2f), QUIC steady %9v (x%.2f)",
			p, n, predicted, first, first.Seconds()/predicted.Seconds(), steady, steady.Seconds()/predicted.Seconds())
		if r := steady.Seconds() / predicted.Seconds(); r < 0.95 {
			t.Errorf("QUIC beat the model's lower bound: ratio %.2f", r)
		}
	}
}
