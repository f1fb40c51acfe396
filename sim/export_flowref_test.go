package sim

import (
	"fmt"
	"math"
)

// CheckFlowRates makes every flow-model recompute, until the returned
// function is called, check the rates it gave against refRates, the
// progressive filling of the first version of the model (over the whole
// component, every edge in the heap): bit for bit. Failures are counted
// and the first few described by the returned function.
func CheckFlowRates() (done func() (checked int, errs []string)) {
	var checked int
	var errs []string
	recomputeCheck = func(n *flowNet, dirty []int32) {
		checked++
		for f, r := range refRates(n, dirty) {
			if math.Float64bits(f.rate) != math.Float64bits(r) && len(errs) < 10 {
				errs = append(errs, fmt.Sprintf("at %v: flow %d from rank %d to %d: rate %v, reference %v", n.e.Now(), f.seq, f.m.Src, f.m.Dst, f.rate, r))
			}
		}
	}
	return func() (int, []string) {
		recomputeCheck = nil
		return checked, errs
	}
}

// refRates is the rate progressive filling gives each flow of the
// components of the edges dirty, as the model first computed them.
func refRates(n *flowNet, dirty []int32) map[*flowState]float64 {
	emark := map[int32]bool{}
	fmark := map[*flowState]bool{}
	var flows []*flowState
	var edges []int32
	stack := append([]int32(nil), dirty...)
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if emark[e] {
			continue
		}
		emark[e] = true
		edges = append(edges, e)
		for _, f := range n.edge[e].flows {
			if fmark[f] {
				continue
			}
			fmark[f] = true
			flows = append(flows, f)
			for _, e2 := range f.route.cons {
				if !emark[e2] {
					stack = append(stack, e2)
				}
			}
		}
	}
	remCap, wsum := map[int32]float64{}, map[int32]float64{}
	rate := map[*flowState]float64{}
	var h []shareItem
	for _, e := range edges {
		w := 0.0
		for _, f := range n.edge[e].flows {
			w += f.route.weight
		}
		remCap[e], wsum[e] = n.fill[e].capacity, w
		if len(n.edge[e].flows) > 0 {
			h = heapPush(h, shareItem{n.fill[e].capacity / w, e})
		}
	}
	left := len(flows)
	for left > 0 && len(h) > 0 {
		var it shareItem
		it, h = heapPop(h)
		e := it.edge
		if !(wsum[e] > 0) {
			continue
		}
		s := max(remCap[e], 0) / wsum[e]
		if s > it.share {
			h = heapPush(h, shareItem{s, e})
			continue
		}
		for _, f := range n.edge[e].flows {
			if _, ok := rate[f]; ok {
				continue
			}
			r := s * f.route.weight
			rate[f] = r
			left--
			for _, e2 := range f.route.cons {
				remCap[e2] -= r
				wsum[e2] -= f.route.weight
			}
		}
	}
	return rate
}
