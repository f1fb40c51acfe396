package tuner

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// The policy held against cost tables and predicted times NCCL printed
// for real systems (testdata/logs, each with its source). A log prints
// NCCL's results, not its inputs: where it does not print the graph
// figures, the inputs below are inferred, and each says from what. Cells
// are compared as NCCL prints them, to one decimal (times to six).

// constants283 are the tables of NCCL 2.8.3 that differ from 2.30.7's in
// the cells the 2.8.3 log has (src/graph/tuning.cc at v2.8.3-1): ring
// base latencies {3.6, 10.0, 8.4} (2.30.7: {6.6, 14.0, 8.4}) and the ring's
// Simple network step 9.6 us (14.0).
func constants283() *nccl.Constants {
	c := nccl.Constants230
	c.Release = "2.8.3"
	c.BaseLat[Ring] = [3]float64{3.6, 10.0, 8.4}
	c.HwLat[nccl.HwNet][Ring] = [3]float64{2.7, 4.0, 9.6}
	return &c
}

type goldenCase struct {
	file string
	// release the log names or its source states.
	release string
	sys     System
	// want counts the cells expected to differ, each explained in why.
	wantDiffer int
	why        string
}

var goldenCases = []goldenCase{
	{
		file: "nccl-2.29.7-rtx5090-socket-2nodes.log", release: "2.29.7",
		// 2 ranks, each its own node (NCCL_HOSTID), GeForce RTX 5090 (compute
		// capability 12.0), Socket network (LL128 off: typeInter NET). Graphs
		// inferred from the table: ring bandwidth 2.4 = 2 channels x 1.2 (the
		// log's 4 channels are the 2 of graph search, doubled), tree 4.8 = 2 x
		// 2.4 with the 0.85 of pattern TREE (one GPU a node: search.cc makes
		// every non-ring pattern TREE), ring latencies of same channels, no
		// network latency. 2.29.7's constants equal 2.30.7's but for
		// perChMaxNVLSTreeBws[Blackwell][4+ nodes] (43.8, now 80.0), which a
		// 2-node table does not read.
		sys: System{Ranks: 2, Nodes: 2, MinCompCap: 120, TreePattern: PatternTree,
			Graphs: [NumAlgos]Graph{
				Tree: {Channels: 2, BwIntra: 2.4, BwInter: 2.4, TypeIntra: PathLOC, TypeInter: PathNET, SameChannels: true},
				Ring: {Channels: 2, BwIntra: 1.2, BwInter: 1.2, TypeIntra: PathLOC, TypeInter: PathNET, SameChannels: true},
				PAT:  {Channels: 2, BwIntra: 2.4, BwInter: 2.4, TypeIntra: PathLOC, TypeInter: PathNET, SameChannels: true},
			}},
	},
	{
		file: "nccl-issue-1453-h100-3nodes.log", release: "2.19 or later",
		// 24 ranks on 3 nodes of 8 H100. The times are Tree/LL's: 25.2 us of
		// latency (6.8 + 2 x (7 x 0.6 + 1 x 5.0), no network latency) plus
		// bytes / (1000 x 8.67 GB/s): llMaxBws caps the bus bandwidth at 20.4
		// (Intel's row, 4 or more nodes), x0.85 for pattern TREE (Hopper's
		// search relaxes the balanced tree), x0.5 to algorithm bandwidth.
		// Any tree graph of nChannels x bwInter above 84.3 GB/s gives them;
		// these constants are the same in every release from 2.19 to 2.30.
		sys: System{Ranks: 24, Nodes: 3, MinCompCap: 90, CPUArch: X86, CPUVendor: Intel, TreePattern: PatternTree,
			Graphs: [NumAlgos]Graph{
				Tree: {Channels: 8, BwIntra: 45, BwInter: 45, TypeIntra: PathNVL, TypeInter: PathPIX, SameChannels: true},
				Ring: {Channels: 8, BwIntra: 45, BwInter: 45, TypeIntra: PathNVL, TypeInter: PathPIX, SameChannels: true},
				PAT:  {Channels: 8, BwIntra: 45, BwInter: 45, TypeIntra: PathNVL, TypeInter: PathPIX, SameChannels: true},
			}},
	},
	{
		file: "nccl-tests-issue-89-2.8.3-t4.log", release: "2.8.3",
		// 16 ranks on 2 nodes of 8 T4 (compute capability 7.5, no NVLink),
		// NCCL_MAX_NCHANNELS=1: ring of 1 channel of 9 GB/s (Simple's 9.0 =
		// 1 x 9 x 16/16), same channels.
		sys: System{Ranks: 16, Nodes: 2, MinCompCap: 75, TreePattern: PatternBalancedTree,
			Graphs: [NumAlgos]Graph{
				Tree: {Channels: 1, BwIntra: 9, BwInter: 9, TypeIntra: PathPXB, TypeInter: PathPXB, SameChannels: true},
				Ring: {Channels: 1, BwIntra: 9, BwInter: 9, TypeIntra: PathPXB, TypeInter: PathPXB, SameChannels: true},
			}},
		wantDiffer: 7,
		why: "NCCL 2.8.3's constants: ring base latencies 3.6/10.0/8.4 us (2.30.7: 6.6/14.0/8.4) and ring Simple network " +
			"step 9.6 us (14.0) put 2.30.7's latencies 3.0, 4.0 and 4.4 us above the printed 6.3, 14.0 and 18.0 " +
			"(with 2.8.3's constants they match); its single CollNet algorithm had LL and LL128 threads (512, 640) " +
			"and 512 Simple threads (2.30.7's CollNetDirect: 0, 0, 640); and the run printed 0.0 for Ring/LL's " +
			"bandwidth, where both releases' formulas give 4.5 GB/s (2.8.3: min(llMaxBw, 9/4) = 2.25): LL was off in " +
			"that run (its command line in the issue is abridged)",
	},
	{
		file: "nccl-issue-1154-h800.log", release: "unknown (2.19 or later: block format)",
		// H800 with 8 NDR NICs a node: only the threads survive in the
		// excerpt; they depend on the ring's bwIntra x nChannels being above
		// 12 GB/s (Simple: 512 threads), which any such node's is.
		sys: System{Ranks: 16, Nodes: 2, MinCompCap: 90, TreePattern: PatternTree,
			Graphs: [NumAlgos]Graph{
				Tree: {Channels: 16, BwIntra: 24, BwInter: 24, TypeIntra: PathNVL, TypeInter: PathPIX, SameChannels: true},
				Ring: {Channels: 16, BwIntra: 24, BwInter: 24, TypeIntra: PathNVL, TypeInter: PathPIX, SameChannels: true},
			}},
	},
}

