package calibrate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
)

// wantRun is what a run of a log must read as.
type wantRun struct {
	collective, algorithm string
	world, samples        int
}

// wantSample checks one sample of a log: its index among all the log's
// samples (-1: the last), size, type and time.
type wantSample struct {
	i     int
	bytes int
	dt    device.DType
	us    float64
}

// The corpus in testdata holds a log of each variant people keep: the
// layouts of nccl-tests (2.x and older) and the OSU benchmarks (5.x and
// 7.x), with launchers' prefixes, documents' indentation and quotes,
// library lines among the rows, several runs and benchmarks per file,
// elided rank lists, rows cut short. The figures in them follow the
// shapes of published runs; each case below says what its file tests.
func TestReadCorpus(t *testing.T) {
	for _, c := range []struct {
		file    string
		opt     LogOptions
		runs    []wantRun
		samples []wantSample
		notes   []string // substrings of the log's notes, in order
	}{
		// nccl-tests 2.13, one process per GPU, out-of-place times.
		{"nccl-allreduce.log", LogOptions{}, []wantRun{{"allreduce", "ring", 8, 25}},
			[]wantSample{{0, 8, device.F32, 35.00}, {-1, 128 << 20, device.F32, 11779.1}}, nil},
		// The in-place columns.
		{"nccl-allreduce.log", LogOptions{InPlace: true}, []wantRun{{"allreduce", "ring", 8, 25}},
			[]wantSample{{0, 8, device.F32, 34.30}, {-1, 128 << 20, device.F32, 11543.5}}, nil},
		// Older nccl-tests: no start line, no command line: the collective
		// is given; no redop or root, "error" columns, NCCL INFO lines;
		// one process of 4 GPUs, its rank lines without "Group".
		{"nccl-allgather-old.log", LogOptions{Collective: "allgather"}, []wantRun{{"allgather", "ring", 4, 6}},
			[]wantSample{{0, 1024, device.F32, 24.31}, {-1, 1 << 20, device.F32, 116.3}}, nil},
		// Open MPI's --tag-output on every line, NCCL INFO lines of other
		// ranks before and inside the table; 2 nodes of 8.
		{"nccl-tag-output.log", LogOptions{}, []wantRun{{"allreduce", "ring", 16, 13}},
			[]wantSample{{0, 8, device.F32, 21.98}, {3, 512, device.F32, 21.97}}, nil},
		// Slurm's srun --label, an nccl-tests without the start line (the
		// collective from the command line), N/A in #wrong (-c 0).
		{"nccl-srun-label.log", LogOptions{}, []wantRun{{"allreduce", "ring", 16, 11}},
			[]wantSample{{0, 8 << 20, device.F32, 164.77}, {-1, 8 << 30, device.F32, 107084}}, nil},
		// Three collectives one after the other, each with its own start
		// line and rank list (one process of 8 GPUs).
		{"nccl-several-collectives.log", LogOptions{}, []wantRun{
			{"allgather", "ring", 8, 10}, {"allreduce", "ring", 8, 10}, {"broadcast", "binomial_tree", 8, 10}},
			[]wantSample{{0, 1024, device.F32, 12.01}, {10, 1024, device.F32, 11.91}, {29, 256 << 20, device.F32, 2269.7}}, nil},
		// Two runs of one collective, 4 ranks then 2: each its own world;
		// older layout, the collective from each run's command line, a
		// shell prompt at the end.
		{"nccl-several-runs.log", LogOptions{}, []wantRun{{"allreduce", "ring", 4, 4}, {"allreduce", "ring", 2, 4}},
			[]wantSample{{0, 64 << 10, device.F32, 10.57}, {4, 64 << 10, device.F32, 12.39}}, nil},
		// A shell prompt after the table, the last row cut short, NCCL
		// INFO lines inside the table.
		{"nccl-prompt-truncated.log", LogOptions{}, []wantRun{{"reduce_scatter", "ring", 8, 6}},
			[]wantSample{{0, 1024, device.F32, 10.90}, {-1, 32 << 20, device.F32, 221.43}},
			[]string{"nccl-prompt-truncated.log:27: 1 row(s) cut short"}},
		// Elided rank lists: 0-3, "...", 126-127 (128 ranks); then 0-2 and
		// "..." with mpirun -np 64 (64 ranks).
		{"nccl-elided-ranks.log", LogOptions{}, []wantRun{{"allreduce", "ring", 128, 6}, {"allgather", "ring", 64, 6}},
			[]wantSample{{0, 1 << 20, device.F32, 92.02}, {6, 1 << 20, device.F32, 107.22}}, nil},
		// nccl-tests' own cut of a process's list at 2 KB: 4 threads x 8
		// GPUs, ranks up to 25 listed.
		{"nccl-cut-rank-list.log", LogOptions{}, []wantRun{{"alltoall", "pairwise", 32, 6}},
			[]wantSample{{0, 32 << 10, device.F32, 40.32}}, nil},
		// A Markdown page: a run indented in a tabbed block, with ragged
		// indentation and loader warnings; a run quoted with "> ".
		{"nccl-markdown.md", LogOptions{}, []wantRun{{"allreduce", "ring", 8, 9}, {"broadcast", "binomial_tree", 4, 4}},
			[]wantSample{{0, 8, device.F32, 18.01}, {3, 4096, device.F32, 21.58}, {9, 4096, device.F32, 25.44}}, nil},
		// Pasted outside a code block of a GitHub comment: Markdown took
		// every "#" (rank lines, header); the last row cut short.
		{"nccl-hash-stripped.md", LogOptions{Collective: "allreduce"}, []wantRun{{"allreduce", "ring", 4, 8}},
			[]wantSample{{0, 8, device.F32, 30.07}, {-1, 16 << 20, device.F32, 344.87}},
			[]string{"nccl-hash-stripped.md:21: 1 row(s) cut short"}},
		// nccl-tests' own JSON report (-J): 4 processes of 2 GPUs, one
		// result wrong; NCCL_ALGO in its env.
		{"nccl-tests-report.json", LogOptions{}, []wantRun{{"allreduce", "ring", 8, 8}},
			[]wantSample{{0, 1024, device.F32, 21.93}, {-1, 64 << 20, device.F32, 806.99}},
			[]string{"1 result(s) whose results were wrong (nwrong above 0) left out (results 3)"}},
		{"nccl-tests-report.json", LogOptions{InPlace: true}, []wantRun{{"allreduce", "ring", 8, 9}}, nil, nil},
		// IMB-MPI1: PingPong, Allreduce and Allgather on 4 then 8
		// processes (#bytes a rank's block: times the world), the
		// barrier; Allgatherv skipped.
		{"imb-mpi1.log", LogOptions{}, []wantRun{{"pt2pt", "latency", 2, 13}, {"allreduce", "ring", 4, 12}, {"allreduce", "ring", 8, 12},
			{"allgather", "ring", 4, 12}, {"allgather", "ring", 8, 12}, {"barrier", "dissemination", 4, 1}, {"barrier", "dissemination", 8, 1}},
			[]wantSample{{0, 0, device.U8, 1.50}, {20, 16 << 10, device.F32, 6.41}, {38, 16, device.U8, 3.02}},
			[]string{"Allgatherv skipped: a vector collective"}},
		// The multi-node allreduce of the bandwidth check.
		{"nccl-multinode-allreduce.log", LogOptions{}, []wantRun{{"allreduce", "ring", 16, 32}},
			[]wantSample{{-1, 16 << 30, device.F32, 172596}}, nil},
		// The algorithm a log does not name, given.
		{"nccl-multinode-allreduce.log", LogOptions{Algorithm: "halving_doubling"}, []wantRun{{"allreduce", "halving_doubling", 16, 32}}, nil, nil},
		// The world size given overrides the log's, and says so.
		{"nccl-several-runs.log", LogOptions{World: 4}, []wantRun{{"allreduce", "ring", 4, 4}, {"allreduce", "ring", 4, 4}}, nil,
			[]string{"the log gives 2 ranks (ranks 0-1 listed); the world size given, 4, is taken instead"}},

		// OSU 7.3 allreduce, MPI_FLOAT; the world given.
		{"osu-allreduce.log", LogOptions{World: 4}, []wantRun{{"allreduce", "ring", 4, 19}},
			[]wantSample{{0, 4, device.F32, 72.00}, {-1, 1 << 20, device.F32, 1382.72}}, nil},
		// osu_allreduce -f (min, max, iterations), 16 ranks from mpirun -np.
		{"osu-allreduce-full.log", LogOptions{}, []wantRun{{"allreduce", "ring", 16, 11}},
			[]wantSample{{0, 4, device.F32, 7.99}}, nil},
		// OSU 5.9 broadcast -f without a datatype line: bytes.
		{"osu-bcast-full.log", LogOptions{World: 2}, []wantRun{{"broadcast", "binomial_tree", 2, 9}},
			[]wantSample{{0, 1, device.I8, 19.00}, {-1, 65536, device.I8, 150.07}}, nil},
		// OSU 5.4 broadcast: MPI_CHAR, 8 ranks from #SBATCH directives.
		{"osu-bcast-v5.log", LogOptions{}, []wantRun{{"broadcast", "binomial_tree", 8, 11}},
			[]wantSample{{0, 1, device.I8, 5.17}}, nil},
		// OSU's allgather size is a rank's block: times the world.
		{"osu-allgather.log", LogOptions{World: 4}, []wantRun{{"allgather", "ring", 4, 7}},
			[]wantSample{{0, 4, device.I8, 20.00}, {-1, 4 * 65536, device.I8, 216.61}}, nil},
		{"osu-barrier.log", LogOptions{World: 8}, []wantRun{{"barrier", "dissemination", 8, 1}},
			[]wantSample{{0, 0, device.I8, 31.84}}, nil},
		// osu_latency and osu_bw of 5.6: point-to-point samples, 2 ranks;
		// bandwidth in MB/s becomes a time per message.
		{"osu-pt2pt-v5.log", LogOptions{}, []wantRun{{PointToPoint, PingPong, 2, 24}, {PointToPoint, Stream, 2, 23}},
			[]wantSample{{0, 0, device.U8, 1.59}, {-1, 4 << 20, device.U8, float64(4<<20) / 11490.35}}, nil},
		// osu_latency --validation and osu_bibw -W 32 of 7.5.
		{"osu-pt2pt-v7.log", LogOptions{}, []wantRun{{PointToPoint, PingPong, 2, 21}, {PointToPoint, BiStream, 2, 23}},
			[]wantSample{{0, 1, device.I8, 2.88}, {-1, 4 << 20, device.I8, 2 * float64(4<<20) / 46190.39}}, nil},
		// A suite: what can be read is, the rest is named with why.
		{"osu-suite.log", LogOptions{}, []wantRun{{PointToPoint, PingPong, 2, 11}, {"allreduce", "ring", 4, 10}, {"barrier", "dissemination", 4, 1}},
			[]wantSample{{11, 4, device.I32, 3.12}, {-1, 0, device.I8, 4.91}},
			[]string{"Hello World Test v7.3 skipped: a start-up test", "Init Test v7.3 skipped: a start-up test",
				"Multiple Bandwidth / Message Rate Test v7.3 skipped: a message-rate test", "Allgatherv Latency Test v7.3 skipped: a vector collective",
				"Non-blocking Allreduce Latency Test v7.3 skipped: a non-blocking collective", "MPI_Put Latency Test v7.3 skipped: not a benchmark of MPI"}},
		// The older layout's "error" is the result's largest relative
		// error, not a count: a float sum's rounding (1e-07) is no wrong
		// result. Three collectives one after the other, as a script's
		// loop prints them, each named by its echo; the middle one, an
		// allreduce, rounds.
		{"nccl-three-old.log", LogOptions{}, []wantRun{{"allgather", "ring", 4, 7}, {"allreduce", "ring", 4, 7}, {"broadcast", "binomial_tree", 4, 7}},
			[]wantSample{{0, 8, device.F32, 24.79}, {7, 8, device.F32, 25.04}, {-1, 2 << 20, device.F32, 232.69}}, nil},
		// An excerpt of an old two-node run: no command line, no rank
		// lines, NCCL INFO lines under the headers; the world from NCCL's
		// own "comm ... nranks 16" line (nGpus 8 would say one node), the
		// benchmark from the file's name.
		{"all_reduce_perf-2node-old.log", LogOptions{}, []wantRun{{"allreduce", "ring", 16, 13}},
			[]wantSample{{0, 8, device.F32, 39.68}, {-1, 128 << 20, device.F32, 22932.82}}, []string{"all_reduce_perf taken from the file's name"}},
		// A suite whose "#" lines were lost: each benchmark named by the
		// lines before its rows; those nexar-go does not model skipped
		// and named, the others read.
		{"osu-suite-no-hash.log", LogOptions{}, []wantRun{{PointToPoint, PingPong, 2, 11}, {"allreduce", "ring", 4, 10}},
			[]wantSample{{0, 1, device.U8, 0.90}, {11, 4, device.F32, 3.12}},
			[]string{"read as osu_latency (line 7)", "osu_mbw_mr skipped: named by line 21, it is not a benchmark nexar-go models"}},
		// The "#" lines lost: the benchmark from the file's name.
		{"osu_latency-numbers-only.txt", LogOptions{}, []wantRun{{PointToPoint, PingPong, 2, 23}},
			[]wantSample{{0, 1, device.U8, 1.70}}, []string{"read as osu_latency (the file's name)"}},
		// ... or given.
		{"osu_latency-numbers-only.txt", LogOptions{Collective: "allreduce", World: 8, DType: "i8"}, []wantRun{{"allreduce", "ring", 8, 23}}, nil, nil},
	} {
		name := c.file
		t.Run(name, func(t *testing.T) {
			log, err := ReadFile(filepath.Join("testdata", c.file), "", c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(log.Runs) != len(c.runs) {
				t.Fatalf("%d runs, want %d: %+v", len(log.Runs), len(c.runs), log.Runs)
			}
			for i, w := range c.runs {
				r := log.Runs[i]
				if r.Collective != w.collective || r.World != w.world || len(r.Samples) != w.samples || r.Samples[0].Algorithm != w.algorithm {
					t.Errorf("run %d (line %d, %s): %s/%s on %d ranks (%s), %d samples; want %s/%s on %d, %d samples", i, r.Line, r.Benchmark,
						r.Collective, r.Samples[0].Algorithm, r.World, r.WorldFrom, len(r.Samples), w.collective, w.algorithm, w.world, w.samples)
				}
			}
			ss := log.Samples()
			validSamples(t, ss)
			for _, w := range c.samples {
				i := w.i
				if i < 0 {
					i = len(ss) - 1
				}
				s := ss[i]
				if s.Bytes != w.bytes || s.DType != w.dt || math.Abs(s.Time*1e6-w.us) > 0.006*math.Max(1, w.us/1000) {
					t.Errorf("sample %d = %v %s %.4f us (%s), want %d B %s %.4f us", i, s, s.DType, s.Time*1e6, s.Source, w.bytes, w.dt, w.us)
				}
			}
			j := 0
			for _, n := range log.Notes {
				if j < len(c.notes) && strings.Contains(n, c.notes[j]) {
					j++
				}
			}
			if j < len(c.notes) {
				t.Errorf("no note %q among\n%s", c.notes[j], strings.Join(log.Notes, "\n"))
			}
		})
	}
}

// TestReadErrors: what cannot be read fails naming its line and what
// was expected there.
func TestReadErrors(t *testing.T) {
	header := "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
	row := "  8  2  float  sum  -1  3.5  0  0  0\n"
	start := "# Collective test starting: all_reduce_perf\n#  Rank  0 Group 0\n#  Rank  1 Group 0\n"
	for _, c := range []struct {
		format string
		in     string
		opt    LogOptions
		want   string
	}{
		{FormatNCCLTests, "hello\n", LogOptions{}, "log:1: no nccl-tests results"},
		{FormatNCCLTests, header + row, LogOptions{}, "log:2: no collective"},
		{FormatNCCLTests, "# Collective test starting: all_reduce_perf\n" + header + row, LogOptions{}, "log:3: no world size"},
		{FormatNCCLTests, start + header + "  8  2  float  sum  -1  3.5  0  0  0  7  8\n", LogOptions{}, "log:5: 11 fields under the header of line 4, which names 9"},
		{FormatNCCLTests, start + header + "  8  3  quux  sum  -1  3.5  0  0  0\n", LogOptions{}, `log:5: type "quux": want an element type`},
		{FormatNCCLTests, start + header + "  8  2  float  sum  -1  3.x  0  0  0\n", LogOptions{}, `log:5: out-of-place time "3.x": want a number of microseconds`},
		{FormatNCCLTests, start + header + "  8  2  float  sum  -1  3.5  0  0  0\n", LogOptions{InPlace: true}, "log:5: the table of line 4 has no in-place times"},
		{FormatNCCLTests, start + header + "  6  2  float  sum  -1  3.5  0  0  0\n", LogOptions{}, "log:5: size 6 bytes is not a whole number of f32 elements"},
		{FormatNCCLTests, start + header + row, LogOptions{Algorithm: "rign"}, `log:5: unknown allreduce algorithm "rign"`},
		{FormatNCCLTests, "# Collective test starting: hypercube_perf\n#  Rank  0\n#  Rank  1\n" + header + row, LogOptions{}, "log:5: benchmark hypercube_perf (its start line) is not one nexar-go models"},
		{FormatOSU, "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4   1.5\n", LogOptions{}, "log:3: OSU logs do not say how many ranks ran"},
		{FormatOSU, "# OSU MPI_Put Latency Test v7.3\n# Size  Latency (us)\n1  1.4\n", LogOptions{World: 2}, "log:1: OSU MPI_Put Latency Test v7.3 is not a benchmark nexar-go models"},
		{FormatOSU, "# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2\n", LogOptions{}, "log:1: OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2 is not a benchmark nexar-go models: a message-rate test"},
		{FormatOSU, "# OSU MPI Allreduce Latency Test v7.3\n# Datatype: MPI_COMPLEX.\n# Size  Avg Latency(us)\n4  1.5\n", LogOptions{World: 2}, "log:2: datatype MPI_COMPLEX has no nexar-go dtype"},
		{FormatOSU, "4   1.5\n8   1.6\n", LogOptions{}, "log:1: rows of numbers with no OSU title before them"},
		{FormatOSU, "\n", LogOptions{}, "log:1: no OSU results"},
		{FormatResults, "", LogOptions{}, "log:1: empty file"},
		{FormatResults, "collective,world\n", LogOptions{}, `log:1: the header has no "algorithm" column`},
		{FormatResults, strings.Join(results.SimColumns, ",") + "\nallreduce,ring,x,8,f32,1e-5,0,0,,sum,1,0,0,0,0\n", LogOptions{}, `log:2: column "world": "x" is not a whole number; want a number of ranks`},
		{FormatResults, strings.Join(results.SimColumns, ",") + "\nallreduce,ring,2,8,f99,1e-5,0,0,,sum,1,0,0,0,0\n", LogOptions{}, `log:2: column "dtype": `},
		{"", "name = \"x\"\n[network]\n", LogOptions{}, "neither a results.csv, an nccl-tests log or JSON report, an OSU log nor an IMB log"},
		{FormatNCCLTestsJSON, "{", LogOptions{}, "log: not nccl-tests' JSON report"},
		{FormatIMB, "hello\n", LogOptions{}, "log:1: no IMB results"},
		{FormatNCCLTestsJSON, `{"version":3,"args":["./all_reduce_perf"],"nccl_version":22703,"config":{"devices":[{}]},"results":[{"size":8`, LogOptions{}, "a report cut short"},
		{FormatIMB, "# Benchmarking Allreduce\n#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]\n 0 1000 1 2 1.5\n", LogOptions{}, `log:1: Allreduce: no "# #processes = N" line`},
		{FormatIMB, "# MPI_Datatype for reductions : MPI_COMPLEX\n# Benchmarking Allreduce\n# #processes = 2\n#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]\n 0 1000 1 2 1.5\n", LogOptions{}, "log:2: datatype MPI_COMPLEX has no nexar-go dtype"},
		{FormatIMB, "# Benchmarking Allreduce\n# #processes = 2\n#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]\n 0 1000 1 2 x\n", LogOptions{}, `log:4: t_avg[usec] "x": want a number of microseconds`},
		{FormatNCCLTestsJSON, `{"version":3,"results":[]}`, LogOptions{}, "log: config, results: missing"},
		{FormatNCCLTestsJSON, `{"version":3,"config":{"devices":[{}]},"results":[]}`, LogOptions{}, "log: args[0]: the report names no binary: give the collective"},
		{FormatNCCLTestsJSON, `{"version":3,"args":["./hypercube_perf"],"config":{"devices":[{}]},"results":[]}`, LogOptions{}, `log: args[0]: benchmark "hypercube_perf" is not one nexar-go models`},
		{FormatNCCLTestsJSON, `{"version":3,"args":["./all_reduce_perf"],"config":{"devices":[]},"results":[]}`, LogOptions{}, "log: config.devices: 0 ranks: give the world size"},
		{FormatNCCLTestsJSON, `{"version":3,"args":["./all_reduce_perf"],"config":{"devices":[{},{}]},"results":[{"size":8,"count":3,"type":"quux","out_of_place":{"time":3}}]}`, LogOptions{}, `log: results[0]: type "quux"`},
		{FormatNCCLTestsJSON, `{"version":3,"args":["./all_reduce_perf"],"config":{"devices":[{},{}]},"results":[{"size":8,"count":2,"type":"float","out_of_place":null}]}`, LogOptions{}, "log: results: no result with a time"},
	} {
		_, err := Read("log", []byte(c.in), c.format, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestReadNewerColumns: per-iteration, cputime and timestamp columns of
// newer nccl-tests.
func TestReadNewerColumns(t *testing.T) {
	in := "# Collective test starting: reduce_perf\n#  Rank  0 Group  0\n#  Rank  1 Group  0\n" +
		"#       size         count      type   redop    root  cputime   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%  cputime   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%  timestamp\n" +
		"        4096          1024  bfloat16     max       1    11.50    0.36    0.36       0    11.1     12.0     12.0     1.5    11.70    0.35    0.35       0    11.2     12.1     12.1     1.4  2025-01-31 12:00:00\n"
	for _, inPlace := range []bool{false, true} {
		log, err := Read("log", []byte(in), FormatNCCLTests, LogOptions{InPlace: inPlace})
		if err != nil {
			t.Fatal(err)
		}
		s := log.Samples()[0]
		want := map[bool]float64{false: 11.5e-6, true: 11.7e-6}[inPlace]
		if s.Collective != "reduce" || s.World != 2 || s.DType != device.BF16 || s.Op != device.Max || s.Root != 1 || math.Abs(s.Time-want) > 1e-12 {
			t.Errorf("in-place %v: %+v", inPlace, s)
		}
	}
}

// TestReadSendRecv: nccl-tests' sendrecv_perf is a point-to-point
// benchmark on every rank: each sends to the next.
func TestReadSendRecv(t *testing.T) {
	in := "# Collective test starting: sendrecv_perf\n#  Rank  0 Group  0\n#  Rank  1 Group  0\n#  Rank  2 Group  0\n" +
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
		"     1048576        262144     float     sum      -1    45.10   23.25   23.25      0    45.02   23.29   23.29    N/A\n"
	log, err := Read("log", []byte(in), "", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := log.Samples()[0]
	if s.Collective != PointToPoint || s.Algorithm != Shift || s.World != 3 || s.Bytes != 1<<20 || math.Abs(s.Time-45.1e-6) > 1e-12 {
		t.Errorf("%+v", s)
	}
	validSamples(t, log.Samples())
}

// TestReadResults reads a results.csv of nexar-live by its columns, one
// run per collective and world size, and leaves wrong rows out.
func TestReadResults(t *testing.T) {
	in := strings.Join(append(results.SimColumns, "wrong"), ",") + "\n" +
		"allreduce,pipelined_ring(segment=64KiB),4,1048576,f32,0.002,0,0,segment=65536,sum,10,0,0,0,24,0\n" +
		"allreduce,ring,4,8,f32,0.0001,0,0,,sum,10,0,0,0,24,3\n" +
		"broadcast,binomial_tree,2,1024,u8,0.00005,0,0,,,10,0,0,0,1,0\n"
	log, err := Read("results.csv", []byte(in), "", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 2 || log.Runs[0].Collective != "allreduce" || log.Runs[0].World != 4 || log.Runs[1].World != 2 || len(log.Samples()) != 2 {
		t.Fatalf("runs %+v", log.Runs)
	}
	s := log.Samples()[0]
	if s.Algorithm != "pipelined_ring(segment=64KiB)" || s.Params["segment"] != 65536 || s.Assumed || s.Time != 0.002 {
		t.Errorf("sample %+v", s)
	}
	if len(log.Notes) != 1 || !strings.Contains(log.Notes[0], "results.csv:3: 1 row(s) whose results were wrong left out") {
		t.Errorf("notes %q", log.Notes)
	}
	// A run on GPUs (nexar-live --device cuda): a device column.
	gpu := strings.Join(append(results.SimColumns, "wrong", "device"), ",") + "\n" +
		"allreduce,ring,4,1048576,f32,0.002,0,0,,sum,10,0,0,0,24,0,cuda\n"
	if log, err = Read("results.csv", []byte(gpu), "", LogOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(log.Samples()) != 1 || len(log.Notes) != 1 || !strings.Contains(log.Notes[0], "results.csv:2: 1 row(s) measured with buffers on a device") {
		t.Errorf("device rows: %d samples, notes %q", len(log.Samples()), log.Notes)
	}
}

// TestReadResultsThresholds: the transport thresholds nexar-live records
// go on every sample, read by their columns' names wherever they are;
// files without them (older nexar-live, nexar-sim) give none; bad values
// are errors naming the line.
func TestReadResultsThresholds(t *testing.T) {
	head := strings.Join(append(results.SimColumns, "wrong"), ",")
	row := "allreduce,ring,4,8,f32,0.0001,0,0,,sum,10,0,0,0,24,0"
	for _, c := range []struct {
		name, in string
		want     *algos.Thresholds
		err      string
	}{
		{"old file", head + "\n" + row + "\n", nil, ""},
		{"nexar-sim's", strings.Join(results.SimColumns, ",") + "\n" + strings.TrimSuffix(row, ",0") + "\n", nil, ""},
		{"default", head + ",bulk_threshold,eager_threshold\n" + row + ",65536,0\n", &algos.Thresholds{Bulk: 64 << 10}, ""},
		{"never", head + ",bulk_threshold,eager_threshold\n" + row + ",-1,0\n", &algos.Thresholds{Bulk: -1}, ""},
		{"eager on", head + ",bulk_threshold,eager_threshold\n" + row + ",16384,4096\n", &algos.Thresholds{Bulk: 16 << 10, Eager: 4096}, ""},
		{"on a device", head + ",device,bulk_threshold,eager_threshold\n" + row + ",cuda,16384,0\n", &algos.Thresholds{Bulk: 16 << 10}, ""},
		{"another order", "eager_threshold,bulk_threshold," + head + "\n0,1024," + row + "\n", &algos.Thresholds{Bulk: 1024}, ""},
		{"one column", head + ",bulk_threshold\n" + row + ",16384\n", nil, "results.csv:1: the header has one of the bulk_threshold and eager_threshold columns"},
		{"never spelt out", head + ",bulk_threshold,eager_threshold\n" + row + ",never,0\n", nil, `results.csv:2: column "bulk_threshold": "never" is not a whole number; want a number of bytes from 1, or -1 (never)`},
		{"negative eager", head + ",bulk_threshold,eager_threshold\n" + row + ",1,-1\n", nil, `results.csv:2: column "eager_threshold": -1 is out of range`},
	} {
		t.Run(c.name, func(t *testing.T) {
			log, err := Read("results.csv", []byte(c.in), FormatResults, LogOptions{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ss := log.Samples()
			if len(ss) != 1 || !reflect.DeepEqual(ss[0].Transport, c.want) {
				t.Errorf("samples %+v, want thresholds %+v", ss, c.want)
			}
		})
	}
}

func TestLogFormat(t *testing.T) {
	for file, want := range map[string]string{
		"nccl-allreduce.log":            FormatNCCLTests,
		"nccl-allgather-old.log":        FormatNCCLTests,
		"nccl-tag-output.log":           FormatNCCLTests,
		"nccl-srun-label.log":           FormatNCCLTests,
		"nccl-markdown.md":              FormatNCCLTests,
		"osu-allreduce.log":             FormatOSU,
		"osu-barrier.log":               FormatOSU,
		"osu-suite.log":                 FormatOSU,
		"osu_latency-numbers-only.txt":  FormatOSU,
		"osu-suite-no-hash.log":         FormatOSU,
		"nccl-three-old.log":            FormatNCCLTests,
		"all_reduce_perf-2node-old.log": FormatNCCLTests,
		"nccl-bandwidth-only.log":       FormatNCCLTests,
		"nccl-hash-stripped.md":         FormatNCCLTests,
		"nccl-tests-report.json":        FormatNCCLTestsJSON,
		"imb-mpi1.log":                  FormatIMB,
	} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := LogFormat(b); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	for in, want := range map[string]string{
		strings.Join(results.SimColumns, ",") + "\n":                                          FormatResults,
		"\ufeffTime_s,dtype,bytes,world,algorithm,collective\r\n1,f32,8,2,ring,allreduce\r\n": FormatResults,
		"name = \"x\"\n[network]\n":                                                           "",
		"$ mpirun -np 2 osu_bw\n":                                                             FormatOSU,
		"[1,0]<stdout>:# nThread 1 nGpus 1\n":                                                 FormatNCCLTests,
		// Pasted where Markdown rendered it: nccl-tests' "#"s are gone.
		"  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error\n": FormatNCCLTests,
		"nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5\n":  FormatNCCLTests,
		"size: 8, count: 2, type: float\n":                                                   "",
	} {
		if got := LogFormat([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestCleanLine: launchers' prefixes, indentation and quote markers go,
// in any order; a benchmark's own lines stay.
func TestCleanLine(t *testing.T) {
	for in, want := range map[string]string{
		"[1,0]<stdout>:#  Rank  0 Group  0":         "#  Rank  0 Group  0",
		"[1,12]<stderr>:  1024  256  float":         "1024  256  float",
		" 0: # nThread 1 nGpus 1":                   "# nThread 1 nGpus 1",
		"12:       8388608       2097152     float": "8388608       2097152     float",
		" 0:":                                                "",
		"    > > # Using devices\r":                          "# Using devices",
		">    [1,0]<stdout>:         8":                      "8",
		"[0] # OSU MPI Latency Test v7.3":                    "# OSU MPI Latency Test v7.3",
		"[default0]:# nThread 1":                             "# nThread 1",
		"\x1b[32m  4096  1024  float\x1b[0m":                 "4096  1024  float",
		"gpu07:9911:9925 [3] NCCL INFO Channel 00/32 :    0": "gpu07:9911:9925 [3] NCCL INFO Channel 00/32 :    0",
		"   1048576        262144     float     sum      -1": "1048576        262144     float     sum      -1",
		"12:34:56 starting":                                  "12:34:56 starting",
	} {
		if got := cleanLine(in); got != want {
			t.Errorf("cleanLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHints: the processes a launcher's command line starts.
func TestHints(t *testing.T) {
	for _, c := range []struct {
		lines []string
		procs int
		bench string
	}{
		{[]string{"$ mpirun -np 16 -N 8 ./build/all_reduce_perf -b 8 -g 1"}, 16, "all_reduce_perf"},
		{[]string{"mpirun --np=4 osu_allreduce"}, 4, "osu_allreduce"},
		{[]string{"srun -N 2 --ntasks-per-node=8 ./all_gather_perf"}, 16, "all_gather_perf"},
		{[]string{"srun -N2 -n4 osu_allreduce"}, 4, "osu_allreduce"},
		{[]string{"flux run -N4 --tasks-per-node=96 /opt/osu/osu_barrier"}, 384, "osu_barrier"},
		{[]string{"mpiexec -n 8 -ppn 4 ./reduce_scatter_perf_mpi"}, 8, "reduce_scatter_perf_mpi"},
		{[]string{"#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "srun ./osu_bcast"}, 8, "osu_bcast"},
		{[]string{"#SBATCH --nodes=4", "srun --ntasks-per-node=2 ./osu_bcast"}, 8, "osu_bcast"},
		{[]string{"SLURM_NTASKS=16"}, 16, ""},
		{[]string{"srun -c 8 -n 2 ./osu_latency"}, 2, "osu_latency"},
		{[]string{"mpirun -np 2 osu_bw -W 32 -T mpi_float"}, 2, "osu_bw"},
		{[]string{"/nccl-tests/build/all_reduce_perf: /usr/lib/libnl-3.so.200: no version information"}, 0, "all_reduce_perf"},
		// A look around before the benchmark's launch is not its launch;
		// a launch with no count of its own starts what the batch or
		// Slurm's environment says, not what an earlier launch did.
		{[]string{"#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=8", "mpirun -N 1 bash -c 'echo $(hostname)'", "srun --mpi=pmix \\", "  ./all_reduce_perf -b 8 -e 16G"}, 16, "all_reduce_perf"},
		{[]string{"#SBATCH -N 2", "#SBATCH --ntasks-per-node=4", "srun -N 2 --ntasks-per-node=1 nvidia-smi -L", "srun ./osu_allreduce"}, 8, "osu_allreduce"},
		{[]string{"SLURM_NTASKS=32", "mpirun -np 4 ./all_reduce_perf", "srun ./all_reduce_perf"}, 32, "all_reduce_perf"},
		{[]string{"mpirun -np 4 env NCCL_DEBUG=INFO ./all_reduce_perf -g 1"}, 4, "all_reduce_perf"},
		// A wrapper of the benchmark is its launch; messages naming the
		// launcher launch nothing.
		{[]string{"srun -N 16 --ntasks-per-node=4 --mpi=pmix bash -c \\", `   "./all_gather_perf -b 1M -e 1G -f 4"`}, 64, "all_gather_perf"},
		{[]string{`srun -n 8 sh -c "$NCCL_TESTS/build/${T}_perf -b 8"`}, 8, ""},
		{[]string{"$ mpirun -np 64 ./all_gather_perf -b 8", "mpirun noticed that process rank 3 with PID 0 on node n1 exited on signal 9", "mpirun (Open MPI) 4.1.5", "mpirun prints the output below"}, 64, "all_gather_perf"},
		// A distribution's name for its launcher.
		{[]string{"mpirun.mpich -np 16 -env LD_LIBRARY_PATH=/opt/rocm/lib ./build/all_reduce_perf -b 8"}, 16, "all_reduce_perf"},
		{[]string{"mpiexec.hydra -n 4 ./all_reduce_perf"}, 4, "all_reduce_perf"},
	} {
		var h hints
		for i, l := range c.lines {
			h.scan(cleanLine(l), i+1)
		}
		if n, from := h.processes(); n != c.procs || h.benchmark != c.bench {
			t.Errorf("%q: %d processes (%s), benchmark %q; want %d, %q", c.lines, n, from, h.benchmark, c.procs, c.bench)
		}
	}
	var h hints
	h.scan("mpirun -np 2 osu_bw -W 32 -T mpi_float", 1)
	if h.window != 32 || h.dtype != "mpi_float" {
		t.Errorf("osu_bw flags: window %d, type %q", h.window, h.dtype)
	}
	// The nodes of a launch.
	for line, want := range map[string]int{
		"srun --nodes=4 --ntasks-per-node=8 ./all_gather_perf":      4,
		"mpirun -np 64 --map-by ppr:4:node ./all_gather_perf -b 8":  16,
		"mpirun -np 8 ./all_gather_perf":                            0,
		"srun -N 2 bash -c \"nvidia-smi -L\"":                       0, // a look around
		"#SBATCH --nodes=4\nmpirun -np 8 ./all_reduce_perf":         0, // Open MPI fills a node first
		"#SBATCH --nodes=4\nsrun -n 8 ./all_reduce_perf":            4,
		"mpirun.openmpi -np 16 --npernode 8 ./all_reduce_perf -g 1": 2,
	} {
		var h hints
		for i, l := range strings.Split(line, "\n") {
			h.scan(l, i+1)
		}
		if got := h.nodeCount(); got != want {
			t.Errorf("%q: %d node(s), want %d", line, got, want)
		}
	}
	// NCCL_ALGO and NCCL_PROTO as launchers and scripts set them.
	for _, c := range []struct {
		lines       []string
		algo, proto string
	}{
		{[]string{"mpirun -np 2 -x NCCL_DEBUG=INFO -x NCCL_ALGO=Tree ./all_reduce_perf -g 1"}, "Tree", ""},
		{[]string{"NCCL_PROTO=^LL128 NCCL_ALGO='Ring,Tree' ./all_reduce_perf"}, "Ring,Tree", "^LL128"},
		{[]string{`export NCCL_ALGO="allreduce:ring;allgather:ring"`, "srun ./all_gather_perf"}, "allreduce:ring;allgather:ring", ""},
		{[]string{"srun --export=ALL,NCCL_ALGO=Ring,Tree,NCCL_PROTO=Simple,FOO=1 ./all_reduce_perf"}, "Ring,Tree", "Simple"},
		{[]string{"mpiexec -n 4 -genv NCCL_ALGO Tree ./all_reduce_perf"}, "Tree", ""},
		{[]string{"NCCL INFO NCCL_ALGO set by environment to Ring"}, "", ""}, // NCCL's own line: read with its info
		{[]string{"srun --export=NCCL_ALGO=Tree ./all_reduce_perf -b 8"}, "Tree", ""},
		{[]string{"NCCL_ALGO=Ring,Tree", "NCCL_PROTO=Simple"}, "Ring,Tree", "Simple"}, // env's listing
		{[]string{"We compare against NCCL_ALGO=Tree, which is slower."}, "", ""},     // prose
		{[]string{"echo NCCL_ALGO=$NCCL_ALGO", "env | grep NCCL_ALGO="}, "", ""},      // no value
		{[]string{"export NCCL_ALGO=Tree", "env | grep NCCL_ALGO=", "srun ./all_reduce_perf"}, "Tree", ""},
	} {
		var h hints
		for i, l := range c.lines {
			h.scan(cleanLine(l), i+1)
		}
		if env := h.batch.env.over(h.env); env.algo != c.algo || env.proto != c.proto {
			t.Errorf("%q: NCCL_ALGO %q NCCL_PROTO %q, want %q %q", c.lines, env.algo, env.proto, c.algo, c.proto)
		}
	}
	// nccl-tests' own -t and -g, as getopt reads them.
	for line, want := range map[string][2]int{
		"./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8":      {0, 8},
		"mpirun -np 2 ./all_reduce_perf -b8 -e 1G -t2 -g4":   {2, 4},
		"all_gather_perf --nthreads=4 --ngpus 2 -c 0":        {4, 2},
		"mpirun -np 2 osu_bw -t 4":                           {0, 0},
		"./all_reduce_perf -b 8 -e 128M -f 2 -g 1 -G 0 -z 0": {0, 1},
	} {
		var h hints
		h.scan(line, 1)
		if h.threads != want[0] || h.gpus != want[1] {
			t.Errorf("%q: -t %d -g %d, want %d, %d", line, h.threads, h.gpus, want[0], want[1])
		}
	}
	// Without a "# nThread" line, the ranks a process holds come from
	// the benchmark's -g (not undone by the binary's loader warning).
	text := "./build/all_reduce_perf -b 8 -e 64 -f 8 -g 8\n" +
		"./build/all_reduce_perf: /usr/lib/libnl-3.so.200: no version information available\n" +
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
		"           8             2     float     sum      -1    25.31    0.00    0.00      0    25.30    0.00    0.00      0\n" +
		"          64            16     float     sum      -1    25.40    0.00    0.00      0    25.41    0.00    0.00      0\n"
	log, err := ReadNCCLTests("g8.log", strings.NewReader(text), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := log.Runs[0]; r.World != 8 || r.Collective != "allreduce" {
		t.Errorf("-g 8 without rank lines: %s on %d ranks (%s)", r.Collective, r.World, r.WorldFrom)
	}
	// rccl-tests: its version after the nThread line, RCCL's release from
	// rccl-library, a table of in-place times only (-O 0).
	rccl := "mpirun -np 2 ./build/all_reduce_perf -b 1M -e 4M -f 4 -O 0\n" +
		"# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n" +
		"rccl-tests: Version develop:ae3e635 rccl-headers=22803 rccl-library=22707\n" +
		"#                                                              in-place\n" +
		"#       size         count      type   redop    root     time   algbw   busbw #wrong\n" +
		"     1048576        262144     float     sum      -1    40.10   26.15   26.15      0\n" +
		"     4194304       1048576     float     sum      -1    61.30   68.42   68.42      0\n"
	for _, inPlace := range []bool{false, true} {
		log, err := ReadNCCLTests("rccl.log", strings.NewReader(rccl), LogOptions{InPlace: inPlace})
		if err != nil {
			t.Fatal(err)
		}
		r := log.Runs[0]
		if r.World != 2 || len(r.Samples) != 2 || r.Samples[1].Time != 61.30e-6 || r.NCCL == nil || !r.NCCL.RCCL || r.NCCL.Version != "2.27.7" {
			t.Errorf("rccl-tests, in place %t: %+v %+v", inPlace, r, r.NCCL)
		}
		if note := strings.Join(log.Notes, "\n"); inPlace == strings.Contains(note, "in-place times only") || !strings.Contains(note, "RCCL 2.27.7") {
			t.Errorf("rccl-tests, in place %t: notes %q", inPlace, log.Notes)
		}
	}
	// NCCL_ALGO from the command line joins the run's NCCL lines, unless
	// NCCL's own line says it.
	for _, c := range []struct{ info, want string }{
		{"", "Tree"},
		{"h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n", "Ring"},
	} {
		text := "mpirun -np 8 -x NCCL_ALGO=Tree ./build/all_reduce_perf -b 8 -e 64 -f 8\n" + c.info +
			"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
			"           8             2     float     sum      -1    25.31    0.00    0.00      0    25.30    0.00    0.00      0\n"
		log, err := ReadNCCLTests("env.log", strings.NewReader(text), LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if info := log.Runs[0].NCCL; info == nil || info.Env["NCCL_ALGO"] != c.want || log.Samples()[0].NCCL.Env["NCCL_ALGO"] != c.want {
			t.Errorf("%q: %+v, want NCCL_ALGO=%s", c.info, info, c.want)
		}
	}
}

// TestReadNodes: LogOptions.Nodes gives the nodes of runs whose log does
// not say, over what the log says (with a note), and no more than ranks.
func TestReadNodes(t *testing.T) {
	for _, c := range []struct {
		file  string
		nodes int
		want  int
		note  string
		err   string
	}{
		{"nccl-allreduce.log", 0, 2, "", ""}, // its rank lines: two hosts
		{"nccl-allreduce.log", 4, 4, "the log gives 2 node(s); the nodes given, 4, are taken instead", ""},
		{"nccl-elided-ranks.log", 0, 0, "", ""}, // some hosts listed: unknown
		{"nccl-elided-ranks.log", 16, 16, "", ""},
		{"nccl-allreduce.log", 9, 0, "", "9 nodes given for a run of 8 ranks"},
	} {
		log, err := ReadFile(filepath.Join("testdata", c.file), FormatNCCLTests, LogOptions{Nodes: c.nodes})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s --nodes %d: %v, want %q", c.file, c.nodes, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := log.Samples()[0].Nodes; got != c.want {
			t.Errorf("%s --nodes %d: %d node(s), want %d", c.file, c.nodes, got, c.want)
		}
		if c.note != "" && !strings.Contains(strings.Join(log.Notes, "\n"), c.note) {
			t.Errorf("%s --nodes %d: no note %q in %q", c.file, c.nodes, c.note, log.Notes)
		}
	}
}

// TestReadIMBPublishedRows: what IMB prints in a table besides timings
// (a size it gave up on, a command after the table) is not a timing;
// reduce_scatter's #bytes is a rank's block since IMB 2019; the MPI 4
// half-precision types of -red_data_type.
func TestReadIMBPublishedRows(t *testing.T) {
	head := func(release string) string {
		return "#    Intel(R) MPI Benchmarks " + release + ", MPI-1 part\n" +
			"# MPI_Datatype                   :   MPI_BYTE \n# MPI_Datatype for reductions    :   MPIX_C_BF16\n"
	}
	table := "# Benchmarking Reduce_scatter \n# #processes = 4 \n" +
		"       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n" +
		"         1024         1000         3.00         3.20         3.10\n" +
		"      2097152 time-out.; Time limit (secs_per_sample * msg_sizes_list_len) is over; use -time to increase it\n" +
		"      4194304 out-of-mem.; needed X=   1.234 GB; use flag \"-mem X\" to set maximum memory\n" +
		"$ mpirun -np 4 ./IMB-MPI1 Barrier\n" +
		"# Benchmarking Barrier \n# #processes = 4 \n" +
		" #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n" +
		"         1000         5.00         5.50         5.20\n" +
		"srun: error: node12: task 3: Exited with exit code 1\n"
	for _, c := range []struct {
		release string
		bytes   int
	}{{"2021.7", 4096}, {"2018", 1024}} {
		log, err := Read("imb.log", []byte(head(c.release)+table), FormatIMB, LogOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.release, err)
		}
		ss := log.Samples()
		if len(ss) != 2 || ss[0].Bytes != c.bytes || ss[0].DType != device.BF16 || math.Abs(ss[0].Time-3.1e-6) > 1e-12 || ss[1].Collective != "barrier" || math.Abs(ss[1].Time-5.2e-6) > 1e-12 {
			t.Errorf("IMB %s: %+v", c.release, ss)
		}
		if note := strings.Join(log.Notes, "\n"); !strings.Contains(note, "2 size(s) IMB did not time") {
			t.Errorf("IMB %s: notes %q", c.release, log.Notes)
		}
	}
}

// TestReadNCCLTestsJSONEdges: a time the report writes as "nan" is no
// time; NCCL_TESTS_SPLIT's groups make communicators of one group's
// processes; CPU times are named; a report cut short is still known.
func TestReadNCCLTestsJSONEdges(t *testing.T) {
	dev := func(g int) string { return fmt.Sprintf(`{"rank":0,"group":%d,"hostname":"h","device_info":"GPU"}`, g) }
	report := `{"version":3,"args":["./all_reduce_perf"],"nccl_version":22703,"config":{"nthreads":1,"ngpus":1,"devices":[` +
		dev(0) + "," + dev(1) + "," + dev(0) + "," + dev(1) + `]},"results":[` +
		`{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"cpu_time":"nan","alg_bw":0,"bus_bw":0,"nwrong":null}},` +
		`{"size":64,"count":16,"type":"float","redop":"sum","root":"    -1","out_of_place":{"cpu_time":12.5,"alg_bw":0,"bus_bw":0,"nwrong":0}}]}`
	if got := LogFormat([]byte(report)); got != FormatNCCLTestsJSON {
		t.Fatalf("LogFormat: %q", got)
	}
	log, err := Read("r.json", []byte(report), "", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss := log.Samples()
	note := strings.Join(log.Notes, "\n")
	if len(ss) != 1 || ss[0].World != 2 || math.Abs(ss[0].Time-12.5e-6) > 1e-12 || !strings.Contains(note, "NCCL_TESTS_SPLIT") ||
		!strings.Contains(note, "CPU times") || !strings.Contains(note, "null or nan") {
		t.Errorf("%+v\n%s", ss, note)
	}
	if got := LogFormat([]byte(report[:len(report)/2])); got != FormatNCCLTestsJSON {
		t.Errorf("LogFormat of a report cut short: %q", got)
	}
}
