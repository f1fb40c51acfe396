package workload_test

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/workload"
)

// FuzzReadCSV: step.csv either fails to read or reads to rows that
// write and read back to the same file; no input panics.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte(`network,point,layout,dp,tp,pp,ep,world,schedule,chunks,micro_batches,zero,bucket_bytes,algorithms,step_s,compute_s,utilisation,bubble_s,bubble_fraction,idle_s,exposed_s,exposed_tp_s,exposed_dp_s,exposed_pp_s,exposed_ep_s,exposed_dp_ep_s,busy_tp_s,busy_dp_s,busy_pp_s,busy_ep_s,busy_dp_ep_s,messages
gpt3-13b-dgx-h100,0,dp8-tp8-pp1,8,8,1,1,64,,1,8,0,1048576,tp=ring;dp=nccl_ring_simple,1.168516506384,0.342470312000,0.293081,0.000000000000,0.000000,0.000000000384,0.826046194000,0.115551349000,0.710494845000,0.000000000000,0.000000000000,0.000000000000,0.115551349000,0.744840428000,0.000000000000,0.000000000000,0.000000000000,89712224
`))
	f.Add([]byte("network,point\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := workload.ReadCSV(bytes.NewReader(b))
		if err != nil {
			return
		}
		var first, second bytes.Buffer
		if err := workload.WriteCSV(&first, rows); err != nil {
			t.Fatalf("rows read do not write: %v", err)
		}
		again, err := workload.ReadCSV(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("what WriteCSV wrote does not read: %v\n%s", err, first.String())
		}
		if err := workload.WriteCSV(&second, again); err != nil || !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("written twice, differs (%v):\n%s\n%s", err, first.String(), second.String())
		}
	})
}
