// Package mesh says which ranks of a world hold a direct connection to which
// (the full mesh, a hypercube, a k-regular graph) and, for every pair, the
// next hop of a shortest route between them. realnet relays messages along
// these routes and the simulator charges relays along the same ones, so that
// a sparse mesh's cost is studied on the routes it will really take.
//
// Every mesh here is connected and its routes are shortest paths, chosen
// deterministically: the same world and spec give the same routes on every
// rank and in every run, which relaying needs (a relay does not ask the
// sender which way it meant).
package mesh

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Kind is the shape of a mesh.
type Kind uint8

const (
	// Full connects every pair of ranks: no message is relayed.
	Full Kind = iota
	// Hypercube connects ranks whose numbers differ in one bit. A world
	// that is not a power of two keeps the edges between ranks it has; it
	// stays connected, and its routes are as short as the full cube's.
	Hypercube
	// KRegular connects each rank to K others: the circulant graph where
	// rank r is joined to r±1, ..., r±K/2 (mod the world) and, when K is
	// odd, to the rank opposite, r+p/2. A world of p ≤ K+1 is the full mesh.
	KRegular
)

// Spec names a mesh independently of the world it is built for.
type Spec struct {
	Kind Kind
	K    int // degree of a KRegular mesh
}

// String gives the spec as Parse reads it: "full", "hypercube" or
// "kregular:K".
func (s Spec) String() string {
	switch s.Kind {
	case Full:
		return "full"
	case Hypercube:
		return "hypercube"
	case KRegular:
		return "kregular:" + strconv.Itoa(s.K)
	}
	return fmt.Sprintf("mesh.Kind(%d)", s.Kind)
}

// Parse reads a mesh spec: "full", "hypercube" or "kregular:K" with K ≥ 2.
func Parse(s string) (Spec, error) {
	switch {
	case s == "full":
		return Spec{Kind: Full}, nil
	case s == "hypercube":
		return Spec{Kind: Hypercube}, nil
	case strings.HasPrefix(s, "kregular:"):
		k, err := strconv.Atoi(strings.TrimPrefix(s, "kregular:"))
		if err != nil || k < 2 {
			return Spec{}, fmt.Errorf("mesh %q: the degree after kregular: must be a whole number of at least 2 (a degree of 1 would leave the world in pieces)", s)
		}
		return Spec{Kind: KRegular, K: k}, nil
	}
	return Spec{}, fmt.Errorf("mesh %q: want full, hypercube or kregular:K (K ≥ 2)", s)
}

// Mesh is a spec built for a world of a given size. Its methods are safe
// for concurrent use.
type Mesh struct {
	spec  Spec
	world int
	// A k-regular mesh is invariant under rotation, so one breadth-first
	// search from rank 0 gives every route: first[d] is the first step
	// (an offset) from r towards r+d, hops[d] the route's length.
	first []int32
	hops  []int32
}

// New builds spec for a world of the given size. It refuses a k-regular
// mesh of odd degree on an odd world, which no graph can be.
func New(spec Spec, world int) (*Mesh, error) {
	if world < 1 {
		return nil, fmt.Errorf("mesh %s: world %d, want at least 1 rank", spec, world)
	}
	m := &Mesh{spec: spec, world: world}
	switch spec.Kind {
	case Full, Hypercube:
	case KRegular:
		if spec.K < 2 {
			return nil, fmt.Errorf("mesh %s: degree %d, want at least 2", spec, spec.K)
		}
		if world > spec.K+1 {
			if spec.K%2 == 1 && world%2 == 1 {
				return nil, fmt.Errorf("mesh %s on %d ranks: no graph joins an odd number of ranks each to an odd number of others; use an even world or an even degree", spec, world)
			}
			m.search()
		}
	default:
		return nil, fmt.Errorf("mesh: unknown kind %d", spec.Kind)
	}
	return m, nil
}

// Spec is the spec the mesh was built from.
func (m *Mesh) Spec() Spec { return m.spec }

// World is the number of ranks.
func (m *Mesh) World() int { return m.world }

// full says whether every pair is joined.
func (m *Mesh) full() bool {
	return m.spec.Kind == Full || m.world <= 2 ||
		(m.spec.Kind == KRegular && m.world <= m.spec.K+1)
}

