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
//
// Such a component holds a node the first device sends into, so each of
// those is tried as its root: a GPU's first edge may go to its NVSwitch,
// which only its own node's GPUs reach, while the component that joins
// every GPU is its NIC's (the fabric's).
func (t *Topology) devicesConnectedWithout(failed []int) bool {
	if len(t.devices) <= 1 {
		return true
	}
	dead := make([]bool, len(t.edges))
	for _, e := range failed {
		dead[e] = true
	}
	var tried []bool // per node: in the component of a root that failed
	for _, e := range t.out[t.devices[0]] {
		root := t.edges[e].To
		if dead[e] || !t.transit(root) || (tried != nil && tried[root]) {
			continue
		}
		comp := t.transitComponent(root, dead)
		if t.allDevicesOnComponent(comp, dead) {
			return true
		}
		if tried == nil {
			tried = make([]bool, len(t.nodes))
		}
		for n, in := range comp {
			tried[n] = tried[n] || in
		}
	}
	return false
}

// transitComponent returns, per node, whether it lies in the strongly
// connected component of switches and NICs that holds root, over edges
// not dead.
func (t *Topology) transitComponent(root int, dead []bool) []bool {
	reach := func(adj [][]int32, next func(*Edge) int) []bool {
		seen := make([]bool, len(t.nodes))
		seen[root] = true
		stack := []int{root}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range adj[u] {
				if v := next(&t.edges[e]); !dead[e] && t.transit(v) && !seen[v] {
					seen[v] = true
					stack = append(stack, v)
				}
			}
		}
		return seen
	}
	from := reach(t.out, func(e *Edge) int { return e.To })
	to := reach(t.in, func(e *Edge) int { return e.From })
	for n := range from {
		from[n] = from[n] && to[n]
	}
	return from
}

// allDevicesOnComponent reports whether every device keeps a live edge
// into the component comp and one out of it.
func (t *Topology) allDevicesOnComponent(comp, dead []bool) bool {
	for _, d := range t.devices {
		in, out := false, false
		for _, e := range t.out[d] {
			out = out || !dead[e] && comp[t.edges[e].To]
		}
		for _, e := range t.in[d] {
			in = in || !dead[e] && comp[t.edges[e].From]
		}
		if !in || !out {
			return false
		}
	}
	return true
}
