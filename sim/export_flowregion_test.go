package sim

// CountFlowRegions counts, until the returned function is called, the
// flow model's recomputes that kept a region's refill and those that
// refilled the whole component after a boundary edge failed its check
// (see recompute). Call it after CheckFlowRates, and its done before
// that one's.
func CountFlowRegions() (done func() (regions, wholes int)) {
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
	return func() (regions, wholes int) {
		recomputeCheck = prev
		for _, n := range nets {
			regions += n.regions
			wholes += n.wholes
		}
		return regions, wholes
	}
}
