package sim

// devicesConnectedWithout reports whether every device of t still reaches
// every other with the edges failed removed, along paths that pass only
// through switches and NICs, as routes do. It answers yes only when it is
// sure, and may say no for a topology that is still connected: the
// switches and NICs that devices send into and receive from must all lie
// in one strongly connected component of the switch-and-NIC graph, and
// every device must keep a live edge into that component and one out of
// it. (Devices joined only by direct links, with no switch between them,
// get a no.) A topology of one device is connected.
func (t *Topology) devicesConnectedWithout(failed []int) bool {
	if len(t.devices) <= 1 {
		return true
	}
	dead := make([]bool, len(t.edges))
	for _, e := range failed {
		dead[e] = true
	}
	// The component of the first switch a device sends into.
	root := -1
	for _, e := range t.out[t.devices[0]] {
		if to := t.edges[e].To; !dead[e] && t.transit(to) {
			root = to
			break
		}
	}
	if root < 0 {
		return false
	}
	reach := func(adj [][]int32, next func(Edge) int) []bool {
		seen := make([]bool, len(t.nodes))
		seen[root] = true
		stack := []int{root}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range adj[u] {
				if v := next(t.edges[e]); !dead[e] && t.transit(v) && !seen[v] {
					seen[v] = true
					stack = append(stack, v)
				}
			}
		}
		return seen
	}
	from := reach(t.out, func(e Edge) int { return e.To })
	to := reach(t.in, func(e Edge) int { return e.From })
	inComponent := func(n int) bool { return from[n] && to[n] }
	for _, d := range t.devices {
		in, out := false, false
		for _, e := range t.out[d] {
			out = out || !dead[e] && inComponent(t.edges[e].To)
		}
		for _, e := range t.in[d] {
			in = in || !dead[e] && inComponent(t.edges[e].From)
		}
		if !in || !out {
			return false
		}
	}
	return true
}
