package calibrate

import (
	"strings"
	"testing"
)

// infoLog is a run of all_reduce_perf with NCCL's INFO lines as NCCL
// 2.2x prints them (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING),
// cut down to two ranks' worth, and a table of three sizes.
const infoLog = `# nccl-tests version 2.13.10 nccl-headers=21903 nccl-library=21903
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 32(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  41000 on    node001 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  41001 on    node002 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
node001:41000:41000 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
node001:41000:41000 [0] NCCL INFO NCCL_ALGO set by environment to Ring,Tree
node001:41000:41000 [0] NCCL INFO NCCL_TREE_THRESHOLD set by environment to 0.
node001:41000:41061 [0] NCCL INFO comm 0x5639e9f0e8c0 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
node001:41000:41061 [0] NCCL INFO Channel 00/04 :    0   1
node001:41000:41061 [0] NCCL INFO Channel 01/04 :    0   1
node001:41000:41061 [0] NCCL INFO Channel 02/04 :    0   1
node001:41000:41061 [0] NCCL INFO Channel 03/04 :    0   1
node001:41000:41061 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1 [2] 1/-1/-1->0->-1 [3] -1/-1/-1->0->1
node001:41000:41061 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
node001:41000:41061 [0] NCCL INFO 4 coll channels, 4 collnet channels, 0 nvls channels, 4 p2p channels, 2 p2p channels per peer
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
node001:41000:41000 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}
        1024           256     float     sum      -1    20.01    0.05    0.05      0    19.92    0.05    0.05      0
node001:41000:41000 [0] NCCL INFO AllReduce: 32768 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}
       32768          8192     float     sum      -1    30.12    1.09    1.09      0    29.80    1.10    1.10      0
node001:41000:41000 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
     1048576        262144     float     sum      -1    80.40   13.04   13.04      0    79.10   13.26   13.26      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 4.7
#
`

func TestNCCLInfo(t *testing.T) {
	log, err := ReadNCCLTests("info.log", strings.NewReader(infoLog), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs", len(log.Runs))
	}
	info := log.Runs[0].NCCL
	if info == nil {
		t.Fatal("no NCCL info")
	}
	if info.Version != "2.21.5" || info.GPU != "NVIDIA H100 80GB HBM3" || info.Hosts != 2 || info.Nodes != 2 || info.LocalRanks != 1 ||
		info.Channels != 4 || info.NVLSChannels != 0 || info.Rings != 4 || info.Trees != 4 || info.Env["NCCL_ALGO"] != "Ring,Tree" || info.Env["NCCL_TREE_THRESHOLD"] != "0" {
		t.Errorf("info %+v", *info)
	}
	if len(info.Choices) != 3 {
		t.Fatalf("choices %+v", info.Choices)
	}
	for _, c := range []struct {
		bytes   int
		variant string
	}{{1024, "nccl_tree_ll(channels=1)"}, {32768, "nccl_ring_ll(channels=2)"}, {1 << 20, "nccl_ring_simple(channels=4)"}} {
		ch, ok := info.Choice("allreduce", c.bytes)
		if !ok || ch.Variant() != c.variant {
			t.Errorf("%d bytes: %+v %t, want %s", c.bytes, ch, ok, c.variant)
		}
	}
	if _, ok := info.Choice("allgather", 1024); ok {
		t.Error("a choice of allreduce found for allgather")
	}
	for _, s := range log.Runs[0].Samples {
		if s.Nodes != 2 || s.NCCL != info {
			t.Errorf("sample %v: nodes %d, info %p", s, s.Nodes, s.NCCL)
		}
	}
	want := "NCCL 2.21.5, 2 node(s) (NCCL's comm line), 4 channels, 3 choice(s) of algorithm and protocol, NCCL_ALGO=Ring,Tree, NCCL_TREE_THRESHOLD=0, NVIDIA H100 80GB HBM3"
	if got := info.String(); got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
}

