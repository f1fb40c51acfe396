package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The engine's results on the whole catalogue are pinned in
// testdata/engine_golden.txt: a hash per run of every field of its
// result, its error and everything an observer was told. They were
// written by the engine before it could replay programs, and every change
// to the engine must keep them (TestReplayMatchesCoroutines). Rewrite them
// only for a change that is meant to change results:
//
//	go test ./sim -run TestWriteGolden -sim.update-golden

var updateGolden = flag.Bool("sim.update-golden", false, "rewrite testdata/engine_golden.txt")

const goldenFile = "testdata/engine_golden.txt"

// logObserver writes down everything an observer is told, in order.
type logObserver struct{ bytes.Buffer }

func (o *logObserver) MessageStarted(m *sim.Message, at sim.Time) {
	fmt.Fprintf(o, "start %d %d->%d tag %d %dB posted %d at %d\n", m.ID, m.Src, m.Dst, m.Tag, m.Bytes, m.Posted, at)
}

func (o *logObserver) MessageDelivered(m *sim.Message, at sim.Time) {
	fmt.Fprintf(o, "deliver %d at %d\n", m.ID, at)
}

func (o *logObserver) Span(rank int, kind sim.SpanKind, bytes int, start, end sim.Time) {
	fmt.Fprintf(o, "span %d %v %dB %d-%d\n", rank, kind, bytes, start, end)
}

// goldenModels are the networks the engine's results are pinned on: every model,
// and every wrapper that may run with it (noise, stragglers, slow links,
// per-message overheads), with messages that may overtake each other
// (flow with several slots).
var goldenModels = []struct {
	name  string
	model sim.Model
}{
	{"alpha-beta", worked},
	{"flow-fat-tree", sim.Flow{Topology: sim.FatTree{Tiers: 2, Radix: 8, Oversubscription: 3,
		Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}, ReduceBandwidth: 25e9}},
	{"flow-slots", sim.Flow{Topology: sim.Crossbar{Bandwidth: 12.5e9, Latency: sim.Microsecond}, SendSlots: 3, RecvSlots: -1}},
	{"loggp", sim.LogGP{Latency: 2 * sim.Microsecond, Overhead: 300 * sim.Nanosecond, Gap: 500 * sim.Nanosecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}},
	{"noisy-overhead", sim.WithFaults(sim.Overhead{Model: worked, Send: 100 * sim.Nanosecond, Recv: 200 * sim.Nanosecond}, 7,
		sim.Jitter{Dist: "exponential", Mean: sim.Microsecond}, sim.Straggler{Rank: 1, Factor: 3})},
	{"flow-slow-link", sim.WithFaults(sim.Flow{Topology: sim.FatTree{Tiers: 2, Radix: 4, Link: sim.LinkParams{Bandwidth: 10e9, Latency: sim.Microsecond}}}, 3,
		sim.SlowLink{Link: "spine0<->leaf0", Factor: 0.25, At: 5 * sim.Microsecond}, sim.Stragglers{Count: 2, Factor: 2})},
	// Protocols: rendezvous with a handshake of control messages (the
	// network is told when receives are posted), eager sends that
	// complete before they move, envelopes and piecewise factors.
	{"rendezvous", sim.Protocol{Model: worked, EagerLimit: 4096, Envelope: 64, Handshake: sim.Handshake{RTSCTS: true},
		LatencyFactors: sim.Factors{{From: 1024, Factor: 1.5}}, BandwidthFactors: sim.Factors{{From: 65536, Factor: 0.8}}}},
	{"eager-flow", sim.Protocol{Model: sim.Flow{Topology: sim.Crossbar{Bandwidth: 12.5e9, Latency: sim.Microsecond}, SendSlots: -1},
		EagerLimit: 1 << 20, Handshake: sim.Handshake{Delay: 2 * sim.Microsecond}}},
	{"eager-at-once-loggp", sim.Protocol{Model: sim.LogGP{Latency: 2 * sim.Microsecond, Overhead: 300 * sim.Nanosecond, Gap: 500 * sim.Nanosecond, Bandwidth: 10e9},
		EagerLimit: 8192, EagerAtOnce: true, Handshake: sim.Handshake{RTSCTS: true}}},
	{"realnet", sim.TwoPaths{QUIC: sim.AlphaBeta{Latency: 30 * sim.Microsecond, Bandwidth: 0.2e9}, Bulk: sim.AlphaBeta{Latency: 10 * sim.Microsecond, Bandwidth: 1e9},
		Thresholds: algos.Thresholds{Bulk: 16384}, ReduceBandwidth: 20e9}},
}