// goldenStats compares the model of c with its log: cells and times
// compared, those that differ (with what), and the largest absolute
// difference.
type goldenStats struct {
	cells, differ int
	// worst is the largest absolute difference by unit, worstWhat its
	// cell.
	worst     map[string]float64
	worstWhat map[string]string
	notes     []string
}

// units are those of compare, in the order summaries give them.
var units = []string{"us", "GB/s", "threads", "choices"}

func (s *goldenStats) compare(what string, got, want float64, format, unit string) {
	s.cells++
	g, w := fmt.Sprintf(format, got), fmt.Sprintf(format, want)
	if g == w {
		return
	}
	s.differ++
	s.notes = append(s.notes, fmt.Sprintf("%s: %s, printed %s", what, g, w))
	if s.worst == nil {
		s.worst, s.worstWhat = map[string]float64{}, map[string]string{}
	}
	if d := math.Abs(got - want); d > s.worst[unit] {
		s.worst[unit], s.worstWhat[unit] = d, what
	}
}

func (s *goldenStats) add(o goldenStats, prefix string) {
	s.cells += o.cells
	s.differ += o.differ
	for u, d := range o.worst {
		if s.worst == nil {
			s.worst, s.worstWhat = map[string]float64{}, map[string]string{}
		}
		if d > s.worst[u] {
			s.worst[u], s.worstWhat[u] = d, prefix+o.worstWhat[u]
		}
	}
}

func (s *goldenStats) String() string {
	out := fmt.Sprintf("%d cells, %d exact, %d differ", s.cells, s.cells-s.differ, s.differ)
	for _, u := range units {
		if d, ok := s.worst[u]; ok {
			out += fmt.Sprintf("; worst %.3g %s (%s)", d, u, s.worstWhat[u])
		}
	}
	return out
}

