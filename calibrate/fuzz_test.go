package calibrate

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/results"
)

// validSamples checks what any successful read must give.
func validSamples(t *testing.T, ss []Sample) {
	t.Helper()
	for _, s := range ss {
		_, err := algos.Lookup(s.Collective)
		if (err != nil && s.Collective != PointToPoint) || s.World < 1 || s.Bytes < 0 || !(s.Time >= 0) || math.IsInf(s.Time, 0) || s.Source == "" {
			t.Fatalf("invalid sample %+v", s)
		}
		if tr := s.Transport; tr != nil && (tr.Bulk < -1 || tr.Eager < 0) {
			t.Fatalf("sample %+v: thresholds %+v", s, *tr)
		}
		if _, err := newSimulator(s, &fitModels[0], nil); err != nil {
			t.Fatalf("sample %+v cannot be simulated: %v", s, err)
		}
	}
}

// corpus adds the testdata files whose names match to f.
func corpus(f *testing.F, pattern string, add func([]byte)) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no testdata/%s: %v", pattern, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
	}
}

// options are reading options drawn from a fuzzer's byte.
func options(flags uint8) LogOptions {
	opt := LogOptions{InPlace: flags&1 != 0}
	if flags&2 != 0 {
		opt.World = int(flags>>4) + 1
	}
	if flags&4 != 0 {
		opt.Collective = "allreduce"
	}
	if flags&8 != 0 {
		opt.Collective = "osu_bw"
	}
	return opt
}

// checkRead checks a read that succeeded: runs with samples, every
// sample valid and counted in its run.
func checkRead(t *testing.T, log *Log, err error) {
	if err != nil {
		return
	}
	if len(log.Runs) == 0 {
		t.Fatal("a log with no runs and no error")
	}
	for _, r := range log.Runs {
		if len(r.Samples) == 0 || r.World < 1 {
			t.Fatalf("run %+v", r)
		}
	}
	validSamples(t, log.Samples())
}

func FuzzReadNCCLTests(f *testing.F) {
	for _, p := range []string{"nccl-*", "*.md", "all_reduce_perf-*"} {
		corpus(f, p, func(b []byte) { f.Add(b, uint8(0)) })
	}
	f.Add([]byte("# Collective test starting: allreduce (algorithm ring(x=1), 3 ranks)\n#  size count type\n 8 2 float\n"), uint8(1))
	f.Add([]byte(" 0: #  Rank 3\n 0: #  size count type time\n 0: 8 2 float 1.5\n 0: 16 4"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		log, err := ReadNCCLTests("fuzz", bytes.NewReader(data), options(flags))
		checkRead(t, log, err)
	})
}

func FuzzReadNCCLTestsJSON(f *testing.F) {
	corpus(f, "*.json", func(b []byte) { f.Add(b, uint8(0)) })
	f.Add([]byte(`{"version":3,"args":["x/all_gather_perf"],"config":{"nthreads":2,"devices":[{"hostname":"a"}]},"results":[{"size":8,"type":"int8","root":"-1","in_place":{"cpu_time":2}}]}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		log, err := ReadNCCLTestsJSON("fuzz", data, options(flags))
		checkRead(t, log, err)
	})
}

func FuzzReadIMB(f *testing.F) {
	corpus(f, "imb*", func(b []byte) { f.Add(b, uint8(0)) })
	f.Add([]byte("# Benchmarking Multi-Bcast\n# #processes = 4\n#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]\n8 10 1 2 3\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		log, err := ReadIMB("fuzz", bytes.NewReader(data), options(flags))
		checkRead(t, log, err)
	})
}

func FuzzReadOSU(f *testing.F) {
	for _, p := range []string{"osu*"} {
		corpus(f, p, func(b []byte) { f.Add(b, uint8(0x42)) })
	}
	f.Add([]byte("mpirun -np 4 osu_allgather\n# OSU MPI Allgather Latency Test\n# Avg Latency(us)\n 3.5\n1 2\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		log, err := ReadOSU("fuzz", bytes.NewReader(data), options(flags))
		checkRead(t, log, err)
	})
}

func FuzzReadResults(f *testing.F) {
	head := strings.Join(append(results.SimColumns, "wrong"), ",") + "\n"
	f.Add([]byte(head + "allreduce,ring,4,1048576,f32,0.002,0,0,,sum,10,0,0,0,24,0\n"))
	f.Add([]byte("collective,algorithm,world,bytes,dtype,time_s,params\nalltoall,bruck,3,9,u8,1e-5,\"a=1,b=2\"\n"))
	f.Add([]byte(strings.TrimSuffix(head, "\n") + ",device,bulk_threshold,eager_threshold\nallreduce,ring,4,8,f32,1e-5,0,0,,sum,10,0,0,0,24,0,cuda,-1,4096\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		log, err := ReadResults("fuzz", bytes.NewReader(data), LogOptions{})
		checkRead(t, log, err)
	})
}

// FuzzLogFormat: the guess never fails, and a file of its guessed format
// reads or fails with an error, never a panic.
func FuzzLogFormat(f *testing.F) {
	corpus(f, "*.*", func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, data []byte) {
		if format := LogFormat(data); format != "" {
			log, err := Read("fuzz", data, format, LogOptions{World: 4})
			checkRead(t, log, err)
		}
	})
}

// FuzzHints: a command line's hints are never negative or absurd.
func FuzzHints(f *testing.F) {
	for _, l := range []string{"mpirun -np 16 -N 8 ./all_reduce_perf", "srun -N2 --ntasks-per-node=4 osu_bw -W 8", "#SBATCH --nodes=2", "flux run -N4 -n 8 x"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var h hints
		h.scan(cleanLine(line), 1)
		if n, _ := h.processes(); n < 0 || n > 1<<48 || h.window < 0 {
			t.Fatalf("%q: %d processes, window %d", line, n, h.window)
		}
	})
}