// TestNCCLInfoOfCorpus reads what the corpus' logs say: rings of 32
// channels, connections that are not rings, older choice lines whose
// collective is the run's, hosts of rank lines.
func TestNCCLInfoOfCorpus(t *testing.T) {
	for _, c := range []struct {
		file                   string
		version                string
		hosts, channels, rings int
	}{
		{"nccl-prompt-truncated.log", "2.16.2", 1, 32, 1}, // nccl-tests' nccl-library=21602
		{"nccl-tag-output.log", "2.18.5", 2, 0, 0},
		{"public/nccl-tests-309-xe9680-h100-2nodes-all_reduce_perf.log", "2.26.2", 2, 0, 0},
		{"public/nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log", "", 8, 0, 0},
	} {
		log, err := ReadFile("testdata/"+c.file, FormatNCCLTests, LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		info := log.Runs[0].NCCL
		if info == nil || info.Version != c.version || info.Hosts != c.hosts || info.Channels != c.channels || info.Rings != c.rings {
			t.Errorf("%s: %+v", c.file, info)
		}
	}
	// An elided rank list names some hosts, not all: no node count is
	// taken from it, unless one process holds every rank.
	for _, c := range []struct {
		file         string
		hosts, nodes int
		atLeast      bool
	}{
		{"nccl-elided-ranks.log", 2, 0, true},   // 0-3 ... 126-127, one GPU a process
		{"nccl-cut-rank-list.log", 1, 1, false}, // 4 threads x 8 GPUs in one process
		{"nccl-tag-output.log", 2, 2, false},    // every rank listed
	} {
		log, err := ReadFile("testdata/"+c.file, FormatNCCLTests, LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := log.Runs[0]
		if r.NCCL == nil || r.NCCL.Hosts != c.hosts || r.NCCL.HostsAtLeast != c.atLeast || r.Samples[0].Nodes != c.nodes {
			t.Errorf("%s: %+v, %d node(s); want %d host(s) (at least: %t), %d node(s)", c.file, r.NCCL, r.Samples[0].Nodes, c.hosts, c.atLeast, c.nodes)
		}
	}
	// NCCL before 2.19 printed its predicted time, not the collective.
	old := "# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on h device  0 [0x18] GPU\n" +
		"h:1:1 [0] NCCL INFO 4 Bytes -> Algo 0 proto 0 time 25.200462\n" +
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
		"           4             1     float     sum      -1    25.31    0.00    0.00      0    25.30    0.00    0.00      0\n"
	log, err := ReadNCCLTests("old.log", strings.NewReader(old), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ch, ok := log.Runs[0].NCCL.Choice("allreduce", 4); !ok || ch.Variant() != "nccl_tree_ll" || ch.Collective != "" {
		t.Errorf("old choice line: %+v %t", ch, ok)
	}
}

// TestNCCLInfoPublished: lines as public logs print them (NCCL 2.2x on
// AWS p5 with the OFI tuner plugin, RCCL on Frontier and on a
// workstation): RCCL's version, the tuner plugin, the communicator's
// ranks of the "Init COMPLETE" line, the collective of older time lines,
// and the choice lines' allgather bytes, a rank's part, as nccl-tests'
// whole size.
func TestNCCLInfoPublished(t *testing.T) {
	lines := []string{
		"TARS:829507:829507 [0] NCCL INFO Kernel version: 6.17.0-19-generic",
		"TARS:829507:829507 [0] NCCL INFO RCCL version : 2.27.7-HEAD:0d2c4fd",
		"gpu-dev-57704f5a:1793:1793 [0] NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so",
		"gpu-dev-57704f5a:1793:1793 [0] NCCL INFO TUNER/Plugin: Using nccl_ofi_tuner (v3)",
		"gpu-dev-57704f5a:1800:1800 [7] NCCL INFO ncclCommInitRankConfig comm 0x55580bc0bab0 rank 7 nranks 8 cudaDev 7 nvmlDev 7 busId ca000 commId 0xf9c27b9b4212767e - Init COMPLETE",
		"nid002664:106865:108086 [0] NCCL INFO ReduceScatter: 302006272 Bytes -> Algo 1 proto 2 time 3628.243652",
		"NCCL INFO AllGather:    16 Bytes -> Algo RING  proto LL     channel{Lo..Hi}={0..0}",
		"NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..7}",
	}
	var s infoScanner
	for i, l := range lines {
		s.scan(l, i+1)
	}
	info := s.result(64) // the run's world: the comm line's 8 wins
	if info == nil || info.Version != "2.27.7" || !info.RCCL || info.TunerPlugin != "nccl_ofi_tuner" || info.Ranks != 8 {
		t.Fatalf("%+v", info)
	}
	for _, c := range []struct {
		coll  string
		bytes int
		want  string
	}{
		{"reduce_scatter", 302006272, "nccl_ring_simple"}, // the old time line: the total
		{"allgather", 16 * 8, "nccl_ring_ll(channels=1)"},
		{"allreduce", 1 << 20, "nccl_ring_ll128(channels=8)"},
	} {
		ch, ok := info.Choice(c.coll, c.bytes)
		if !ok || ch.Variant() != c.want {
			t.Errorf("%s %d B: %+v %t, want %s", c.coll, c.bytes, ch, ok, c.want)
		}
	}
	if _, ok := info.Choice("allreduce", 302006272); ok {
		t.Error("the reduce-scatter's time line answers for an allreduce")
	}
	if got := info.String(); !strings.Contains(got, "RCCL 2.27.7") || !strings.Contains(got, "tuner plugin nccl_ofi_tuner") {
		t.Errorf("summary %q", got)
	}
}

// FuzzNCCLInfo feeds lines to the reader of NCCL's lines: it must not
// panic, and what it keeps must be consistent.
func FuzzNCCLInfo(f *testing.F) {
	for _, l := range strings.Split(infoLog, "\n") {
		f.Add(l)
	}
	f.Add("x NCCL INFO Channel 99/04 :    0   1")
	f.Add("x NCCL INFO Trees [0] a [1] b [2]")
	f.Add("x NCCL INFO comm 0xff rank 0 nranks 9999999999999999 nNodes 0")
	f.Fuzz(func(t *testing.T, text string) {
		var s infoScanner
		for i, l := range strings.Split(text, "\n") {
			s.scanRank(l)
			s.scan(l, i+1)
		}
		info := s.result(8)
		if info == nil {
			return
		}
		if info.Channels > 0 && (info.Rings > info.Channels || info.Trees > info.Channels) {
			t.Fatalf("%d rings, %d trees of %d channels", info.Rings, info.Trees, info.Channels)
		}
		if info.Nodes < 0 || info.Channels < 0 || info.Hosts < 0 || len(info.Choices) > 2*maxInfoEntries {
			t.Fatalf("info %+v", *info)
		}
		for _, c := range info.Choices {
			if c.Bytes < 0 || c.Channels < 0 || c.Line < 1 {
				t.Fatalf("choice %+v", c)
			}
			if _, ok := info.Choice(c.Collective, c.Bytes); c.Algorithm != "" && c.Collective != "" && !ok {
				t.Fatalf("choice %+v not found again", c)
			}
		}
	})
}