func readLog(t *testing.T, name string) *Log {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lg, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

func goldenCompare(t *testing.T, c goldenCase, m *Model) goldenStats {
	t.Helper()
	lg := readLog(t, c.file)
	var s goldenStats
	if tab := lg.Table; tab != nil {
		for coll := range NumColls {
			for a := range NumAlgos {
				for p := range Protocol(NumProtocols) {
					if !tab.Known[coll][a][p] {
						continue
					}
					what := fmt.Sprintf("%s %s/%s", collPrinted[coll], algoPrinted[a], protoPrinted[p])
					s.compare(what+" latency", m.Latency(coll, a, p), tab.Lat[coll][a][p], "%.1f", "us")
					s.compare(what+" bandwidth", m.Bandwidth(coll, a, p), tab.Bw[coll][a][p], "%.1f", "GB/s")
				}
			}
		}
		for a := range NumAlgos {
			for p := range Protocol(NumProtocols) {
				if tab.KnownThreads[a][p] {
					s.compare(fmt.Sprintf("%s/%s threads", algoPrinted[a], protoPrinted[p]), float64(m.MaxThreads(a, p)), float64(tab.Threads[a][p]), "%.0f", "threads")
				}
			}
		}
	}
	for _, x := range lg.Times {
		// NCCL prints the time of the pair it chose, so the call is an
		// allreduce of x.Bytes whose choice is x's.
		ch, err := m.Choose(Call{Coll: AllReduce, Bytes: x.Bytes})
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("line %d: %d bytes", x.Line, x.Bytes)
		s.compare(what+" algorithm", float64(ch.Algo*10)+float64(ch.Proto), float64(x.Algo*10)+float64(x.Proto), "%.0f", "choices")
		s.compare(what+" time", ch.Time, x.Time, "%.6f", "us")
	}
	for _, x := range lg.Choices {
		ch, err := m.Choose(Call{Coll: x.Coll, Bytes: x.Bytes})
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("line %d: %s of %d bytes", x.Line, x.Coll, x.Bytes)
		s.compare(what, float64(ch.Algo*10)+float64(ch.Proto), float64(x.Algo*10)+float64(x.Proto), "%.0f", "choices")
		// The line prints the channels the planner used, at most the
		// maximum topoGetAlgoInfo allows.
		if x.ChannelHi+1 > ch.Channels {
			t.Errorf("%s: ran on channels %d..%d, above the %d the model allows", what, x.ChannelLo, x.ChannelHi, ch.Channels)
		}
	}
	return s
}

// TestGolden holds the model against every log of testdata/logs, and
// reports how many cells match NCCL's printed figures exactly.
func TestGolden(t *testing.T) {
	var total goldenStats
	for _, c := range goldenCases {
		m, err := Tune(c.sys)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		s := goldenCompare(t, c, m)
		t.Logf("%s (NCCL %s): %v", c.file, c.release, &s)
		if s.differ != c.wantDiffer {
			t.Errorf("%s: %d cells differ, want %d (%s):\n  %s", c.file, s.differ, c.wantDiffer, c.why, strings.Join(s.notes, "\n  "))
		}
		total.add(s, c.file+": ")
	}
	t.Logf("all logs: %v", &total)
}

// With NCCL 2.8.3's constants the 2.8.3 log's latencies match too: the
// differences are the constants', not the formulas'.
func TestGolden283Constants(t *testing.T) {
	c := goldenCases[2]
	c.sys.Constants = constants283()
	m, err := Tune(c.sys)
	if err != nil {
		t.Fatal(err)
	}
	s := goldenCompare(t, c, m)
	for _, n := range s.notes {
		if strings.Contains(n, "latency") {
			t.Errorf("with 2.8.3's constants: %s", n)
		}
	}
	if s.differ != 4 { // the three CollNet threads and Ring/LL's bandwidth
		t.Errorf("with 2.8.3's constants %d cells differ, want 4:\n  %s", s.differ, strings.Join(s.notes, "\n  "))
	}
}

// The model's table, written as NCCL 2.30 writes it, is the 5090 log's
// table line for line.
func TestGoldenTableText(t *testing.T) {
	c := goldenCases[0]
	m, err := Tune(c.sys)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := m.Table().WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "logs", c.file))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(data), "\n") {
		if i := strings.Index(l, "NCCL INFO "); i >= 0 && strings.Contains(l, "|") {
			want = append(want, l[i+len("NCCL INFO "):])
		}
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, the log has %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got  %q\n want %q", i+1, got[i], want[i])
		}
	}
}
