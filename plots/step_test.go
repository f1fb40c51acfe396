package plots_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/plots"
)

func stepPoints() []plots.StepPoint {
	var pts []plots.StepPoint
	for _, layout := range []string{"dp8-tp8-pp1", "dp4-tp8-pp2"} {
		for _, alg := range []string{"dp=ring", "dp=tree"} {
			for b := 1 << 20; b <= 256<<20; b *= 4 {
				exp := 0.02 + 0.01*math.Abs(math.Log2(float64(b)/(16<<20)))
				pts = append(pts, plots.StepPoint{Network: "dgx", Panel: layout, Series: alg, Bucket: float64(b),
					Step: 1 + exp, Exposed: exp, Compute: 0.9, ExposedTP: 0.1, ExposedDP: exp, Bubble: 0.01})
			}
		}
	}
	return pts
}

// The step figures draw, encode deterministically, and refuse what they
// cannot draw.
func TestStepFigures(t *testing.T) {
	for name, make := range map[string]func([]plots.StepPoint, string) (*plots.Figure, error){
		"buckets": plots.StepBucketPanels, "breakdown": plots.StepBreakdown,
	} {
		f, err := make(stepPoints(), "dgx")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var a, b bytes.Buffer
		if err := f.Encode(&a, "svg"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g, _ := make(stepPoints(), "dgx")
		if err := g.Encode(&b, "svg"); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two encodings differ (%v)", name, err)
		}
		if _, err := make(stepPoints(), "other"); !errors.Is(err, plots.ErrNoData) {
			t.Errorf("%s of a network with no points: %v", name, err)
		}
		bad := stepPoints()
		bad[3].Step = math.NaN()
		if _, err := make(bad, "dgx"); err == nil {
			t.Errorf("%s of a NaN step: no error", name)
		}
	}
}
