package calibrate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// recordedBy gives samples the thresholds a run recorded, as read from
// file.
func recordedBy(samples []Sample, file string, t algos.Thresholds) []Sample {
	out := make([]Sample, len(samples))
	for i, s := range samples {
		s.Transport = &t
		s.Source = fmt.Sprintf("%s:%d", file, i+2)
		out[i] = s
	}
	return out
}

// TestRecordedSettings: each model's settings as the thresholds a run
// recorded give them: realnet's directly, the protocol models' eager
// limit where realnet's protocol changes (the eager threshold in eager
// mode, else the bulk threshold; never: a limit no message reaches).
func TestRecordedSettings(t *testing.T) {
	samples := synthetic(t, loopbackPaths, []int{2}, 0, 12)[:2]
	for _, c := range []struct {
		recorded algos.Thresholds
		model    string
		want     []int
		size     string // the first setting for people
	}{
		{algos.Thresholds{Bulk: 16 << 10}, "realnet", []int{16 << 10, 0}, "16 KiB"},
		{algos.Thresholds{Bulk: -1}, "realnet", []int{-1, 0}, "never"},
		{algos.Thresholds{Bulk: 16 << 10, Eager: 4 << 10}, "realnet", []int{16 << 10, 4 << 10}, "16 KiB"},
		{algos.Thresholds{Bulk: 16 << 10}, "alpha-beta-protocol", []int{16 << 10}, "16 KiB"},
		{algos.Thresholds{Bulk: 16 << 10, Eager: 4 << 10}, "alpha-beta-protocol", []int{4 << 10}, "4 KiB"},
		{algos.Thresholds{Bulk: -1}, "alpha-beta-protocol", []int{1 << 50}, "never"},
		{algos.Thresholds{Bulk: 0}, "shared-host", []int{1}, "1 B"},
		{algos.Thresholds{Bulk: -1, Eager: 64 << 10}, "shared-host", []int{64 << 10}, "64 KiB"},
		{algos.Thresholds{Bulk: 16 << 10}, "alpha-beta", []int{}, ""},
	} {
		t.Run(fmt.Sprintf("%s/%v", c.model, c.recorded), func(t *testing.T) {
			spec, err := LookupModel(c.model)
			if err != nil {
				t.Fatal(err)
			}
			got, notes, err := settingsOf(spec, nil, recordedBy(samples, "run.csv", c.recorded))
			if err != nil || len(notes) != 0 {
				t.Fatalf("%v, notes %q", err, notes)
			}
			if len(got) != len(c.want) {
				t.Fatalf("settings %+v, want values %v", got, c.want)
			}
			for i, v := range got {
				if v.Value != c.want[i] || v.Given || v.How() != "given: recorded by the run (run.csv)" {
					t.Errorf("%s = %d (%s), want %d given: recorded by the run (run.csv)", v.Name, v.Value, v.How(), c.want[i])
				}
			}
			if len(got) > 0 && got[0].Size() != c.size {
				t.Errorf("%s for people: %q, want %q", got[0].Name, got[0].Size(), c.size)
			}
		})
	}
}

// TestCalibrateRecordedThreshold: samples of realnet's two paths with a
// bulk threshold of 16 KiB, which their run recorded, are fitted with it
// (and say so), where the same samples without the record are fitted at
// nexar-live's default of 64 KiB and followed less well; samples of a
// file that does not record it are fitted as if measured alike, and a
// note says so.
func TestCalibrateRecordedThreshold(t *testing.T) {
	truth := loopbackPaths
	truth.Thresholds.Bulk = 16 << 10
	plain := synthetic(t, truth, []int{2, 4}, 0.01, 13)
	samples := recordedBy(plain, "bulk16.csv", algos.Thresholds{Bulk: 16 << 10})
	for _, model := range []string{"realnet", "alpha-beta-protocol"} {
		t.Run(model, func(t *testing.T) {
			f, err := Calibrate(samples, model, Options{MaxIter: 10})
			if err != nil {
				t.Fatal(err)
			}
			st := f.Settings[0]
			if st.Value != 16<<10 || st.Given || st.How() != "given: recorded by the run (bulk16.csv)" ||
				!hasNote(f.Notes, st.Name+" is 16 KiB, recorded by the run (bulk16.csv)") {
				t.Errorf("setting %+v, notes %q", st, f.Notes)
			}
			var b strings.Builder
			if err := f.WriteScenario(&b, "recorded"); err != nil {
				t.Fatal(err)
			}
			if want := st.Name + " = 16384 # given: recorded by the run (bulk16.csv)"; !strings.Contains(b.String(), want) {
				t.Errorf("scenario lacks %q:\n%s", want, b.String())
			}
			if model == "realnet" {
				if m := f.SimModel().(sim.TwoPaths); m.Thresholds.Bulk != 16<<10 {
					t.Errorf("model %+v", m)
				}
				d, err := Calibrate(plain, model, Options{MaxIter: 10})
				if err != nil {
					t.Fatal(err)
				}
				if a, b := f.Summary().Median, d.Summary().Median; a > 0.02 || b < 2*a {
					t.Errorf("median error at the recorded 16 KiB %.3f, at the default 64 KiB %.3f", a, b)
				}
			}
			// Half the samples from a file without the columns.
			mixed := append(samples[:len(samples)/2:len(samples)/2], plain[len(plain)/2:]...)
			g, err := Calibrate(mixed, model, Options{MaxIter: 3})
			if err != nil {
				t.Fatal(err)
			}
			if g.Settings[0].Value != 16<<10 || !hasNote(g.Notes, fmt.Sprintf("%d sample(s) (synthetic:%d) come from a file that does not record", len(plain)-len(plain)/2, len(plain)/2+1)) {
				t.Errorf("mixed: setting %+v, notes %q", g.Settings[0], g.Notes)
			}
		})
	}
}

