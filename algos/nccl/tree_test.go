package nccl

import (
	"fmt"
	"testing"
)

// TestBtree holds Btree to the tree drawn in NCCL's trees.cc for 14 ranks.
func TestBtree(t *testing.T) {
	// 0---------------8
	//          ______/ \\______
	//         4               12
	//       /   \\            /  \\
	//     2       6       10     \\
	//    / \\     / \\     /  \\     \\
	//   1   3   5   7   9   11    13
	want := map[int][3]int{
		0: {-1, -1, 8}, 8: {0, 4, 12}, 4: {8, 2, 6}, 12: {8, 10, 13},
		2: {4, 1, 3}, 6: {4, 5, 7}, 10: {12, 9, 11},
		1: {2, -1, -1}, 3: {2, -1, -1}, 5: {6, -1, -1}, 7: {6, -1, -1},
		9: {10, -1, -1}, 11: {10, -1, -1}, 13: {12, -1, -1},
	}
	for r, w := range want {
		u, d0, d1, _ := Btree(14, r)
		if [3]int{u, d0, d1} != w {
			t.Errorf("rank %d: up %d down %d %d, want %v", r, u, d0, d1, w)
		}
	}
}

// TestDtree checks that both trees of the double binary tree span every
// rank once, consistently (a child names its parent and the parent the
// child), and that tree 1 is tree 0 mirrored (even n) or shifted (odd n).
func TestDtree(t *testing.T) {
	for n := 1; n <= 33; n++ {
		for tree := range 2 {
			roots := 0
			children := map[int]int{}
			for r := range n {
				u, d0, d1, ct := Dtree(n, r, tree)
				if u == -1 {
					roots++
				} else if _, pd0, pd1, _ := Dtree(n, u, tree); (ct == 0 && pd0 != r) || (ct == 1 && pd1 != r) {
					t.Fatalf("n=%d tree %d: rank %d says it is child %d of %d, which has children %d %d", n, tree, r, ct, u, pd0, pd1)
				}
				for _, d := range []int{d0, d1} {
					if d != -1 {
						children[d]++
					}
				}
			}
			if roots != 1 || len(children) != n-1 {
				t.Fatalf("n=%d tree %d: %d roots, %d ranks with a parent", n, tree, roots, len(children))
			}
		}
	}
	for n := 2; n <= 17; n++ {
		for r := range n {
			m := n - 1 - r
			if n%2 == 1 {
				m = (r + 1) % n
			}
			u0, a0, b0, _ := Btree(n, r)
			u1, a1, b1, _ := Dtree(n, m, 1)
			f := func(x int) int {
				if x == -1 {
					return -1
				}
				if n%2 == 1 {
					return (x + 1) % n
				}
				return n - 1 - x
			}
			if fmt.Sprint(f(u0), f(a0), f(b0)) != fmt.Sprint(u1, a1, b1) {
				t.Errorf("n=%d: tree 1 at %d is not tree 0 at %d moved", n, m, r)
			}
		}
	}
}
