package algos

// blocks splits count elements into p blocks as evenly as possible: the first
// count%p blocks get one element more. It is how ring-style algorithms divide
// a buffer among ranks; sizes differ by at most one element.
type blocks struct {
	count, p int
}

// off returns the first element of block i.
func (b blocks) off(i int) int {
	q, r := b.count/b.p, b.count%b.p
	return i*q + min(i, r)
}

// len returns the number of elements in block i.
func (b blocks) len(i int) int {
	q, r := b.count/b.p, b.count%b.p
	if i < r {
		return q + 1
	}
	return q
}

// mod returns i mod p in [0, p).
func mod(i, p int) int {
	i %= p
	if i < 0 {
		i += p
	}
	return i
}
