package calibrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/sweep"
)

// MergeRepeats makes the samples of one point measured several times (by
// several runs of one sweep, or one log holding several runs) one sample
// at their median time, in the place of the first, its Source naming
// the first measurement and how many more. On a shared machine a point's time moves with the
// load of the moment, and one run's points are measured at different
// moments; the median of runs made at different times leaves out most of
// that, which no model can follow. A point is its collective, algorithm
// (with its parameters), world size, size, element type, operation and
// root, and the transport thresholds its run recorded (Sample.Transport:
// points measured with other thresholds are other points). The note says
// how many points were merged, or is empty.
func MergeRepeats(samples []Sample) (merged []Sample, note string) {
	groups := map[string][]int{}
	var order []string
	for i, s := range samples {
		k := pointKey(s)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	most, repeated := 0, 0
	for _, k := range order {
		g := groups[k]
		s := samples[g[0]]
		if len(g) > 1 {
			repeated++
			most = max(most, len(g))
			times := make([]float64, len(g))
			for j, i := range g {
				times[j] = samples[i].Time
			}
			slices.Sort(times)
			s.Time = (times[(len(times)-1)/2] + times[len(times)/2]) / 2
			s.Source += fmt.Sprintf(" and %d more", len(g)-1)
		}
		merged = append(merged, s)
	}
	if repeated == 0 {
		return merged, ""
	}
	return merged, fmt.Sprintf("%d of %d points were measured several times (up to %d): each is fitted at its median time", repeated, len(merged), most)
}

// pointKey is what makes two samples measurements of one point.
func pointKey(s Sample) string {
	transport := ""
	if s.Transport != nil {
		transport = s.Transport.String()
	}
	return strings.Join([]string{s.Collective, s.Algorithm, sweep.FormatParams(s.Params), strconv.Itoa(s.World), strconv.Itoa(s.Bytes),
		s.DType.String(), s.Op.String(), strconv.Itoa(s.Root), transport}, "\x00")
}
