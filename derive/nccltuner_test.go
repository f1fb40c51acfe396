package derive_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// ncclRows are times of NCCL's algorithms on 16 ranks (2 nodes of 8): the
// tree over LL fastest up to 64 KiB, the ring over Simple (on 8 channels)
// from 1 MiB, crossing at 256 KiB on the log scale; a non-NCCL ring and
// auto, which nccl_tuner.conf leaves out; an allreduce on 8 ranks where
// the ring over LL wins throughout; and alltoall, which NCCL does not
// choose for.
func ncclRows() []sweep.Row {
	row := func(coll, algo, params string, world, bytes int, us float64) sweep.Row {
		return sweep.Row{Row: results.Row{Collective: coll, Algorithm: algo, Params: params, World: world, Bytes: bytes, DType: "f32", Time: us * 1e-6}}
	}
	return []sweep.Row{
		row("allreduce", "nccl_tree_ll", "", 16, 1024, 20), row("allreduce", "nccl_tree_ll", "", 16, 65536, 40), row("allreduce", "nccl_tree_ll", "", 16, 1<<20, 400),
		row("allreduce", "nccl_ring_simple(channels=8)", "channels=8", 16, 1024, 80), row("allreduce", "nccl_ring_simple(channels=8)", "channels=8", 16, 65536, 160), row("allreduce", "nccl_ring_simple(channels=8)", "channels=8", 16, 1<<20, 100),
		row("allreduce", "ring", "", 16, 1024, 1), row("allreduce", "ring", "", 16, 65536, 1), row("allreduce", "ring", "", 16, 1<<20, 1),
		row("allreduce", "auto", "", 16, 1024, 1),
		row("allreduce", "nccl_ring_ll", "", 8, 1024, 5), row("allreduce", "nccl_tree_ll", "", 8, 1024, 6),
		row("allreduce", "nccl_ring_ll", "", 8, 1<<20, 50), row("allreduce", "nccl_tree_ll", "", 8, 1<<20, 60),
		row("alltoall", "pairwise", "", 16, 1024, 3), row("alltoall", "bruck", "", 16, 1024, 2),
	}
}

func TestNCCLTunerConf(t *testing.T) {
	res, err := derive.Derive(ncclRows(), derive.Options{Source: "a test", Channels: 24, Nodes: func(w int) int { return (w + 7) / 8 }})
	if err != nil {
		t.Fatal(err)
	}
	if res.NCCLTuner == nil {
		t.Fatal("no nccl_tuner.conf")
	}
	var b bytes.Buffer
	if _, err := res.NCCLTuner.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rules = append(rules, l)
		}
	}
	// 8 ranks first (worlds ascending); 16: the tree to 256 KiB - 1 B
	// (the log-scale crossover of 40/160 us at 64 KiB and 400/100 at 1
	// MiB is at 256 KiB), the 8-channel ring above; the machine's 24
	// channels where a variant sets none; then any other world: the
	// rules of the largest world swept (16), on any nodes and ranks.
	want := []string{
		"allreduce,0,18446744073709551615,ring,ll,24,1,8",
		"allreduce,0,262143,tree,ll,24,2,16",
		"allreduce,262144,18446744073709551615,ring,simple,8,2,16",
		"allreduce,0,262143,tree,ll,24,-1,-1",
		"allreduce,262144,18446744073709551615,ring,simple,8,-1,-1",
	}
	if strings.Join(rules, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules\n%s\nwant\n%s", strings.Join(rules, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(b.String(), "# a test\n") || !strings.Contains(b.String(), "NCCL_TUNER_CONFIG_FILE") {
		t.Errorf("comments:\n%s", b.String())
	}
	// What the plugin loads is what was written.
	lines, err := tuner.ParseConfig(bytes.NewReader(b.Bytes()), true)
	if err != nil || len(lines) != len(want) {
		t.Fatalf("the plugin's parser: %d rules, %v", len(lines), err)
	}
	// Deterministic.
	res2, _ := derive.Derive(ncclRows(), derive.Options{Source: "a test", Channels: 24, Nodes: func(w int) int { return (w + 7) / 8 }})
	var b2 bytes.Buffer
	res2.NCCLTuner.WriteTo(&b2)
	if b2.String() != b.String() {
		t.Error("two derivations differ")
	}
}

