package sim

// ordered is an item of a small typed min-heap: the route search's
// frontier, the symmetry shortcut's events. (The event queue and the flow
// model's shares keep heaps of their own: they are the hottest loops of
// the simulator.)
type ordered[T any] interface {
	less(T) bool
}

// heapPush adds it to the min-heap h.
func heapPush[T ordered[T]](h []T, it T) []T {
	h = append(h, it)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// heapPop removes and returns the least item of the non-empty min-heap h.
func heapPop[T ordered[T]](h []T) (T, []T) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if l+1 < n && h[l+1].less(h[l]) {
			c = l + 1
		}
		if !h[c].less(h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return top, h
}