// offsets are a k-regular mesh's steps from any rank, in the order the
// search tries them (which breaks ties between equally short routes).
func (m *Mesh) offsets() []int {
	p, k := m.world, m.spec.K
	var off []int
	for i := 1; i <= k/2; i++ {
		off = append(off, i, p-i)
	}
	if k%2 == 1 {
		off = append(off, p/2)
	}
	return off
}

func (m *Mesh) search() {
	p := m.world
	m.first = make([]int32, p)
	m.hops = make([]int32, p)
	for i := range m.hops {
		m.hops[i] = -1
	}
	m.hops[0] = 0
	queue := make([]int32, 0, p)
	queue = append(queue, 0)
	off := m.offsets()
	for len(queue) > 0 {
		d := int(queue[0])
		queue = queue[1:]
		for _, o := range off {
			e := (d + o) % p
			if m.hops[e] >= 0 {
				continue
			}
			m.hops[e] = m.hops[d] + 1
			if d == 0 {
				m.first[e] = int32(o)
			} else {
				m.first[e] = m.first[d]
			}
			queue = append(queue, int32(e))
		}
	}
}

func (m *Mesh) check(r int) {
	if r < 0 || r >= m.world {
		panic(fmt.Sprintf("mesh: rank %d outside a world of %d", r, m.world))
	}
}

// Joined says whether ranks a and b hold a direct connection. A rank is
// not joined to itself.
func (m *Mesh) Joined(a, b int) bool {
	m.check(a)
	m.check(b)
	if a == b {
		return false
	}
	if m.full() {
		return true
	}
	if m.spec.Kind == Hypercube {
		return bits.OnesCount(uint(a^b)) == 1
	}
	return m.hops[(b-a+m.world)%m.world] == 1
}

// Neighbours lists the ranks joined to r, in increasing order.
func (m *Mesh) Neighbours(r int) []int {
	m.check(r)
	var out []int
	switch {
	case m.full():
		for q := 0; q < m.world; q++ {
			if q != r {
				out = append(out, q)
			}
		}
	case m.spec.Kind == Hypercube:
		for b := 1; b < m.world; b <<= 1 {
			if q := r ^ b; q < m.world {
				out = append(out, q)
			}
		}
		slices.Sort(out)
	default:
		seen := map[int]bool{}
		for _, o := range m.offsets() {
			q := (r + o) % m.world
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
		slices.Sort(out)
	}
	return out
}

// NextHop is the rank a message from `from` to `to` goes to next: `to`
// itself when the two are joined. from and to must differ.
func (m *Mesh) NextHop(from, to int) int {
	m.check(from)
	m.check(to)
	if from == to {
		panic(fmt.Sprintf("mesh: no hop from rank %d to itself", from))
	}
	if m.full() {
		return to
	}
	if m.spec.Kind == Hypercube {
		// Clear the bits `from` has and `to` lacks before setting those
		// `to` has: every rank on the way is then at most max(from, to),
		// so inside a world that is not a power of two, and each step
		// changes one bit, so the route is a shortest one.
		if extra := from &^ to; extra != 0 {
			return from &^ (extra & -extra)
		}
		missing := to &^ from
		return from | (missing & -missing)
	}
	p := m.world
	return (from + int(m.first[(to-from+p)%p])) % p
}

// Hops is the number of links a message from `from` to `to` crosses: 0 to
// itself, 1 to a neighbour.
func (m *Mesh) Hops(from, to int) int {
	m.check(from)
	m.check(to)
	switch {
	case from == to:
		return 0
	case m.full():
		return 1
	case m.spec.Kind == Hypercube:
		return bits.OnesCount(uint(from ^ to))
	}
	return int(m.hops[(to-from+m.world)%m.world])
}

// Route lists the ranks a message from `from` to `to` visits after
// `from`, ending with `to`; empty when the two are one rank.
func (m *Mesh) Route(from, to int) []int {
	route := make([]int, 0, m.Hops(from, to))
	for r := from; r != to; {
		r = m.NextHop(r, to)
		route = append(route, r)
	}
	return route
}

// Diameter is the most hops any route takes.
func (m *Mesh) Diameter() int {
	switch {
	case m.world == 1:
		return 0
	case m.full():
		return 1
	case m.spec.Kind == Hypercube:
		return bits.Len(uint(m.world - 1))
	}
	d := int32(0)
	for _, h := range m.hops {
		d = max(d, h)
	}
	return int(d)
}
