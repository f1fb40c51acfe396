package sweep_test

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestChangeRoundTrip: a row's world changes read back from their
// encoding encode the same, with every time the reports read.
func TestChangeRoundTrip(t *testing.T) {
	row := sweep.Row{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 3},
		Recovery: &sim.Shrunk{Failed: 2, Hit: true, World: 4, FailedAt: 20 * sim.Microsecond, Detected: 5 * sim.Second,
			Agreed: 5*sim.Second + 90, Rebuilt: 5*sim.Second + 150, End: 6 * sim.Second, Result: &sim.Result{End: sim.Second, Finish: make([]sim.Time, 3)}},
		Join: &sim.Grown{World: 3, Joined: 1, Agreed: 90, Rebuilt: 2150, End: 4000, Result: &sim.Result{End: 1850}}, Symmetry: "cyclic"}
	enc, err := row.EncodeChange()
	if err != nil || enc == nil {
		t.Fatalf("%s, %v", enc, err)
	}
	var back sweep.Row
	if err := back.DecodeChange(enc); err != nil {
		t.Fatal(err)
	}
	again, err := back.EncodeChange()
	if err != nil || !bytes.Equal(again, enc) {
		t.Errorf("%s, %v; want %s", again, err, enc)
	}
	if back.Recovery.String() != row.Recovery.String() || back.Join.String() != row.Join.String() || back.Symmetry != "cyclic" {
		t.Errorf("read back: %v; %v; %q", back.Recovery, back.Join, back.Symmetry)
	}
	// A symmetry alone is worth a line: results.csv cannot say it either.
	if enc, err := (sweep.Row{Symmetry: "xor"}).EncodeChange(); string(enc) != `{"symmetry":"xor"}` || err != nil {
		t.Errorf("a row with a symmetry alone: %s, %v", enc, err)
	}
	if enc, err := (sweep.Row{}).EncodeChange(); enc != nil || err != nil {
		t.Errorf("a row without a change: %s, %v", enc, err)
	}
	for _, bad := range []string{"", "{", `{"shrunk":{"failed":"x"}}`, `{"other":1}`, `{"symmetry":"ring"}`} {
		if err := back.DecodeChange([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzDecodeChange: the decoder of checkpoints' and manifests' world
// changes never panics, and what it accepts encodes back to what it reads.
func FuzzDecodeChange(f *testing.F) {
	f.Add([]byte(`{"grown":{"world":3,"joined":1,"agreed_ps":90,"rebuilt_ps":2150,"end_ps":4000,"run_ps":1850}}`))
	f.Add([]byte(`{"symmetry":"xor"}`))
	f.Add([]byte(`{"shrunk":{"failed":2,"hit":true,"world":4,"failed_at_ps":1,"detected_ps":2,"agreed_ps":3,"rebuilt_ps":4,"end_ps":5,"run_ps":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r sweep.Row
		if err := r.DecodeChange(data); err != nil {
			return
		}
		enc, err := r.EncodeChange()
		if err != nil {
			t.Fatal(err)
		}
		if enc == nil { // {} or null: no change
			return
		}
		var again sweep.Row
		if err := again.DecodeChange(enc); err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
	})
}
