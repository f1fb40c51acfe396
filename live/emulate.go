package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/realnet/simnetbw"
	"github.com/nexar-go/nexar-go/units"
)

// Emulation describes an emulated network for runs on one machine: a
// switch with one port per rank (realnet/simnetbw over quic-go's simnet),
// each port serialising packets at Bandwidth, the switch adding Latency.
// The ranks run in one process and the network runs in real time, so
// what is measured is QUIC over a network of those parameters, plus the
// machine's own CPU costs of the protocol: choose a network slow enough
// that the CPU is not what is measured (on a 2-core machine, some
// hundreds of microseconds and some tens of MB/s).
type Emulation struct {
	// Latency is the one-way delay through the switch.
	Latency time.Duration
	// Bandwidth of every port, each direction, in bytes per second; 0 is
	// unlimited.
	Bandwidth float64
	// MTU is the largest packet (default 1500).
	MTU int
	// Queue drops packets that would wait longer than this in a port's
	// queue (a switch buffer of Queue x Bandwidth bytes); 0 drops none.
	Queue time.Duration
}

// ParseEmulation reads an emulation as --emulate takes it: comma-separated
// key=value pairs, latency (a duration: "500us", "2ms") and bandwidth
// ("100Mbit/s", "12.5MB/s") required, mtu (bytes) and queue (a duration)
// optional: "latency=1ms,bandwidth=100Mbit/s".
func ParseEmulation(s string) (Emulation, error) {
	var e Emulation
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return e, fmt.Errorf("emulate: %q is not key=value (want latency=..,bandwidth=..)", part)
		}
		if seen[k] {
			return e, fmt.Errorf("emulate: %s given twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "latency", "queue":
			var t units.Picoseconds
			if t, err = units.ParseDuration(v); err == nil {
				d := time.Duration(t.Seconds() * 1e9)
				if k == "latency" {
					e.Latency = d
				} else {
					e.Queue = d
				}
			}
		case "bandwidth":
			e.Bandwidth, err = units.ParseBandwidth(v)
		case "mtu":
			var n int64
			if n, err = units.ParseBytes(v); err == nil && (n < 1280 || n > 65535) {
				err = fmt.Errorf("%d bytes: QUIC needs 1280 to 65535", n)
			}
			e.MTU = int(n)
		default:
			return e, fmt.Errorf("emulate: unknown key %q (want latency, bandwidth, mtu, queue)", k)
		}
		if err != nil {
			return e, fmt.Errorf("emulate: %s: %v", k, err)
		}
	}
	if !seen["latency"] || !seen["bandwidth"] {
		return e, fmt.Errorf("emulate: %q: latency and bandwidth are required", s)
	}
	return e, nil
}

func (e Emulation) String() string {
	s := fmt.Sprintf("latency=%v,bandwidth=%s", e.Latency, units.FormatBandwidth(e.Bandwidth))
	if e.MTU != 0 {
		s += fmt.Sprintf(",mtu=%d", e.MTU)
	}
	if e.Queue != 0 {
		s += fmt.Sprintf(",queue=%v", e.Queue)
	}
	return s
}

// RunEmulated runs job with its ranks in this process, as goroutines, over
// an emulated network in real time; rank 0 records in out. (The realnet
// tests run the same network in virtual time inside testing/synctest,
// which only a test can do.) There is no bulk TCP path: every byte crosses
// the emulated network over QUIC.
//
// A rank that fails leaves the world at once, so the others fail too,
// naming it; RunEmulated returns the error of the rank to blame.
func RunEmulated(ctx context.Context, em Emulation, job *Job, out Output, cfg realnet.Config) (*Report, error) {
	p := job.Points[0].World
	ca, err := realnet.NewCA()
	if err != nil {
		return nil, err
	}
	if cfg.Credentials, err = ca.Credentials("rank"); err != nil {
		return nil, err
	}
	cfg.NoBulk = true
	used := ThresholdsOf(cfg)
	out.Transport = &used
	n := &simnetbw.Network{Latency: em.Latency, Bandwidth: em.Bandwidth, MTU: em.MTU, MaxQueue: em.Queue}
	conns := make([]net.PacketConn, p)
	eps := make([]*realnet.Endpoint, p)
	cleanup := func() {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		n.Close()
	}
	for i := range p {
		conns[i] = n.NewEndpoint(&net.UDPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 9000})
		if eps[i], err = realnet.Listen(conns[i], cfg); err != nil {
			cleanup()
			return nil, err
		}
	}
	if err := eps[0].HostSeed(p, ""); err != nil {
		cleanup()
		return nil, err
	}
	seed := eps[0].Addr().String()
	links := make([]*realnet.Link, p)
	errs := make([]error, p)
	jctx, cancel := context.WithTimeout(ctx, DefaultJoinTimeout)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { links[i], errs[i] = ep.Join(jctx, seed, i, p) })
	}
	wg.Wait()
	cancel()
	if err := errors.Join(errs...); err != nil {
		cleanup()
		return nil, fmt.Errorf("live: assembling the emulated world: %w", err)
	}
	out.Timing = job.Options.Timing
	if out.Preamble == nil {
		out.Preamble = Preamble(job, fmt.Sprintf("%d ranks in one process over an emulated network (%v), QUIC only", p, em))
	}
	var rep *Report
	for i, l := range links {
		wg.Go(func() {
			var r *Report
			r, errs[i] = runLinked(ctx, l, job, out, nil)
			if errs[i] != nil && !IsWrongData(errs[i]) {
				l.Abort()
			}
			if i == 0 {
				rep = r
			}
		})
	}
	wg.Wait()
	failed := false
	for _, err := range errs {
		if err != nil && !IsWrongData(err) {
			failed = true
		}
	}
	if !failed {
		// Together: a rank's Close waits for every peer's farewell.
		cerrs := make([]error, p)
		for i, l := range links {
			wg.Go(func() { cerrs[i] = l.Close() })
		}
		wg.Wait()
		if err := errors.Join(cerrs...); err != nil {
			cleanup()
			return rep, fmt.Errorf("live: leaving the emulated world: %w", err)
		}
	}
	cleanup()
	return rep, blame(errs)
}

// blame picks the error of a failed in-process run to report: a rank's
// own failure before the errors of the ranks that lost it.
func blame(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if first == nil {
			first = err
		}
		if Blamed(err) < 0 && !errors.Is(err, realnet.ErrClosed) {
			return err
		}
	}
	return first
}
