package tuner

import (
	"errors"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl"
)

func TestCatalogueNames(t *testing.T) {
	n := 0
	for a := range NumAlgos {
		for p := range Protocol(NumProtocols) {
			name := CatalogueName(a, p)
			if name == "" {
				continue
			}
			n++
			if a2, p2, ok := ParseCatalogueName(name); !ok || a2 != a || p2 != p {
				t.Errorf("%s: read back as %s/%s %t", name, a2, p2, ok)
			}
		}
	}
	// rings and trees of 3 protocols, PAT, NVLS, NVLS tree, CollNet direct
	if n != 10 {
		t.Errorf("%d names, want 10", n)
	}
	for coll := range NumColls {
		c, err := algos.Lookup(coll.Catalogue())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Protocol{nccl.LL, nccl.LL128, nccl.Simple} {
			if _, err := c.Algorithm(CatalogueName(Ring, p)); err != nil {
				t.Errorf("%s: %v", coll, err)
			}
		}
	}
	if _, _, ok := ParseCatalogueName("ring"); ok {
		t.Error("ring read as NCCL's")
	}
}

func TestPolicySelect(t *testing.T) {
	p, err := NewPolicy(dgxH100)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		coll        string
		world       int
		machine     *algos.Machine
		bytes       int
		algorithm   string
		channelsMax int
	}{
		{"allreduce", 8, nil, 1 << 10, "nccl_ring_ll", 1},
		{"allreduce", 8, nil, 1 << 30, "nccl_nvls", 16},
		{"allreduce", 16, nil, 1 << 10, "nccl_tree_ll", 16},
		{"allreduce", 16, nil, 1 << 30, "nccl_nvls_tree", 16},
		{"reduce_scatter", 64, nil, 1 << 30, "nccl_ring_simple", 16},
		{"broadcast", 32, nil, 1 << 30, "nccl_ring_simple", 16},
		// 16 ranks that the machine puts on 16 nodes: PAT for allgather.
		{"allgather", 16, &algos.Machine{Node: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}, 1 << 16, "nccl_pat", 64},
	} {
		ch, err := p.Select(c.coll, c.machine, c.world, c.bytes, c.bytes/4)
		if err != nil {
			t.Fatalf("%s on %d: %v", c.coll, c.world, err)
		}
		if ch.Algorithm != c.algorithm || ch.Params["channels"] < 1 || ch.Params["channels"] > c.channelsMax || !strings.HasPrefix(ch.From, "policy nccl: ") {
			t.Errorf("%s on %d ranks, %d bytes: %+v, want %s on at most %d channels", c.coll, c.world, c.bytes, ch, c.algorithm, c.channelsMax)
		}
	}
	if _, err := p.Select("alltoall", nil, 8, 1024, 256); !errors.Is(err, algos.ErrNoChoice) {
		t.Errorf("alltoall: %v, want no choice", err)
	}
	// The machine's channel count replaces the model's.
	ch, _ := p.Select("allreduce", &algos.Machine{Channels: 4}, 8, 1<<30, 1<<28)
	if ch.Algorithm != "nccl_nvls" {
		t.Errorf("4 channels: %+v", ch)
	}
	ch, _ = p.Select("allreduce", &algos.Machine{Channels: 4}, 8, 64<<20, 16<<20)
	if ch.Algorithm == "nccl_ring_simple" && ch.Params["channels"] != 4 {
		t.Errorf("4 channels: %+v", ch)
	}
	if _, err := NewPolicy(Cluster{CompCap: 90}); err == nil {
		t.Error("a cluster of no GPUs a node made a policy")
	}
}
