package calibrate

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sweep"
)

func parseFile(t *testing.T, parse func(string, *os.File, LogOptions) ([]Sample, error), path string, opt LogOptions) []Sample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := parse(path, f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func nccl(file string, f *os.File, o LogOptions) ([]Sample, error) { return ParseNCCLTests(file, f, o) }
func osu(file string, f *os.File, o LogOptions) ([]Sample, error)  { return ParseOSU(file, f, o) }

// The sample logs in testdata follow the layouts nccl-tests and the OSU
// benchmarks print; each row of this table checks a few of their lines.
func TestParseLogs(t *testing.T) {
	type want struct {
		i     int // sample index; -1 the last
		coll  string
		world int
		bytes int
		dt    device.DType
		us    float64
	}
	for _, c := range []struct {
		file   string
		parse  func(string, *os.File, LogOptions) ([]Sample, error)
		opt    LogOptions
		n      int
		checks []want
	}{
		{"testdata/nccl-allreduce.log", nccl, LogOptions{}, 25, []want{
			{0, "allreduce", 8, 8, device.F32, 35.00},
			{-1, "allreduce", 8, 128 << 20, device.F32, 11779.1},
		}},
		{"testdata/nccl-allreduce.log", nccl, LogOptions{InPlace: true}, 25, []want{{0, "allreduce", 8, 8, device.F32, 34.30}}},
		// Old layout: no redop or root, "error" columns, NCCL INFO lines,
		// no collective named: the option supplies it.
		{"testdata/nccl-allgather-old.log", nccl, LogOptions{Collective: "allgather"}, 6, []want{
			{0, "allgather", 4, 1024, device.F32, 24.31},
			{-1, "allgather", 4, 1 << 20, device.F32, 116.3},
		}},
		{"testdata/osu-allreduce.log", osu, LogOptions{World: 4}, 19, []want{
			{0, "allreduce", 4, 4, device.F32, 72.00},
			{-1, "allreduce", 4, 1 << 20, device.F32, 1382.72},
		}},
		{"testdata/osu-bcast-full.log", osu, LogOptions{World: 2, DType: "u8"}, 9, []want{
			{0, "broadcast", 2, 1, device.U8, 19.00},
			{-1, "broadcast", 2, 65536, device.U8, 150.07},
		}},
		// OSU's allgather size is a rank's block: times the world.
		{"testdata/osu-allgather.log", osu, LogOptions{World: 4}, 7, []want{
			{0, "allgather", 4, 4, device.I8, 20.00},
			{-1, "allgather", 4, 4 * 65536, device.I8, 216.61},
		}},
		{"testdata/osu-barrier.log", osu, LogOptions{World: 8}, 1, []want{{0, "barrier", 8, 0, device.F32, 31.84}}},
	} {
		ss := parseFile(t, c.parse, c.file, c.opt)
		if len(ss) != c.n {
			t.Errorf("%s: %d samples, want %d", c.file, len(ss), c.n)
			continue
		}
		for _, w := range c.checks {
			i := w.i
			if i < 0 {
				i = len(ss) - 1
			}
			s := ss[i]
			if s.Collective != w.coll || s.World != w.world || s.Bytes != w.bytes || s.DType != w.dt || math.Abs(s.Time*1e6-w.us) > 0.006 || s.Algorithm != defaultAlgorithm(w.coll) {
				t.Errorf("%s sample %d = %+v, want %s p=%d %d B %s %.2f us", c.file, i, s, w.coll, w.world, w.bytes, w.dt, w.us)
			}
		}
	}
}

func TestParseLogErrors(t *testing.T) {
	header := "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
	for _, c := range []struct {
		parse func(string, *os.File, LogOptions) ([]Sample, error)
		in    string
		opt   LogOptions
		want  string
	}{
		{nccl, "hello\n", LogOptions{}, "no nccl-tests results"},
		{nccl, header + "  8  2  float  sum  -1  3.5  0  0  0\n", LogOptions{}, "no collective"},
		{nccl, header + "  8  2  float  sum  -1  3.5  0  0  0\n", LogOptions{Collective: "allreduce"}, "no world size"},
		{nccl, header + "  8  2  float  sum  -1\n", LogOptions{Collective: "allreduce", World: 2}, "5 fields under a header of 9"},
		{nccl, header + "  8  2  quux  sum  -1  3.5  0  0  0\n", LogOptions{Collective: "allreduce", World: 2}, `unknown type "quux"`},
		{nccl, header + "  6  2  float  sum  -1  3.5  0  0  0\n", LogOptions{Collective: "allreduce", World: 2}, "whole number of f32"},
		{nccl, header + "  8  2  float  sum  -1  3.5  0  0  0\n", LogOptions{Collective: "allreduce", World: 2, Algorithm: "rign"}, `unknown allreduce algorithm "rign"`},
		{osu, "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4   1.5\n", LogOptions{}, "give the world size"},
		{osu, "# OSU MPI Put Latency Test v7.3\n", LogOptions{World: 2}, "not a collective"},
		{osu, "# OSU MPI Allreduce Latency Test v7.3\n# Datatype: MPI_COMPLEX.\n", LogOptions{World: 2}, "no nexar-go dtype"},
	} {
		f, err := os.CreateTemp(t.TempDir(), "log")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(c.in)
		f.Seek(0, 0)
		_, err = c.parse("log", f, c.opt)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestLogFormat(t *testing.T) {
	for file, want := range map[string]string{
		"testdata/nccl-allreduce.log":     "nccl-tests",
		"testdata/nccl-allgather-old.log": "nccl-tests",
		"testdata/osu-allreduce.log":      "osu",
		"testdata/osu-barrier.log":        "osu",
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := LogFormat(b); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	if got := LogFormat([]byte(strings.Join(sweep.Header, ",") + "\n")); got != "results" {
		t.Errorf("results.csv: %q", got)
	}
	if got := LogFormat([]byte("name = \"x\"\n[network]\n")); got != "" {
		t.Errorf("scenario file: %q", got)
	}
}

// validSamples checks what any successful parse must give.
func validSamples(t *testing.T, ss []Sample) {
	for _, s := range ss {
		if _, err := algos.Lookup(s.Collective); err != nil || s.World < 1 || s.Bytes < 0 || !(s.Time >= 0) || math.IsInf(s.Time, 0) {
			t.Fatalf("invalid sample %+v", s)
		}
	}
}

func FuzzParseNCCLTests(f *testing.F) {
	for _, file := range []string{"testdata/nccl-allreduce.log", "testdata/nccl-allgather-old.log"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
	}
	f.Add([]byte("# Collective test starting: allreduce (algorithm ring(x=1), 3 ranks)\n#  size count type\n 8 2 float\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		opt := LogOptions{InPlace: flags&1 != 0}
		if flags&2 != 0 {
			opt.World = int(flags>>2) + 1
		}
		ss, err := ParseNCCLTests("fuzz", bytes.NewReader(data), opt)
		if err == nil {
			validSamples(t, ss)
		}
	})
}

func FuzzParseOSU(f *testing.F) {
	for _, file := range []string{"testdata/osu-allreduce.log", "testdata/osu-bcast-full.log", "testdata/osu-allgather.log", "testdata/osu-barrier.log"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(4))
	}
	f.Fuzz(func(t *testing.T, data []byte, world uint8) {
		ss, err := ParseOSU("fuzz", bytes.NewReader(data), LogOptions{World: int(world)})
		if err == nil {
			validSamples(t, ss)
		}
	})
}
