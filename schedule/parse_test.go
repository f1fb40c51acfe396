package schedule_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/simtest"
)

const good = `<algo name="t" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
`

// TestParseErrors: a bad file is an error naming the file, the line and
// what was expected, never a panic.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"empty", good, "", "f.xml:1: empty file: want an <algo> element"},
		{"not xml", good, "hello", "f.xml:1: unexpected text"},
		{"wrong root", "<algo ", "<algorithm ", "f.xml:1: want <algo> as the root element"},
		{"unclosed", "</algo>\n", "", "f.xml:14: the file ends before its elements are closed: want </algo>"},
		{"missing attribute", ` proto="Simple"`, "", "f.xml:1: <algo> lacks attribute proto"},
		{"bad proto", `proto="Simple"`, `proto="LL64"`, `f.xml:1: <algo proto="LL64">: want Simple, LL or LL128`},
		{"not a number", `nchannels="1"`, `nchannels="one"`, `f.xml:1: <algo> nchannels="one": want an integer`},
		{"out of range", `nchunksperloop="2"`, `nchunksperloop="0"`, `<algo> nchunksperloop=0: want 1 to`},
		{"wrong child", `<gpu id="1"`, `<cpu id="1"`, "f.xml:8: <cpu> inside <algo>: want <gpu>"},
		{"new format", `<step s="1" type="rrc"`, `<op s="1" type="rrc"`, "f.xml:5: <op> inside <tb>: want <step>"},
		{"gpu count", `ngpus="2"`, `ngpus="3"`, "f.xml:1: <algo ngpus=3> but 2 <gpu> elements"},
		{"gpu ids", `<gpu id="1"`, `<gpu id="0"`, `f.xml:8: <gpu id=0>: want ids 0 to 1, each once`},
		{"bad type", `type="rrc" srcbuf="i" srcoff="1"`, `type="rr" srcbuf="i" srcoff="1"`, `f.xml:5: <step type="rr">: want s, r, rcs`},
		{"bad buffer", `type="rrc" srcbuf="i" srcoff="1"`, `type="rrc" srcbuf="x" srcoff="1"`, `f.xml:5: <step> srcbuf="x": want i (input), o (output) or s (scratch)`},
		{"self peer", `<tb id="0" send="1" recv="1"`, `<tb id="0" send="0" recv="1"`, "f.xml:3: gpu 0 tb 0: peer 0: want another gpu"},
		{"channel", `<tb id="0" send="0" recv="0" chan="0"`, `<tb id="0" send="0" recv="0" chan="1"`, "f.xml:9: gpu 1 tb 0: chan 1: want below nchannels 1"},
		{"step order", `<step s="1" type="rrc" srcbuf="i" srcoff="1"`, `<step s="2" type="rrc" srcbuf="i" srcoff="1"`, "f.xml:5: gpu 0 tb 0 step 2 (rrc): s=2: want steps numbered"},
		{"offset", `srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1"`, `srcoff="1" dstbuf="i" dstoff="1" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1"`, "f.xml:5: gpu 0 tb 0 step 1 (rrc): src chunks 1 to 2 of buffer i: want within its 2 chunks"},
		{"dependency", `srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1"`, `srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="3" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1"`, "f.xml:5: gpu 0 tb 0 step 1 (rrc): depid=3: want a threadblock of gpu 0, 0 to 0"},
		// A step may wait on an earlier step of its own threadblock (see
		// TestOwnDependency), never on itself or a later one.
		{"own step", `srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1"`, `srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="0" deps="1" hasdep="1"/>
    </tb>
  </gpu>
  <gpu id="1"`, "f.xml:5: gpu 0 tb 0 step 1 (rrc): depid=0 deps=1: a step of its own threadblock that is not an earlier one: the executor would wait for it forever"},
		{"deadlock", `<step s="0" type="s" srcbuf="i" srcoff="1"`, `<step s="0" type="nop" srcbuf="i" srcoff="1"`,
			"f.xml: the schedule deadlocks:\n  gpu 0 tb 0 step 1 (rrc, line 5) waits for a message from gpu 1 on channel 0 that no step sends"},
		{"unreceived", `<step s="1" type="rrc" srcbuf="i" srcoff="0"`, `<step s="1" type="nop" srcbuf="i" srcoff="0"`,
			"f.xml: gpu 0 sends 1 message(s) to gpu 1 on channel 0 that no step receives"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := good
			if c.old == good {
				text = c.new
			} else {
				if !strings.Contains(good, c.old) {
					t.Fatalf("the case's old text is not in the good file")
				}
				text = strings.Replace(good, c.old, c.new, 1)
			}
			_, err := schedule.Parse("f.xml", []byte(text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant an error with %q", err, c.want)
			}
		})
	}
	if _, err := schedule.Parse("f.xml", []byte(good)); err != nil {
		t.Fatalf("the good file: %v", err)
	}
}