// goldenCases calls fn with every pinned run: every algorithm of the
// catalogue on every model, at several world sizes and counts (0, fewer
// than ranks, many); short keeps worlds 1, 3 and 8, and counts 0 and
// many.
func goldenCases(short bool, fn func(name string, model sim.Model, p int, body sim.Body)) {
	worlds := []int{1, 2, 3, 5, 8, 12, 16}
	for _, cname := range algos.CollectiveNames() {
		c, err := algos.Lookup(cname)
		if err != nil {
			panic(err)
		}
		for _, a := range c.Algorithms {
			for _, m := range goldenModels {
				for _, p := range worlds {
					if (a.PowerOfTwo && p&(p-1) != 0) || (short && p != 1 && p != 3 && p != 8) {
						continue
					}
					if p > 8 && m.name == "flow-slow-link" {
						continue // the tree has 8 hosts
					}
					for _, count := range []int{0, max(p-1, 1), p*p*64 + 7} {
						if short && count == max(p-1, 1) && p > 1 {
							continue
						}
						send, recv, _ := c.Layout(count, p)
						body := func(ctx context.Context, l algos.Link) error {
							call := algos.Call{Buf: l.Alloc(recv * 4), DType: device.F32, Op: device.Sum, Root: p / 2}
							if send > 0 {
								call.Send = l.Alloc(send * 4)
							}
							return a.Run(ctx, l, call)
						}
						fn(fmt.Sprintf("%s/%s/%s/p=%d/count=%d", cname, a.Name, m.name, p, count), m.model, p, body)
					}
				}
			}
		}
	}
}

// goldenHash hashes a run's result (every field but Replayed), its error
// and its observations.
func goldenHash(res *sim.Result, err error, observed []byte) string {
	h := fnv.New64a()
	if res != nil {
		fmt.Fprint(h, res.Finish, res.End, res.Messages, res.Events, res.Links)
	}
	fmt.Fprint(h, stackless(err))
	h.Write(observed)
	return fmt.Sprintf("%016x", h.Sum64())
}

// stackless is err's text without the goroutine numbers and addresses of
// the stacks of panics, which differ from run to run.
func stackless(err error) string {
	return stackNoise.ReplaceAllString(fmt.Sprint(err), "")
}

var stackNoise = regexp.MustCompile(`goroutine \d+|0x[0-9a-f]+`)

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, hash, ok := strings.Cut(sc.Text(), " ")
		if ok && !strings.HasPrefix(name, "#") {
			out[name] = hash
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteGolden rewrites the pinned results with -sim.update-golden.
func TestWriteGolden(t *testing.T) {
	if !*updateGolden {
		t.Skip("run with -sim.update-golden to rewrite " + goldenFile)
	}
	var b bytes.Buffer
	b.WriteString("# name hash: see golden_test.go\n")
	goldenCases(false, func(name string, model sim.Model, p int, body sim.Body) {
		var log logObserver
		res, err := sim.Run(sim.Config{World: p, Model: model, Observer: &log}, body)
		fmt.Fprintf(&b, "%s %s\n", name, goldenHash(res, err, log.Bytes()))
	})
	if err := os.MkdirAll("testdata", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