func TestNCCLTunerNotes(t *testing.T) {
	// Without the machine's channels the algorithms ran on one, which
	// the lines say, and a note.
	res, err := derive.Derive(ncclRows(), derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "ran on one channel") {
		t.Errorf("notes %q", res.Notes)
	}
	var b0 bytes.Buffer
	res.NCCLTuner.WriteTo(&b0)
	if !strings.Contains(b0.String(), "\nallreduce,0,262143,tree,ll,1,-1,16\n") {
		t.Errorf("without the machine's channels or nodes:\n%s", b0.String())
	}
	// One NCCL algorithm: nothing to choose.
	one := []sweep.Row{{Row: results.Row{Collective: "allreduce", Algorithm: "nccl_ring_ll", World: 8, Bytes: 1024, DType: "f32", Time: 1e-6}},
		{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1024, DType: "f32", Time: 2e-6}}}
	res, err = derive.Derive(one, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NCCLTuner != nil || !strings.Contains(strings.Join(res.Notes, "\n"), "only one of NCCL's algorithms") {
		t.Errorf("one NCCL variant: %v, notes %q", res.NCCLTuner, res.Notes)
	}
	// With NCCL's policy, where the file departs from NCCL's own choice.
	p, err := tuner.NewPolicy(tuner.Cluster{CompCap: 90, GPUsPerNode: 8, NVLink: 450e9, NVSwitch: true, PCIe: 64e9, NIC: 50e9})
	if err != nil {
		t.Fatal(err)
	}
	res, err = derive.Derive(ncclRows(), derive.Options{Channels: 24, Policy: p, Nodes: func(w int) int { return (w + 7) / 8 }})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	// At 1 MiB on 16 ranks NCCL picks the tree over LL128 (not swept),
	// the file the 8-channel ring.
	if !strings.Contains(notes, "allreduce on 16 ranks, ring/simple from 262144 B: differs from NCCL's own choice at 1048576 B: NCCL picks tree/ll128") {
		t.Errorf("notes:\n%s", notes)
	}
	// At 1 KiB on 8 ranks NCCL picks the ring over LL too: no note.
	if strings.Contains(notes, "on 8 ranks, ring/ll from 0 B: differs") {
		t.Errorf("notes:\n%s", notes)
	}
	// Where the tree is faster at 1 KiB on 8 ranks, the file departs
	// from NCCL's ring, which the sweep ran: the simulated gain.
	rows := ncclRows()
	for i, r := range rows {
		if r.World == 8 && r.Bytes == 1024 && r.Algorithm == "nccl_tree_ll" {
			rows[i].Time = 4e-6
		}
	}
	res, err = derive.Derive(rows, derive.Options{Channels: 24, Policy: p, Nodes: func(w int) int { return (w + 7) / 8 }})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "allreduce on 8 ranks, tree/ll from 0 B: differs from NCCL's own choice at 1024 B: NCCL picks ring/ll (nccl_ring_ll 5.0 us, this 4.0 us: -20.0%)") {
		t.Errorf("notes:\n%s", notes)
	}

	// NCCL runs no NVLS tree on one node: on 8 ranks the fastest variant
	// it allows gets the rule, and a note says why.
	rows = append(ncclRows(),
		sweep.Row{Row: results.Row{Collective: "allreduce", Algorithm: "nccl_nvls_tree", World: 8, Bytes: 1024, DType: "f32", Time: 1e-6}},
		sweep.Row{Row: results.Row{Collective: "allreduce", Algorithm: "nccl_nvls_tree", World: 8, Bytes: 1 << 20, DType: "f32", Time: 1e-6}})
	res, err = derive.Derive(rows, derive.Options{Channels: 24, Policy: p, Nodes: func(w int) int { return (w + 7) / 8 }})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	res.NCCLTuner.WriteTo(&b)
	if strings.Contains(b.String(), "nvls_tree") || !strings.Contains(b.String(), "\nallreduce,0,18446744073709551615,ring,ll,24,1,8\n") {
		t.Errorf("NVLS tree on one node:\n%s", b.String())
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "allreduce on 8 ranks: nccl_nvls_tree left out of nccl_tuner.conf, as NCCL does not run that there") {
		t.Errorf("notes:\n%s", notes)
	}
}