// TestRecordedDisagree: samples of runs that recorded thresholds giving a
// setting different values are refused, naming a sample of each, unless
// the setting is held; a held value wins over a recorded one, and says
// so. A model without settings fits them.
func TestRecordedDisagree(t *testing.T) {
	plain := synthetic(t, loopbackPaths, []int{2}, 0.01, 14)
	half := len(plain) / 2
	mixed := append(recordedBy(plain[:half], "a.csv", algos.Thresholds{Bulk: 64 << 10}), recordedBy(plain[half:], "b.csv", algos.Thresholds{Bulk: 16 << 10})...)
	agreed := recordedBy(plain, "a.csv", algos.Thresholds{Bulk: 64 << 10})
	eagerOn := recordedBy(plain[half:], "c.csv", algos.Thresholds{Bulk: 64 << 10, Eager: 4096})
	for _, c := range []struct {
		name    string
		samples []Sample
		model   string
		hold    map[string]float64
		err     string // the error, or
		note    string // a note of the fit
		value   int    // and the first setting's value
	}{
		{"bulk", mixed, "realnet", nil,
			"calibrate: the samples come from runs with different transport thresholds, which give bulk_threshold 64 KiB (a.csv:2: bulk_threshold 64 KiB, eager_threshold 0 (off)) " +
				"and 16 KiB (b.csv:2: bulk_threshold 16 KiB, eager_threshold 0 (off)): fit each run's samples apart, or hold one value (--hold bulk_threshold=SIZE)", "", 0},
		{"eager limit", mixed, "alpha-beta-protocol", nil, "give eager_limit 64 KiB (a.csv:2: ", "", 0},
		{"eager mode", append(agreed[:half:half], eagerOn...), "shared-host", nil, "give eager_limit 64 KiB (a.csv:2: bulk_threshold 64 KiB, eager_threshold 0 (off)) and 4 KiB (c.csv:2: bulk_threshold 64 KiB, eager_threshold 4 KiB)", "", 0},
		{"realnet, eager mode", append(agreed[:half:half], eagerOn...), "realnet", nil, "give eager_threshold 0 (off) (a.csv:2: ", "", 0},
		{"held", mixed, "realnet", map[string]float64{"bulk_threshold": 32 << 10}, "",
			"bulk_threshold=32 KiB given overrides the values the runs recorded, which disagree (64 KiB at a.csv:2, 16 KiB at b.csv:2)", 32 << 10},
		{"held over one", agreed, "realnet", map[string]float64{"bulk_threshold": 32 << 10}, "",
			"bulk_threshold=32 KiB given overrides 64 KiB, the value recorded by the run (a.csv)", 32 << 10},
		{"held limit", mixed, "alpha-beta-protocol", map[string]float64{"eager_limit": 16 << 10}, "",
			"eager_limit=16 KiB given overrides the values the runs recorded, which disagree", 16 << 10},
		{"no settings", mixed, "alpha-beta", nil, "", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Calibrate(c.samples, c.model, Options{MaxIter: 3, Hold: c.hold})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v\nwant %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.note != "" && !hasNote(f.Notes, c.note) {
				t.Errorf("notes %q\nwant %q", f.Notes, c.note)
			}
			if len(f.Settings) > 0 && (f.Settings[0].Value != c.value || !f.Settings[0].Given || f.Settings[0].How() != "given") {
				t.Errorf("setting %+v, want %d given", f.Settings[0], c.value)
			}
		})
	}
}

// TestMergeRepeatsThresholds: a point measured with other transport
// thresholds is another point.
func TestMergeRepeatsThresholds(t *testing.T) {
	a := Sample{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, Time: 3, Source: "a:2", Transport: &algos.Thresholds{Bulk: 64 << 10}}
	b, c := a, a
	b.Transport, b.Source = &algos.Thresholds{Bulk: 16 << 10}, "b:2"
	c.Transport, c.Source = &algos.Thresholds{Bulk: 64 << 10}, "c:2"
	merged, _ := MergeRepeats([]Sample{a, b, c})
	if len(merged) != 2 || merged[0].Source != "a:2 and 1 more" || merged[1].Source != "b:2" {
		t.Errorf("merged %+v", merged)
	}
}

// TestWriteRecordedNever: a run that never took the bulk path gives the
// protocol models an eager limit no message reaches, which their
// calibrated scenario writes so that it parses back to the fitted model.
func TestWriteRecordedNever(t *testing.T) {
	quic := loopbackPaths
	quic.Thresholds.Bulk = -1
	samples := recordedBy(synthetic(t, quic, []int{2}, 0, 15), "quic.csv", algos.Thresholds{Bulk: -1})
	for _, model := range []string{"realnet", "alpha-beta-protocol", "shared-host"} {
		hold := map[string]float64{}
		if model == "realnet" { // no sample says anything of the bulk path
			hold["bulk_bandwidth"] = 1e-9
		}
		f, err := Calibrate(samples, model, Options{MaxIter: 5, Hold: hold})
		if err != nil {
			t.Fatal(err)
		}
		if f.Settings[0].Size() != "never" {
			t.Errorf("%s: %s %s", model, f.Settings[0].Name, f.Settings[0].Size())
		}
		s, b := writeAndParse(t, f)
		for i, x := range samples {
			if got := simulated(t, x, s.Network.Sim); math.Abs(got/f.Predicted[i]-1) > 1e-4 {
				t.Errorf("%s: %s: scenario's model gives %g s, the fit's %g s\n%s", model, x, got, f.Predicted[i], b.String())
				break
			}
		}
	}
}
