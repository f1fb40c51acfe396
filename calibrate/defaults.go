package calibrate

import (
	"cmp"
	"slices"
)

// DefaultModels are the models SelectModel chooses among when none is
// named, simplest first (fewest parameters, then the order of
// ModelNames), so that a tie goes to the simpler: every model for
// samples that nexar-live measured (each records the transport
// thresholds of its run, Sample.Transport), whose ranks may share one
// machine (shared-host) and whose transport is realnet's (realnet); for
// benchmark logs of other libraries, the models that assume neither:
// alpha-beta, alpha-beta-protocol and loggp.
func DefaultModels(samples []Sample) []string {
	live := len(samples) > 0
	for _, s := range samples {
		if s.Transport == nil {
			live = false
			break
		}
	}
	specs := Models()
	slices.SortStableFunc(specs, func(a, b ModelSpec) int { return cmp.Compare(len(a.Params), len(b.Params)) })
	var out []string
	for _, m := range specs {
		if live || (m.Name != "realnet" && m.Name != "shared-host") {
			out = append(out, m.Name)
		}
	}
	return out
}
