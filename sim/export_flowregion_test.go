package sim

// CountFlowRegions counts, until the returned function is called, the
// flow model's recomputes that kept their first region's refill, a later
// region's, and those that refilled the whole component (see recompute).
// Call it after CheckFlowRates, and its done before that one's.
func CountFlowRegions() (done func() (regions, retries, wholes int)) {
	prev := recomputeCheck
	var nets []*flowNet
	seen := map[*flowNet]bool{}
	recomputeCheck = func(n *flowNet, dirty []int32) {
		if !seen[n] {
			seen[n] = true
			nets = append(nets, n)
		}
		if prev != nil {
			prev(n, dirty)
		}
	}
	return func() (regions, retries, wholes int) {
		recomputeCheck = prev
		for _, n := range nets {
			regions += n.regions
			retries += n.retries
			wholes += n.wholes
		}
		return regions, retries, wholes
	}
}

// SetFlowRegionTries sets how many regions a recompute fills before the
// whole component, until restore is called.
func SetFlowRegionTries(k int) (restore func()) { return setForTest(&regionTries, k) }

// SetFlowUnshared makes the flow model start and end every flow as if it
// were alone on its edges (see unsharedForTest), until restore is called.
func SetFlowUnshared(on bool) (restore func()) { return setForTest(&unsharedForTest, on) }
