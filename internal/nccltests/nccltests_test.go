package nccltests

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/internal/cli"
)

func parse(t *testing.T, args ...string) *Flags {
	t.Helper()
	var f Flags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.Register(fs, Network{Latency: "5us", Bandwidth: "12.5GB/s"}, true)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

func ExampleFlags_Sizes() {
	var f Flags
	fs := flag.NewFlagSet("all_reduce_perf", flag.ContinueOnError)
	f.Register(fs, Network{Latency: "5us", Bandwidth: "12.5GB/s"}, false)
	fs.Parse([]string{"-b", "1K", "-e", "1M", "-f", "4"})
	sizes, err := f.Sizes()
	fmt.Println(sizes, err, f.Given())
	// Output: [1024 4096 16384 65536 262144 1048576] <nil> [-b -e -f]
}

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []int64
		err  string
	}{
		{nil, []int64{32 << 20}, ""},
		{[]string{"-b", "8", "-e", "128M", "-f", "2"}, nil, ""},
		{[]string{"-b", "8", "-e", "64K", "-f", "8"}, []int64{8, 64, 512, 4096, 32768}, ""},
		{[]string{"--minbytes", "0", "--maxbytes", "3K", "--stepbytes", "1K"}, []int64{0, 1024, 2048, 3072}, ""},
		{[]string{"-b", "1MiB", "-e", "2MB", "-i", "500000"}, []int64{1 << 20, 1<<20 + 500000}, ""},
		{[]string{"-b", "2G", "-e", "1G"}, nil, "is below"},
		{[]string{"-b", "8", "-e", "1K", "-f", "1"}, nil, "factor of at least 2"},
		{[]string{"-b", "0", "-e", "1K", "-f", "2"}, nil, "start above 0"},
		{[]string{"-b", "8", "-e", "1K", "-f", "2", "-i", "8"}, nil, "both given"},
		{[]string{"-b", "8", "-e", "1K", "-i", "0"}, nil, "above 0"},
		{[]string{"-b", "8x"}, nil, "-b 8x"},
		{[]string{"-b", "0", "-e", "1G", "-i", "1"}, nil, "more than"},
	} {
		got, err := parse(t, tc.args...).Sizes()
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one with %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != nil && !slices.Equal(got, tc.want):
			t.Errorf("%q: %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestScenario(t *testing.T) {
	f := parse(t, "-b", "8", "-e", "1K", "-f", "2", "-d", "float,bfloat16", "-o", "all", "--collective", "all_reduce_perf", "--algorithms", "ring,pipelined_ring,auto")
	text, name, err := f.Scenario([]int{3, 8}, "host")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("flags.toml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if name != "allreduce -b 8 -e 1K -f 2" || s.Name != name {
		t.Errorf("name %q, scenario %q", name, s.Name)
	}
	if len(s.Sweeps) != 4 {
		t.Fatalf("%d sweeps, want one per op", len(s.Sweeps))
	}
	sw := s.Sweeps[0]
	if len(sw.Algorithms) != 3 || !slices.Equal(sw.World, []int{3, 8}) || len(sw.Bytes) != 8 || len(sw.DTypes) != 2 || sw.Data.String() != "host" {
		t.Errorf("sweep %+v", sw)
	}
	// By default every algorithm that runs at every world size.
	text, _, err = parse(t).Scenario([]int{6}, "")
	if err != nil {
		t.Fatal(err)
	}
	if s, err = Parse("flags.toml", text); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, a := range s.Sweeps[0].Algorithms {
		if a.PowerOfTwo {
			t.Errorf("world 6 runs %s, which needs a power of two", a.Name)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--collective", "all_things"}, "--collective: unknown collective"},
		{[]string{"--algorithms", "ring,fast"}, "--algorithms: unknown allreduce algorithm"},
		{[]string{"-d", "quad"}, "-d quad"},
		{[]string{"-o", "avg"}, "-o avg"},
		{[]string{"--collective", "broadcast", "-o", "max"}, "does not reduce"},
	} {
		if _, _, err := parse(t, tc.args...).Scenario([]int{4}, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
	// A problem the scenario finds is named by its flag.
	text, _, _ = parse(t, "-b", "6", "-e", "6").Scenario([]int{4}, "")
	if _, err := Parse("flags.toml", text); err == nil || !strings.HasPrefix(err.Error(), "-b/-e/-f/-i: 6: not a multiple") {
		t.Errorf("error %v", err)
	}
	text, _, _ = parse(t, "--latency", "5").Scenario([]int{4}, "")
	if _, err := Parse("flags.toml", text); err == nil || !strings.HasPrefix(err.Error(), "--latency") {
		t.Errorf("error %v", err)
	}
}

func TestParseWorlds(t *testing.T) {
	got, err := ParseWorlds("1,3,8..32 x2")
	if err != nil || !slices.Equal(got, []int{1, 3, 8, 16, 32}) {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"0", "x", "4,", "-2"} {
		if _, err := ParseWorlds(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"8", "128M", "1G", "64K", "8MiB", "1.5KB", "9999999999999G", "-1K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSize(s)
		if err == nil && v < 0 {
			t.Errorf("%q: %d", s, v)
		}
	})
}

// TestPublishedCommandLines: nccl-tests' command lines as published
// beside their logs (nccl-tests' README and issues, cluster guides) are
// taken whole, getopt's glued values too; -t and -g are kept, the flags
// that say how the benchmark runs on GPUs named as ignored.
func TestPublishedCommandLines(t *testing.T) {
	for _, c := range []struct {
		line            string
		sizes           int
		threads, gpus   int
		ignored         string
		ranksPerProcess int
	}{
		{"-b 8 -e 128M -f 2 -g 8", 25, 0, 8, "-g", 8},
		{"-b 10G -e 10G -t 1 -g 8", 1, 1, 8, "-t -g", 8},
		{"-b 1M -e 128M -f2", 8, 0, 0, "", 1},
		{"-b 128 -e 16G -f 2 -g 1 -n 50 -w 100 -p 0 -z 0 -t 1 -c 1", 28, 1, 1, "-g -p -z -t", 1},
		{"-b 1M -e 2048M -f 2 -g 1 -c 0 -d half", 12, 0, 1, "-g", 1},
		{"-b8 -e128M -f2 -g4 -t2 -G 100 -a 3 -R 1 -C 1 --blocking 0 -N 1 -m 4", 25, 2, 4, "-g -t -G -a -R -C -z -N -m", 8},
	} {
		var f Flags
		fs := flag.NewFlagSet("all_reduce_perf", flag.ContinueOnError)
		fs.Int("n", 20, "iterations (the commands' own flag)")
		fs.Int("w", 5, "warm-up iterations (likewise)")
		f.Register(fs, Network{Latency: "5us", Bandwidth: "12.5GB/s"}, true)
		if _, err := cli.ParseArgs(fs, strings.Fields(c.line)); err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		sizes, err := f.Sizes()
		if err != nil || len(sizes) != c.sizes || f.Threads != c.threads || f.GPUs != c.gpus ||
			strings.Join(f.Ignored(), " ") != c.ignored || f.RanksPerProcess() != c.ranksPerProcess {
			t.Errorf("%q: %d sizes (%v), -t %d -g %d, ignored %q, %d a process; want %d, -t %d -g %d, %q, %d", c.line, len(sizes), err,
				f.Threads, f.GPUs, f.Ignored(), f.RanksPerProcess(), c.sizes, c.threads, c.gpus, c.ignored, c.ranksPerProcess)
		}
	}
	var f Flags
	fs := flag.NewFlagSet("all_reduce_perf", flag.ContinueOnError)
	f.Register(fs, Network{}, true)
	if _, err := cli.ParseArgs(fs, []string{"-g", "0"}); err == nil {
		t.Error("-g 0: no error")
	}
}
