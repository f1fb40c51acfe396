package algos

import (
	"context"
	"strings"
	"testing"
)

func TestRegisterAlgorithm(t *testing.T) {
	noop := func(context.Context, Link, Call) error { return nil }
	Register(&Collective{Name: "registertest", Algorithms: []*Algorithm{{Name: "ring", SMPI: "lr", Run: noop}}})
	for _, tc := range []struct {
		coll string
		a    *Algorithm
		want string
	}{
		{"nosuch", &Algorithm{Name: "x", Run: noop}, "unknown collective"},
		{"registertest", &Algorithm{Name: "x"}, "needs a Name and a Run"},
		{"registertest", &Algorithm{Name: "ring", Run: noop}, `"ring" is taken by ring`},
		{"registertest", &Algorithm{Name: "mine", Aliases: []string{"lr"}, Run: noop}, `"lr" is taken`},
		{"registertest", &Algorithm{Name: "my ring", Run: noop}, "without spaces"},
		{"registertest", &Algorithm{Name: "mine", Run: noop}, ""},
		{"registertest", &Algorithm{Name: "mine", Run: noop}, `"mine" is taken`},
	} {
		err := RegisterAlgorithm(tc.coll, tc.a)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("RegisterAlgorithm(%s, %s) = %v, want %q", tc.coll, tc.a.Name, err, tc.want)
		}
	}
	c, _ := Lookup("registertest")
	if a, err := c.Algorithm("mine"); err != nil || a.Name != "mine" || len(c.Algorithms) != 2 {
		t.Errorf("after registering: %v, %d algorithms", err, len(c.Algorithms))
	}
}