// TestOwnDependency: a step whose depid is its own threadblock and whose
// deps is an earlier step (msccl's ar_ll.xml has such steps) waits for
// nothing, as on the executor, where its own earlier step has set the
// flag it waits on: it is read, written back as it was, and runs with
// the reference's data on both interpreters.
func TestOwnDependency(t *testing.T) {
	// A 2-GPU allreduce: send my chunk, receive and reduce the peer's,
	// store it and send it back, receive mine; the last step depends on
	// the first of its own threadblock. A second threadblock, waiting on
	// the first too, makes the simulator run them as processes.
	var text strings.Builder
	text.WriteString(`<algo name="own" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">` + "\n")
	for g := range 2 {
		fmt.Fprintf(&text, `  <gpu id="%d" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="%[2]d" recv="%[2]d" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="%[1]d" dstbuf="i" dstoff="%[1]d" cnt="1" depid="-1" deps="-1" hasdep="1"/>
      <step s="1" type="rrcs" srcbuf="i" srcoff="%[2]d" dstbuf="i" dstoff="%[2]d" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="i" srcoff="%[1]d" dstbuf="i" dstoff="%[1]d" cnt="1" depid="0" deps="0" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="0" depid="0" deps="0" hasdep="0"/>
    </tb>
  </gpu>
`, g, 1-g)
	}
	text.WriteString("</algo>\n")
	s := mustParse(t, text.String())
	if st := s.GPUs[0].TBs[0].Steps[2]; st.DepID != 0 || st.Deps != 0 {
		t.Fatalf("step 2 depends on tb %d step %d, want tb 0 step 0", st.DepID, st.Deps)
	}
	if back := mustParse(t, xmlOf(t, s)); back.GPUs[0].TBs[0].Steps[2].DepID != 0 {
		t.Errorf("written back without its depid")
	}
	register(t, s, "own_dependency")
	n := network(t)
	for _, count := range []int{2, 7, 1000} {
		if _, err := n.Simulate(simtest.Case{Collective: "allreduce", Algorithm: "own_dependency", World: 2, Bytes: 4 * count, Data: true}); err != nil {
			t.Errorf("count %d: %v", count, err)
		}
		runRounds(t, n, s, "allreduce", 2, count)
	}
}

// TestDeadlockNamesSteps: a schedule whose threadblocks wait on each
// other across GPUs is reported at load with the step each one waits on.
func TestDeadlockNamesSteps(t *testing.T) {
	// Each GPU receives before it sends: nobody sends first.
	text := strings.NewReplacer(
		`<step s="0" type="s"`, `<step s="0" type="rrc"`,
		`<step s="1" type="rrc"`, `<step s="1" type="s"`).Replace(good)
	_, err := schedule.Parse("f.xml", []byte(text))
	for _, want := range []string{"deadlocks", "gpu 0 tb 0 step 0 (rrc, line 4) waits for a message from gpu 1", "gpu 1 tb 0 step 0 (rrc, line 10) waits for a message from gpu 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// FuzzParse: no input makes the reader panic, and what it accepts it
// writes back to a file it reads the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schedule.Parse("f.xml", data)
		if err != nil {
			return
		}
		var b strings.Builder
		if err := s.WriteXML(&b); err != nil {
			t.Fatal(err)
		}
		back, err := schedule.Parse("f.xml", []byte(b.String()))
		if err != nil {
			t.Fatalf("the writer's output does not read back: %v\n%s", err, b.String())
		}
		var b2 strings.Builder
		if err := back.WriteXML(&b2); err != nil {
			t.Fatal(err)
		}
		if b.String() != b2.String() {
			t.Fatalf("the round trip changed the schedule:\n%s\n%s", b.String(), b2.String())
		}
	})
}

// TestOutOfPlaceDefault: msccl-tools writes no outofplace attribute; a
// schedule it wrote in place is run in place.
func TestOutOfPlaceDefault(t *testing.T) {
	for _, c := range []struct {
		attrs      string
		outOfPlace bool
	}{
		{`inplace="1"`, false},
		{`inplace="0"`, true},
		{`inplace="1" outofplace="1"`, true},
		{`inplace="0" outofplace="0"`, false},
	} {
		s, err := schedule.Parse("f.xml", []byte(strings.Replace(good, `inplace="1"`, c.attrs, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if s.OutOfPlace != c.outOfPlace {
			t.Errorf("%s: OutOfPlace %v, want %v", c.attrs, s.OutOfPlace, c.outOfPlace)
		}
	}
}
