package tuner

import (
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// TestParseEnables: NCCL_ALGO and NCCL_PROTO as NCCL 2.30.7's parseList
// reads them, its own examples among them.
func TestParseEnables(t *testing.T) {
	for _, c := range []struct {
		algo, proto string
		// want lists, for allreduce and broadcast, the algorithms and
		// protocols left on (LL128 "2": on where the hardware runs it).
		arAlgo, bcAlgo, arProto, bcProto string
		err                              string
	}{
		{"", "", "1111111", "1111111", "121", "121", ""},
		{"Tree", "", "1000000", "1000000", "121", "121", ""},
		{"ring,tree", "", "1100000", "1100000", "121", "121", ""},
		{"^NVLS,nvlstree", "", "1111001", "1111001", "121", "121", ""},
		{"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", "", "1010000", "0100000", "121", "121", ""},
		{"", "LL,Simple;allreduce:^LL", "1111111", "1111111", "011", "101", ""},
		{"", "^LL128;allreduce:LL128", "1111111", "1111111", "010", "101", ""},
		{"", "simple", "1111111", "1111111", "001", "001", ""},
		{"ring,,tree;;", "", "1100000", "1100000", "121", "121", ""},
		{";ring", "", "", "", "", "", "every entry but the first"}, // NCCL: not at the string's start
		{"allreduce:tree:ignored", "", "1000000", "1111111", "121", "121", ""},
		{"Ring, Tree", "", "", "", "", "", `NCCL_ALGO="Ring, Tree": unknown name " Tree"`},
		{"CollNet", "", "", "", "", "", `unknown name "CollNet"`},
		{"ring;tree", "", "", "", "", "", "every entry but the first must name its collective"},
		{"alltoall:ring", "", "", "", "", "", `unknown collective "alltoall"`},
		{"", "LL256", "", "", "", "", `NCCL_PROTO="LL256": unknown name`},
	} {
		e, err := parseEnables(c.algo, c.proto)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: error %v, want %q", c.algo, c.proto, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q %q: %v", c.algo, c.proto, err)
			continue
		}
		digits := func(v []int) string {
			var b strings.Builder
			for _, x := range v {
				b.WriteByte(byte('0' + x))
			}
			return b.String()
		}
		got := [4]string{digits(e.algo[AllReduce][:]), digits(e.algo[Broadcast][:]), digits(e.proto[AllReduce][:]), digits(e.proto[Broadcast][:])}
		if want := [4]string{c.arAlgo, c.bcAlgo, c.arProto, c.bcProto}; got != want {
			t.Errorf("%q %q: %v, want %v", c.algo, c.proto, got, want)
		}
	}
}

// TestEnvChoice: on two DGX H100 nodes, NCCL_ALGO and NCCL_PROTO limit
// the choice as NCCL's enable matrix does, and LL128 named in NCCL_PROTO
// is on where the hardware would leave it off.
func TestEnvChoice(t *testing.T) {
	base, err := dgxH100.System(16)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		algo, proto string
		bytes       int
		want        string // algorithm/protocol
	}{
		{"", "", 1 << 30, ""}, // the default, whatever it is: not a forced one
		{"Tree", "", 1 << 30, "tree/"},
		{"Ring", "", 8, "ring/"},
		{"Ring", "Simple", 8, "ring/simple"},
		{"Tree", "LL", 1 << 30, "tree/ll"},
		{"allreduce:ring", "", 1 << 30, "ring/"},
	} {
		s := base
		s.Algo, s.Proto = c.algo, c.proto
		m, err := Tune(s)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := m.Choose(Call{Coll: AllReduce, Bytes: c.bytes})
		if err != nil {
			t.Fatalf("%q %q: %v", c.algo, c.proto, err)
		}
		got := ch.Algo.String() + "/" + ch.Proto.String()
		if c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("NCCL_ALGO=%q NCCL_PROTO=%q, %d B: %s, want %s", c.algo, c.proto, c.bytes, got, c.want)
		}
	}
	// Every pair left out: NCCL has no algorithm, and says so.
	s := base
	s.Algo = "allreduce:collnetchain"
	m, err := Tune(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Choose(Call{Coll: AllReduce, Bytes: 1 << 20}); err == nil {
		t.Error("only CollNet chain, which the system lacks: a choice")
	}
	// A bad value is the system's error.
	s.Algo = "Rings"
	if _, err := Tune(s); err == nil {
		t.Error(`NCCL_ALGO="Rings": no error`)
	}
	// LL128 named: on, where the default leaves it off (a PCIe path
	// beyond PXN between GPUs and NICs).
	s = base
	for a := range s.Graphs {
		s.Graphs[a].TypeInter = PathSYS
	}
	off, _ := Tune(s)
	s.Proto = "LL128"
	on, _ := Tune(s)
	if off.Bandwidth(AllReduce, Ring, nccl.LL128) != 0 || on.Bandwidth(AllReduce, Ring, nccl.LL128) == 0 {
		t.Errorf("LL128 over SYS: %g by default, %g named", off.Bandwidth(AllReduce, Ring, nccl.LL128), on.Bandwidth(AllReduce, Ring, nccl.LL128))
	}
}

// FuzzParseEnables: any NCCL_ALGO and NCCL_PROTO parse or fail without
// panicking, and what parses is a matrix of 0, 1 and LL128's 2.
func FuzzParseEnables(f *testing.F) {
	for _, s := range []string{"", "Tree", "^NVLS", "ring,collnetdirect;allreduce:tree;broadcast:ring", "LL,Simple;allreduce:^LL", ";", "a:b:c", "^"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, algo, proto string) {
		e, err := parseEnables(algo, proto)
		if err != nil {
			return
		}
		for c := range NumColls {
			for _, v := range e.algo[c] {
				if v != 0 && v != 1 {
					t.Fatalf("algo enable %d", v)
				}
			}
			for p, v := range e.proto[c] {
				if v != 0 && v != 1 && !(v == 2 && Protocol(p) == nccl.LL128) {
					t.Fatalf("proto enable %d for %d", v, p)
				}
			}
		}
	})
}
