package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/workload"
)

const workloadFile = `name = "step"
seed = 3

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "50GB/s"
ranks_per_node = 8
flops = "989TFLOP/s"

[workload]
transformer = { layers = 8, hidden = 1024, heads = 16, seq = 2048, vocab = 50257, micro_batch = 2 }
layout = ["dp8-tp8-pp1", "dp4-tp8-pp2"]
global_batch = 64
bucket = ["1MiB", "16MiB"]
mfu = 0.5
skew = 0.02

[workload.algorithms]
dp = ["ring", "halving_doubling"]
tp = "auto"
`

func TestWorkloadParse(t *testing.T) {
	s, err := Parse("step.toml", []byte(workloadFile))
	if err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	if w == nil || len(s.Sweeps) != 0 {
		t.Fatalf("workload %v, %d sweeps", w, len(s.Sweeps))
	}
	if got, want := strings.Join(w.Axes, " "), "layout bucket algorithms.dp"; got != want {
		t.Errorf("axes %q, want %q", got, want)
	}
	if len(w.Points) != 8 || w.FLOPS != 989e12/2 {
		t.Fatalf("%d points at %g FLOP/s, want 8 at half of 989 TFLOP/s", len(w.Points), w.FLOPS)
	}
	last := w.Points[7]
	if got := strings.Join(last.Values, " "); got != "dp4-tp8-pp2 16MiB halving_doubling" {
		t.Errorf("last point %q", got)
	}
	sp := last.Spec
	if sp.DP != 4 || sp.PP != 2 || sp.MicroBatches != 8 || sp.Bucket != 16<<20 || sp.Skew != 0.02 || sp.Seed != 3 ||
		sp.Algorithms[workload.DP]["allreduce"] != "halving_doubling" || sp.Algorithms[workload.TP]["allreduce"] != "auto" {
		t.Errorf("last point's spec %+v", sp)
	}
	if w.Points[0].Spec.MicroBatches != 4 || w.Points[0].Spec.Algorithms[workload.DP]["reduce_scatter"] != "ring" {
		t.Errorf("first point %+v", w.Points[0].Spec)
	}
}

