package workload_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/workload"
)

func TestReadAICB(t *testing.T) {
	data, err := os.ReadFile("testdata/gpt-small.aicb")
	if err != nil {
		t.Fatal(err)
	}
	a, err := workload.ReadAICB("gpt-small.aicb", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if a.Policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD" || a.TP != 2 || a.PP != 2 || a.GA != 4 || a.World != 8 || a.PPComm != 1<<20 || len(a.Layers) != 6 {
		t.Fatalf("header read as %+v", a)
	}
	attn := a.Layers[2]
	e := attn.Explicit
	if attn.Edge || e.Forward.Time != 200*time.Microsecond || e.InputGrad.Time != 400*time.Microsecond ||
		len(e.FwdComms) != 1 || e.FwdComms[0] != (workload.Comm{Group: workload.TP, Collective: "allreduce", Bytes: 1 << 20}) {
		t.Errorf("attention layer read as %+v %+v", attn, e)
	}
	if g := a.Layers[0]; !g.Edge || len(g.Explicit.WeightComms) != 1 || g.Explicit.WeightComms[0].Group != workload.DP {
		t.Errorf("grad_norm read as %+v", g.Explicit)
	}
	s := a.Spec()
	if s.DP != 2 || s.TP != 2 || s.PP != 2 || s.MicroBatches != 4 || s.Schedule != workload.OneFOneB {
		t.Errorf("spec layout %+v, %d micro-batches, %v", s.Layout, s.MicroBatches, s.Schedule)
	}
	p, err := workload.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := workload.Simulate(p, workload.SimConfig{Model: abModel})
	if err != nil {
		t.Fatal(err)
	}
	// Each stage computes 4 micro-batches of (0.5 ms forward + 1 ms
	// backward); the step is at least that plus the pipeline's fill.
	if res.Step < 4*1.5e-3+1.5e-3 || res.ExposedOf(workload.TP, "allreduce") <= 0 {
		t.Errorf("step %g s, TP exposed %g: too little", res.Step, res.ExposedOf(workload.TP, "allreduce"))
	}
}

func TestReadAICBErrors(t *testing.T) {
	head := "HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n"
	layer := "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t100\n"
	for _, tc := range []struct{ text, want string }{
		{"", ":1: empty file"},
		{"FOO model_parallel_NPU_group: 2\n1\n" + layer, ":1: unknown policy"},
		{"HYBRID_TRANSFORMER model_parallel_NPU_group: x\n", ":1: header model_parallel_NPU_group"},
		{"HYBRID_TRANSFORMER pp:\n", ":1: header key \"pp\" has no value"},
		{"HYBRID_TRANSFORMER all_gpu: 32\n1\n" + layer, `:1: unknown header key "all_gpu:"; did you mean "all_gpus:"?`},
		{"HYBRID_TRANSFORMER model_parallel_npu_group: 8\n1\n" + layer, `did you mean "model_parallel_NPU_group:"?`},
		{head + "two\n", ":2: layer count"},
		{head + "2\n" + layer, ":3: the file ends after 1 of its 2 layers"},
		{head + "1\n" + layer + layer, ":4: more lines"},
		{head + "1\nl\t-1\t1\tNONE\t0\n", ":3: a layer has 12 fields"},
		{head + "1\nl\t-1\t-5\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t100\n", ":3: field 3 (forward compute)"},
		{head + "1\nl\t-1\t1\tALLREDUCEALLTOALL\t8\t1\tNONE\t0\t1\tNONE\t0\t100\n", ":3: field 4 (forward collective): ALLREDUCEALLTOALL is not supported"},
		{head + "1\nl\t-1\t1\tSCATTER\t8\t1\tNONE\t0\t1\tNONE\t0\t100\n", ":3: field 4 (forward collective): unknown collective"},
	} {
		_, err := workload.ReadAICB("w.txt", strings.NewReader(tc.text))
		var ae *workload.AICBError
		if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error with %q", tc.text, err, tc.want)
		}
	}
}

// TestReadAICBUnknownKeys: header keys the reader does not know (AICB's
// inference files write mode:) are skipped with their value, as SimAI
// skips them, and named.
func TestReadAICBUnknownKeys(t *testing.T) {
	text := "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8 mode: 1 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n" +
		"1\nl\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t100\n"
	a, err := workload.ReadAICB("w.txt", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if a.TP != 2 || a.World != 8 || len(a.Layers) != 1 || !slices.Equal(a.Ignored, []string{"mode"}) {
		t.Errorf("read as %+v", a)
	}
}

// FuzzReadAICB: the reader never panics, and what it reads makes a Spec
// that validates or says why not.
func FuzzReadAICB(f *testing.F) {
	data, err := os.ReadFile("testdata/gpt-small.aicb")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("MICRO\n1\nmicro_test\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n"))
	f.Add([]byte("DATA all_gpus: 4 checkpoints: 2 1 2 checkpoint_initiates: 1 1\n0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := workload.ReadAICB("f", bytes.NewReader(data))
		if err != nil {
			var ae *workload.AICBError
			if !errors.As(err, &ae) || ae.Line < 0 {
				t.Fatalf("error %v is no AICBError with a line", err)
			}
			return
		}
		if _, err := workload.NewPlan(a.Spec()); err != nil && err.Error() == "" {
			t.Fatal("an error that says nothing")
		}
	})
}
