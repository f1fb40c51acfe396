package derive_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// realnetLoopback are the figures of scenarios/nexar-defaults-10gbe.toml's
// [network.transport], from realnet's measurements on loopback.
var realnetLoopback = scenario.Transport{QUICLatency: 30 * sim.Microsecond, QUICBandwidth: 1.65e9 / 8, BulkLatency: 16500 * sim.Nanosecond, BulkBandwidth: 1.09e9}

// analytic is the crossover of the closed forms: the bulk path takes
// 3 alpha_b + m beta_b (a request to send and a clear to send on TCP
// first), the QUIC path alpha_q + m beta_q. It is at or below 0 when the
// bulk path is faster at every size.
func analytic(tr scenario.Transport) float64 {
	aq, ab := tr.QUICLatency.Seconds(), 3*tr.BulkLatency.Seconds()
	bq, bb := 1/tr.QUICBandwidth, 1/tr.BulkBandwidth
	return (ab - aq) / (bq - bb)
}

// TestTransportMatchesClosedForm checks the simulated times against the
// closed forms at every size, and the derived threshold against the
// analytic crossover (alpha_b - alpha_q)/(beta_q - beta_b): within one
// step of the sweep (the sizes double, so the step is the size below).
func TestTransportMatchesClosedForm(t *testing.T) {
	cases := []scenario.Transport{
		realnetLoopback,
		// The worked network's latency and rate on QUIC, a ten times
		// faster bulk link.
		{QUICLatency: 5 * sim.Microsecond, QUICBandwidth: 12.5e9, BulkLatency: 2 * sim.Microsecond, BulkBandwidth: 125e9},
		// No bulk latency at all: the rendezvous alone costs.
		{QUICLatency: 50 * sim.Microsecond, QUICBandwidth: 1e8, BulkBandwidth: 1e10},
	}
	rng := rand.New(rand.NewPCG(1, 2)) // seeded: the same cases every run
	for range 20 {
		bq := math.Exp(rng.Float64()*math.Log(1e4) + math.Log(1e7)) // 10 MB/s to 100 GB/s
		cases = append(cases, scenario.Transport{
			QUICLatency:   sim.Time(rng.Int64N(int64(100 * sim.Microsecond))),
			QUICBandwidth: bq,
			BulkLatency:   sim.Time(rng.Int64N(int64(100 * sim.Microsecond))),
			BulkBandwidth: bq * (1.5 + 50*rng.Float64()),
		})
	}
	for i, tr := range cases {
		x, err := derive.DeriveTransport(&tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range x.Points {
			wantQ := tr.QUICLatency + sim.TransferTime(p.Bytes, tr.QUICBandwidth)
			wantB := 3*tr.BulkLatency + sim.TransferTime(p.Bytes, tr.BulkBandwidth)
			if p.QUIC != wantQ.Seconds() || p.Bulk != wantB.Seconds() {
				t.Fatalf("case %d, %d bytes: quic %g s, bulk %g s; closed forms %g s, %g s", i, p.Bytes, p.QUIC, p.Bulk, wantQ.Seconds(), wantB.Seconds())
			}
		}
		want := analytic(tr)
		if first := x.Points[0].Bytes; want <= float64(first) {
			// The bulk path is faster from the first size on.
			if x.Threshold != first {
				t.Errorf("case %d %+v: threshold %d, analytic crossover %g at or below the first size %d", i, tr, x.Threshold, want, first)
			}
			continue
		}
		if x.Threshold == algos.BulkNever {
			t.Errorf("case %d %+v: never, analytic crossover %g bytes", i, tr, want)
			continue
		}
		step := float64(x.Hi - x.Lo)
		if x.Lo == 0 { // bulk faster from the first size
			step = float64(x.Threshold)
		}
		if math.Abs(float64(x.Threshold)-want) > step || math.Abs(x.Bytes-want) > step {
			t.Errorf("case %d %+v: threshold %d (interpolated %g, between %d and %d), analytic %g", i, tr, x.Threshold, x.Bytes, x.Lo, x.Hi, want)
		}
		if x.Lo != 0 && !(float64(x.Lo) <= want && want <= float64(x.Hi)) {
			t.Errorf("case %d: analytic crossover %g outside the bracket [%d, %d]", i, want, x.Lo, x.Hi)
		}
	}
	// realnet's measured one-way crossover lies between 4 and 16 KiB
	// (doc.go, BenchmarkCrossover); the figures of its paths must put the
	// derived one there too.
	x, _ := derive.DeriveTransport(&realnetLoopback, nil)
	t.Logf("realnet's loopback figures: threshold %d bytes (interpolated %.0f, analytic %.0f)", x.Threshold, x.Bytes, analytic(realnetLoopback))
	if x.Threshold <= 4<<10 || x.Threshold > 16<<10 {
		t.Errorf("realnet's loopback figures: threshold %d bytes, realnet measured 4-16 KiB", x.Threshold)
	}
}

func TestTransportEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		tr   scenario.Transport
		want int
	}{
		// A bulk link slower per byte than QUIC never pays for its
		// rendezvous.
		{"slower bulk", scenario.Transport{QUICLatency: sim.Microsecond, QUICBandwidth: 1e9, BulkLatency: sim.Microsecond, BulkBandwidth: 5e8}, algos.BulkNever},
		{"same rate", scenario.Transport{QUICLatency: sim.Microsecond, QUICBandwidth: 1e9, BulkBandwidth: 1e9}, algos.BulkNever},
		// A millionth faster per byte behind a rendezvous of 10 s (two
		// bulk latencies): the paths cross at 10 s / 1e-15 s/B = 1e16
		// bytes, beyond the sweep's 1 TiB.
		{"beyond the sweep", scenario.Transport{QUICBandwidth: 1e9, BulkLatency: 5 * sim.Second, BulkBandwidth: 1.000001e9}, algos.BulkNever},
		// Without latencies the rendezvous is free and the bulk path
		// wins from the first byte.
		{"free rendezvous", scenario.Transport{QUICBandwidth: 1e9, BulkBandwidth: 2e9}, 1},
	} {
		x, err := derive.DeriveTransport(&c.tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if x.Threshold != c.want {
			t.Errorf("%s: threshold %d, want %d", c.name, x.Threshold, c.want)
		}
	}
	// A bandwidth so low that large sizes would overflow the clock ends the
	// sweep early instead.
	slow := scenario.Transport{QUICLatency: sim.Microsecond, QUICBandwidth: 1, BulkBandwidth: 2}
	x, err := derive.DeriveTransport(&slow, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1 B/s: a day holds 86400 bytes, so the sweep ends at 64 KiB; the
	// bulk path, twice as fast, wins from the first byte.
	if last := x.Points[len(x.Points)-1].Bytes; last != 1<<16 || x.Threshold != 1 {
		t.Errorf("1 B/s QUIC: swept up to %d bytes, threshold %d; want 65536 and 1", last, x.Threshold)
	}
	for _, bad := range [][]int{{0, 1}, {4, 2}, {}} {
		if _, err := derive.DeriveTransport(&realnetLoopback, bad); err == nil {
			t.Errorf("sizes %v: no error", bad)
		}
	}
	if _, err := derive.DeriveTransport(&scenario.Transport{QUICBandwidth: 1e9}, nil); err == nil {
		t.Error("no bulk bandwidth: no error")
	}
}

// TestDeriveWritesTransport checks that Derive puts the threshold in the
// table, even with no collective to tune, and leaves it out without a
// transport.
func TestDeriveWritesTransport(t *testing.T) {
	res, err := derive.Derive(nil, derive.Options{Transport: &realnetLoopback})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tuning == nil || res.Tuning.Transport == nil || res.Transport == nil || res.Tuning.Transport.Bulk != res.Transport.Threshold {
		t.Fatalf("tuning %+v, transport %+v", res.Tuning, res.Transport)
	}
	var out bytes.Buffer
	res.Tuning.WriteTo(&out)
	if want := fmt.Sprintf("[transport]\nbulk_threshold = %d\n", res.Transport.Threshold); !strings.Contains(out.String(), want) {
		t.Errorf("table\n%s\ndoes not say\n%s", out.String(), want)
	}
	back, err := algos.ParseTuning("derived.toml", out.Bytes())
	if err != nil || back.Transport == nil || *back.Transport != *res.Tuning.Transport {
		t.Errorf("read back: %+v, %v", back, err)
	}

	res, err = derive.Derive(nil, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tuning != nil || res.Transport != nil {
		t.Errorf("no transport, no collectives: tuning %+v, transport %+v", res.Tuning, res.Transport)
	}

	slower := scenario.Transport{QUICLatency: sim.Microsecond, QUICBandwidth: 1e9, BulkBandwidth: 5e8}
	res, err = derive.Derive(nil, derive.Options{Transport: &slower})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tuning.Transport.Bulk != algos.BulkNever || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "never") {
		t.Errorf("slower bulk path: %+v, notes %q", res.Tuning.Transport, res.Notes)
	}
}

// TestEagerThreshold: with copy_bandwidth, the eager threshold is where
// an unexpected eager message (alpha_b + m beta_b + m/copy) costs more
// than a rendezvous on TCP (3 alpha_b + m beta_b): m = 2 alpha_b copy,
// within one step of the doubling sweep; and it goes into the table.
func TestEagerThreshold(t *testing.T) {
	for _, tr := range []scenario.Transport{
		{QUICLatency: 30 * sim.Microsecond, QUICBandwidth: 1.65e9 / 8, BulkLatency: 5 * sim.Microsecond, BulkBandwidth: 1.09e9, CopyBandwidth: 10e9},
		{QUICLatency: 5 * sim.Microsecond, QUICBandwidth: 1e9, BulkLatency: 20 * sim.Microsecond, BulkBandwidth: 12e9, CopyBandwidth: 2e9},
	} {
		x, err := derive.DeriveTransport(&tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		ab := tr.BulkLatency.Seconds()
		for _, p := range x.Points {
			wantE := tr.BulkLatency + sim.TransferTime(p.Bytes, tr.BulkBandwidth) + sim.TransferTime(p.Bytes, tr.CopyBandwidth)
			wantR := 3*tr.BulkLatency + sim.TransferTime(p.Bytes, tr.BulkBandwidth)
			if p.Eager != wantE.Seconds() || p.Rendezvous != wantR.Seconds() {
				t.Fatalf("%d bytes: eager %g s, rendezvous %g s; closed forms %g s, %g s", p.Bytes, p.Eager, p.Rendezvous, wantE.Seconds(), wantR.Seconds())
			}
		}
		want := 2 * ab * tr.CopyBandwidth
		if got := float64(x.EagerThreshold); got < want/2 || got > 2*want {
			t.Errorf("%+v: eager threshold %d, analytic %g", tr, x.EagerThreshold, want)
		}
		res, err := derive.Derive(nil, derive.Options{Transport: &tr})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res.Tuning.WriteTo(&out)
		if w := fmt.Sprintf("eager_threshold = %d\n", x.EagerThreshold); !strings.Contains(out.String(), w) {
			t.Errorf("table\n%s\ndoes not say %s", out.String(), w)
		}
	}
	// Without copy_bandwidth, no eager threshold.
	x, err := derive.DeriveTransport(&realnetLoopback, nil)
	if err != nil || x.EagerThreshold != 0 || x.Points[0].Eager != 0 {
		t.Errorf("no copy_bandwidth: eager threshold %d, %v", x.EagerThreshold, err)
	}
}