func TestWorkloadAICB(t *testing.T) {
	dir := t.TempDir()
	aicb := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 1 ga: 2 all_gpus: 8 mode: 1\n1\nl\t-1\t1000\tALLREDUCE\t4096\t2000\tNONE\t0\t500\tALLREDUCE\t8192\t100\n"
	if err := os.WriteFile(filepath.Join(dir, "w.txt"), []byte(aicb), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.toml")
	src := "name = \"a\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\naicb = \"w.txt\"\nbucket = \"1MiB\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Workload.Points[0].Spec
	if p.TP != 2 || p.DP != 4 || p.MicroBatches != 2 || len(p.Layers) != 1 || p.Layers[0].Explicit == nil {
		t.Errorf("spec from the AICB file: %+v", p)
	}
	if !strings.Contains(s.Workload.Model, "header keys skipped, as SimAI skips them: mode") {
		t.Errorf("model %q does not name the key skipped", s.Workload.Model)
	}
}

// TestWorkloadAICBWithoutWorld: an AICB file without all_gpus (SimAI's
// micro-benchmarks) leaves the groups' sizes to the scenario: without a
// layout it is an error naming the file, with one its collectives run on
// that layout's groups.
func TestWorkloadAICBWithoutWorld(t *testing.T) {
	dir := t.TempDir()
	micro := "MICRO\n2\nmicro_test\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n" +
		"micro_test\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t8192\t1\n"
	if err := os.WriteFile(filepath.Join(dir, "micro.txt"), []byte(micro), 0o644); err != nil {
		t.Fatal(err)
	}
	head := "name = \"a\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\naicb = \"micro.txt\"\n"
	file := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(file, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "workload.aicb: micro.txt gives no all_gpus") {
		t.Errorf("no layout: %v", err)
	}
	if err := os.WriteFile(file, []byte(head+"layout = \"dp16\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Workload.Points[0].Spec; p.DP != 16 || len(p.Layers) != 2 {
		t.Errorf("spec: %+v", p)
	}
}

func TestWorkloadErrors(t *testing.T) {
	for _, tc := range []struct {
		edit, want, bucket string
	}{
		{`layout = "dp8"`, `:15: workload.bucket: size -1 is negative`, `bucket = -1`},
		{`layout = "dp8"`, `:15: workload.bucket: bucket 1MiB is listed twice`, `bucket = ["1MiB", "1MiB"]`},
		{`layout = "dp8"`, `:15: workload.bucket: element 2: `, `bucket = ["1MiB", "x"]`},
		{`layout = "dp8-tp8-pp1"`, "", `bucket = ["1MiB", "16MiB"]`},
		{`layout = "dp8-xp8"`, `:13: workload.layout: layout "dp8-xp8": unknown dimension "xp"`, `bucket = ["1MiB", "16MiB"]`},
		{`layout = "dp8-tp8-pp16"`, `:13: workload.layout: 8 layers to split (edge layers aside) cannot fill 16 pipeline stages`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp8-tp8\"\nbucket_ = 1", `:14: workload.bucket_: unknown key in [workload]; did you mean "bucket"?`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp8-tp8\"\noverlap = \"yes\"", `:14: workload.overlap: want true or false`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp8-tp8\"\nzero = 4", `:14: workload.zero: want a ZeRO stage 0 to 3`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp8-tp8\"\nschedule = \"zigzag\"", `:14: workload.schedule: unknown schedule "zigzag"`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp8-tp8-pp2\"\nschedule = \"interleaved\"", `:14: workload.schedule: the interleaved schedule needs at least 2 chunks`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp6-tp8\"", `:14: workload.global_batch: 64 sequences do not divide among dp 6`, `bucket = ["1MiB", "16MiB"]`},
		{"layout = \"dp8-tp8\"\nbuckte = \"1MiB\"", `:14: workload.buckte: unknown key in [workload]; did you mean "bucket"?`, `bucket = ["1MiB", "16MiB"]`},
	} {
		src := strings.Replace(workloadFile, `layout = ["dp8-tp8-pp1", "dp4-tp8-pp2"]`, tc.edit, 1)
		src = strings.Replace(src, `bucket = ["1MiB", "16MiB"]`, tc.bucket, 1)
		_, err := Parse("step.toml", []byte(src))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.edit, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: got %v, want %q", tc.edit, err, tc.want)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\ntransformer = { layers = 2, hidden = 64, heads = 2, seq = 16, vocab = 100 }\nlayout = \"dp2\"\n",
			`:6: workload: layer "block 0" gives its compute in FLOPs, but no rate is known`},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp2\"\n",
			`:6: workload.transformer: missing required key in [workload]`},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp3\"\n[[workload.layer]]\nforward = \"1ms\"\n[workload.algorithms]\ndp = \"halving_doubling_nearest\"\n",
			``},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp3\"\n[[workload.layer]]\nforward = \"1ms\"\nforward_flops = 5\n",
			`:10: workload.layer[0].forward_flops: give forward as a time or as FLOPs`},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp3\"\n[[workload.layer]]\nforward = \"1ms\"\n[workload.algorithms]\npp = \"ring\"\ndp = \"pairwise\"\n",
			`:11: workload.algorithms.pp: unknown process group "pp"`},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp3\"\n[[workload.layer]]\nforward = \"1ms\"\n[workload.algorithms]\ndp = \"binary_tree\"\n",
			`:11: workload.algorithms.dp: no collective of the dp group (allreduce, reduce_scatter, allgather) has an algorithm "binary_tree"`},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp3\"\n[[workload.layer]]\nforward = \"1ms\"\n[workload.algorithms]\ndp = \"recursive_doubling\"\n",
			``},
		{"name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"dp3\"\n[[workload.layer]]\nforward = \"1ms\"\n[workload.algorithms]\ndp = \"nccl_nvls\"\n",
			``},
	} {
		_, err := Parse("w.toml", []byte(tc.src))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.src, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

// A training step runs on any world a collective sweep runs on: the two
// limits are one, and a layout above the old 2^20 cap parses while one
// above 2^24 is refused with the layout named.
func TestWorkloadWorldLimit(t *testing.T) {
	if workload.MaxWorld != MaxWorld {
		t.Fatalf("workload.MaxWorld %d, scenario.MaxWorld %d: want one limit", workload.MaxWorld, MaxWorld)
	}
	for _, tc := range []struct{ layout, want string }{
		{"dp262144-tp8", ""},
		{"dp4194304-tp8", "more than 16777216 ranks"},
	} {
		src := "name = \"x\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n[workload]\nlayout = \"" + tc.layout + "\"\nglobal_batch = 4194304\n[[workload.layer]]\nforward = \"1ms\"\n"
		_, err := Parse("step.toml", []byte(src))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.layout, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.layout, err, tc.want)
		}
	}
}
