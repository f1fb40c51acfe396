package algos

import (
	"fmt"
	"math/bits"

	"github.com/nexar-go/nexar-go/device"
)

// relativeLink renumbers the ranks of a Link so that root becomes rank 0:
// rank r of the world is rank (r - root) mod p of the view. Rooted tree
// algorithms are written for root 0 and run through this view, so every
// root takes the same tree, only rotated. Buffers, tags and costs are
// untouched.
type relativeLink struct {
	Link
	root, p int
}

// relativeTo returns l seen from root, or l itself when root is 0.
func relativeTo(l Link, root int) Link {
	if root == 0 {
		return l
	}
	return &relativeLink{Link: l, root: root, p: l.Size()}
}

func (r *relativeLink) Rank() int { return mod(r.Link.Rank()-r.root, r.p) }

func (r *relativeLink) Isend(dst int, tag Tag, buf device.Buffer) Request {
	return r.Link.Isend(mod(dst+r.root, r.p), tag, buf)
}

func (r *relativeLink) Irecv(src int, tag Tag, buf device.Buffer) Request {
	return r.Link.Irecv(mod(src+r.root, r.p), tag, buf)
}

var _ Link = (*relativeLink)(nil)

// checkRootRank returns an error unless root is a rank of l's world.
func checkRootRank(l Link, root int) error {
	if root < 0 || root >= l.Size() {
		return fmt.Errorf("algos: root %d outside world of %d ranks", root, l.Size())
	}
	return nil
}

// treeSpan is the smallest power of two that is at least p: the mask a
// binomial tree over p ranks starts from.
func treeSpan(p int) int {
	if p <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(p-1))
}

// treeLowBit returns the lowest set bit of v > 0: in a binomial tree rooted at
// 0, the distance from v to its parent and the span of v's subtree.
func treeLowBit(v int) int { return v & -v }

// subtreeSpan is the span of relative rank v's subtree in a binomial tree
// over p ranks: the whole tree's span at the root, v's lowest set bit
// elsewhere, which is also the distance from v to its parent.
func subtreeSpan(v, p int) int {
	if v == 0 {
		return treeSpan(p)
	}
	return treeLowBit(v)
}
