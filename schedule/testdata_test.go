package schedule_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/simtest"
)

// TestFiles runs the schedules of testdata/, written from the published
// schema, on the simulator with real data checked against the reference,
// at several counts, with chunks moved whole and in loops of slices.
func TestFiles(t *testing.T) {
	n := network(t)
	for _, c := range []struct {
		file  string
		world int
		// counts are element counts as nccl-tests counts them.
		counts []int
	}{
		{"allreduce_ring_ll_2ch_4gpu.xml", 4, []int{1, 3, 8, 13, 1000, 4099}},
		{"allgather_direct_ll128_3gpu.xml", 3, []int{3, 6, 999, 3000}},
		{"reducescatter_direct_2ch_4gpu.xml", 4, []int{4, 8, 1000, 4096}},
		{"alltoall_inplace_2gpu.xml", 2, []int{4, 8, 1000, 4096}},
	} {
		s, name := registerFile(t, c.file)
		coll, _ := s.Collective()
		for _, count := range c.counts {
			var whole simtest.Case
			for _, slice := range []int{0, 64, 1000} {
				cs := simtest.Case{Collective: coll, Algorithm: name, World: c.world, Bytes: 4 * count,
					Params: map[string]int{"slice": slice}, Data: true}
				got, err := n.Simulate(cs)
				if err != nil {
					t.Errorf("%s count %d slice %d: %v", c.file, count, slice, err)
					continue
				}
				if slice == 0 {
					whole = cs
					continue
				}
				// Slices smaller than a chunk cost a message each.
				if chunk := 4 * count / s.NChunksPerLoop; chunk > slice {
					if w := n.Time(t, whole); got <= w {
						t.Errorf("%s count %d: slices of %d bytes take %v, whole chunks %v: want longer", c.file, count, slice, got, w)
					}
				}
			}
		}
	}
}

// TestWrongScheduleFails keeps the data check honest: a schedule that
// forgets to copy a rank's own block fails it.
func TestWrongScheduleFails(t *testing.T) {
	s := schedule.RingAllgather(3)
	s.GPUs[1].TBs[0].Steps[0].DstOff = 2 // rank 1 copies its block to the wrong place
	var b strings.Builder
	if err := s.WriteXML(&b); err != nil {
		t.Fatal(err)
	}
	back, err := schedule.Parse("wrong.xml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	a, err := back.Algorithm("wrong_ring")
	if err != nil {
		t.Fatal(err)
	}
	if err := algos.RegisterAlgorithm("allgather", a); err != nil {
		t.Fatal(err)
	}
	_, err = network(t).Simulate(simtest.Case{Collective: "allgather", Algorithm: "wrong_ring", World: 3, Bytes: 4 * 30, Data: true})
	if err == nil {
		t.Fatal("a wrong schedule passed the data check")
	}
	t.Log(err)
}

// TestRefused: a schedule run where it does not fit is refused, naming why.
func TestRefused(t *testing.T) {
	n := network(t)
	register(t, schedule.RingAllreduce(4), "refused_ring_4")
	for _, c := range []struct {
		cs   simtest.Case
		want string
	}{
		{simtest.Case{Collective: "allreduce", Algorithm: "refused_ring_4", World: 8, Bytes: 64}, "a schedule for 4 GPUs, run on 8 ranks"},
		{simtest.Case{Collective: "alltoall", Algorithm: "file_alltoall_inplace_2gpu", World: 2, Bytes: 4 * 6}, "do not cut into nchunksperloop 4 chunks"},
	} {
		registerFile(t, "alltoall_inplace_2gpu.xml")
		_, err := n.Simulate(c.cs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error with %q", c.cs, err, c.want)
		}
	}
	bcast := strings.Replace(xmlOf(t, schedule.RingAllreduce(2)), `coll="allreduce"`, `coll="broadcast"`, 1)
	if _, err := mustParse(t, bcast).Algorithm("x"); err == nil || !strings.Contains(err.Error(), "runs allreduce, allgather, reducescatter and alltoall") {
		t.Errorf("a broadcast schedule: got %v", err)
	}
}

// registerFile reads testdata's file and registers it under its
// collective as file_ and its base name, once.
func registerFile(t *testing.T, file string) (*schedule.Schedule, string) {
	t.Helper()
	s, err := schedule.Load(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	name := "file_" + strings.TrimSuffix(file, ".xml")
	register(t, s, name)
	return s, name
}

func xmlOf(t *testing.T, s *schedule.Schedule) string {
	t.Helper()
	var b strings.Builder
	if err := s.WriteXML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func mustParse(t *testing.T, text string) *schedule.Schedule {
	t.Helper()
	s, err := schedule.Parse("t.xml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUnevenSizes: where a count cuts chunks unevenly, a message that
// would not fit the receive it matches is refused, naming both steps.
func TestUnevenSizes(t *testing.T) {
	text := strings.Replace(good, `<step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0"`, `<step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1"`, 1)
	register(t, mustParse(t, text), "uneven_sizes")
	n := network(t)
	_, err := n.Simulate(simtest.Case{Collective: "allreduce", Algorithm: "uneven_sizes", World: 2, Bytes: 12})
	want := "at 3 elements gpu 0 tb 0 step 0 sends 2 elements where gpu 1 tb 0 step 1 (line 11) receives 1"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("count 3: got %v, want %q", err, want)
	}
	if _, err := n.Simulate(simtest.Case{Collective: "allreduce", Algorithm: "uneven_sizes", World: 2, Bytes: 16}); err != nil {
		t.Errorf("count 4: %v", err)
	}
}
