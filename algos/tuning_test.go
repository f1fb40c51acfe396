package algos_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

const mib = 1 << 20

// TestNexarTableBoundaries checks that nexar's table picks what nexar's
// dispatcher picks on each side of its thresholds: 8 MiB, 8 ranks, and
// one element per rank.
func TestNexarTableBoundaries(t *testing.T) {
	nexar := map[string]int{"segment": 2 * mib}
	for _, c := range []struct {
		world, bytes, count int
		want                string
		params              map[string]int
	}{
		{9, 8*mib - 1, 8*mib - 1, "halving_doubling", nil}, // u8: bytes = count
		{9, 8 * mib, 8 * mib, "pipelined_ring", nexar},
		{9, 8 * mib, 2 * mib, "pipelined_ring", nexar},
		{2, 8 * mib, 2 * mib, "pipelined_ring", nexar},
		{1024, 1 << 30, 1 << 28, "pipelined_ring", nexar},
		{8, 8*mib - 4, 2*mib - 1, "ring", nil},
		{8, 4, 1, "ring", nil},
		{1, 0, 0, "ring", nil},
		{9, 8*mib - 4, 2*mib - 1, "halving_doubling", nil},
		{9, 36, 9, "halving_doubling", nil}, // count = world
		{9, 32, 8, "ring", nil},             // count = world - 1
		{100, 396, 99, "ring", nil},
		{100, 400, 100, "halving_doubling", nil},
		{9, 0, 0, "ring", nil},
	} {
		ch, err := algos.DefaultTuning().Select("allreduce", c.world, c.bytes, c.count)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Algorithm != c.want || !reflect.DeepEqual(ch.Params, c.params) {
			t.Errorf("world %d, %d bytes, %d elements: %s %v (%s), want %s %v",
				c.world, c.bytes, c.count, ch.Algorithm, ch.Params, ch.From, c.want, c.params)
		}
	}
}

// TestAutoRunsTheChoice checks the dispatcher end to end: "auto" takes
// exactly as long as the algorithm nexar's table names, on each side of
// the boundaries (f32, so count = bytes/4).
func TestAutoRunsTheChoice(t *testing.T) {
	auto := arCatalogue(t, "auto", nil)
	for _, c := range []struct {
		world, bytes int
		want         allreduceFunc
	}{
		{9, 8*mib - 4, algos.HalvingDoublingAllreduce},
		{9, 8 * mib, pipelined2MiB},
		{8, 8*mib - 4, algos.RingAllreduce},
		{9, 32, algos.RingAllreduce}, // 8 elements on 9 ranks
		{9, 36, algos.HalvingDoublingAllreduce},
	} {
		got, want := simTime(t, worked, c.world, c.bytes, auto), simTime(t, worked, c.world, c.bytes, c.want)
		if got != want {
			t.Errorf("world %d, %d bytes: auto took %g s, nexar's choice %g s", c.world, c.bytes, got, want)
		}
	}
	// The ring and halving-doubling differ in time at these sizes, so the
	// comparison above can tell them apart.
	if simTime(t, worked, 9, 36, algos.RingAllreduce) == simTime(t, worked, 9, 36, algos.HalvingDoublingAllreduce) {
		t.Fatal("ring and halving-doubling take the same time: the test cannot tell them apart")
	}
}

func pipelined2MiB(ctx context.Context, l algos.Link, buf device.Buffer, dt device.DType, op device.Op) error {
	return algos.PipelinedRingAllreduce(ctx, l, buf, dt, op, 2*mib)
}

// TestAutoTakesATable checks that a Call's Tuning replaces the default,
// with the table's parameters and the call's own for the others.
func TestAutoTakesATable(t *testing.T) {
	table, err := algos.ParseTuning("test.toml", []byte(`version = 1
[[collective.allreduce.rule]]
algorithm = "hierarchical"
params = { group = 3 }
`))
	if err != nil {
		t.Fatal(err)
	}
	coll, _ := algos.Lookup("allreduce")
	auto, _ := coll.Algorithm("auto")
	got := simTime(t, worked, 12, 12*64, func(ctx context.Context, l algos.Link, buf device.Buffer, dt device.DType, op device.Op) error {
		return auto.Run(ctx, l, algos.Call{Buf: buf, DType: dt, Op: op, Tuning: table, Params: map[string]int{"group": 6}})
	})
	want := simTime(t, worked, 12, 12*64, func(ctx context.Context, l algos.Link, buf device.Buffer, dt device.DType, op device.Op) error {
		return algos.HierarchicalAllreduce(ctx, l, buf, dt, op, 3)
	})
	if got != want {
		t.Errorf("auto with a hierarchical group=3 table took %g s, hierarchical group=3 %g s", got, want)
	}
}

// richTable uses every feature of the format.
const richTable = `# a table as nexar-sim might write it
version = 1
description = "derived on \"worked\"\tα = 5 µs"
source = "nexar-sim derive worked.toml"

[transport]
bulk_threshold = 12345

[[collective.allreduce.crossover]]
world = 16
[[collective.allreduce.crossover.step]]
from_bytes = 0
algorithm = "recursive_doubling"
[[collective.allreduce.crossover.step]]
from_bytes = 65536
algorithm = "halving_doubling"
[[collective.allreduce.crossover.step]]
from_bytes = 16777216
algorithm = "pipelined_ring"
params = { segment = 1048576 }

[[collective.allreduce.crossover]]
min_world = 17
max_world = 64
[[collective.allreduce.crossover.step]]
from_bytes = 0
algorithm = "hierarchical"
params = { group = 4 }

[[collective.allreduce.rule]]
algorithm = "direct"
max_bytes = 64
max_world = 4
world_power_of_two = true

[[collective.allreduce.rule]]
algorithm = "bucketed"
params = { tensors = 3 }
min_bytes = 65
min_world = 2
count_below_world = false

[[collective.allreduce.rule]]
algorithm = "ring"
`

func TestTuningSelect(t *testing.T) {
	table, err := algos.ParseTuning("rich.toml", []byte(richTable))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		world, bytes, count int
		want, from          string
	}{
		{16, 0, 0, "recursive_doubling", "crossover 1 step 1"},
		{16, 65535, 65535, "recursive_doubling", "crossover 1 step 1"},
		{16, 65536, 65536, "halving_doubling", "crossover 1 step 2"},
		{16, 1 << 30, 1 << 30, "pipelined_ring", "crossover 1 step 3"},
		{17, 4, 1, "hierarchical", "crossover 2 step 1"},
		{64, 4, 1, "hierarchical", "crossover 2 step 1"},
		{4, 64, 16, "direct", "rule 1"},
		{4, 65, 65, "bucketed", "rule 2"},
		{3, 64, 16, "ring", "rule 3"},  // not a power of two
		{65, 64, 64, "ring", "rule 3"}, // count < world
		{65, 640, 160, "bucketed", "rule 2"},
		{1, 640, 160, "ring", "rule 3"}, // below min_world
	} {
		ch, err := table.Select("allreduce", c.world, c.bytes, c.count)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Algorithm != c.want || ch.From != c.from {
			t.Errorf("world %d, %d bytes, %d elements: %s (%s), want %s (%s)", c.world, c.bytes, c.count, ch.Algorithm, ch.From, c.want, c.from)
		}
	}
	if _, err := table.Select("broadcast", 4, 4, 1); err == nil {
		t.Error("a collective without an entry: no error")
	}
	strict, err := algos.ParseTuning("strict.toml", []byte("version = 1\n[[collective.allreduce.rule]]\nalgorithm = \"ring\"\nmin_world = 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Select("allreduce", 2, 4, 1); err == nil {
		t.Error("no rule matches: no error")
	}
}

// TestTuningRoundTrip writes tables and reads them back.
func TestTuningRoundTrip(t *testing.T) {
	for name, text := range map[string]string{"nexar": "", "rich": richTable} {
		var table *algos.Tuning
		if text == "" {
			table = algos.DefaultTuning()
		} else {
			var err error
			if table, err = algos.ParseTuning(name, []byte(text)); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		if _, err := table.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		back, err := algos.ParseTuning(name+" written", out.Bytes())
		if err != nil {
			t.Fatalf("%s: reading back what WriteTo wrote: %v\n%s", name, err, out.String())
		}
		if !reflect.DeepEqual(back, table) {
			t.Errorf("%s: round trip changed the table:\n%+v\n%+v", name, table, back)
		}
		var again bytes.Buffer
		back.WriteTo(&again)
		if again.String() != out.String() {
			t.Errorf("%s: writing is not deterministic:\n%s\n%s", name, out.String(), again.String())
		}
	}
}

// TestTuningTransport reads the [transport] table in each of its forms and
// writes it back.
func TestTuningTransport(t *testing.T) {
	for _, c := range []struct {
		text string
		want *algos.Thresholds
	}{
		{"", nil},
		{"[transport]\nbulk_threshold = 16384\n", &algos.Thresholds{Bulk: 16384}},
		{"[transport]\nbulk_threshold = 0\n", &algos.Thresholds{Bulk: 0}},
		{"[transport]\nbulk_threshold = \"never\"\n", &algos.Thresholds{Bulk: algos.BulkNever}},
		{"transport = { bulk_threshold = 1 }\n", &algos.Thresholds{Bulk: 1}},
		{"transport.bulk_threshold = 9007199254740993\n", &algos.Thresholds{Bulk: 9007199254740993}}, // above 2^53: kept exact
	} {
		table, err := algos.ParseTuning("t.toml", []byte("version = 1\n"+c.text))
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if !reflect.DeepEqual(table.Transport, c.want) {
			t.Errorf("%q: transport %+v, want %+v", c.text, table.Transport, c.want)
		}
		var out bytes.Buffer
		table.WriteTo(&out)
		back, err := algos.ParseTuning("written.toml", out.Bytes())
		if err != nil {
			t.Fatalf("%q: reading back %q: %v", c.text, out.String(), err)
		}
		if !reflect.DeepEqual(back.Transport, c.want) {
			t.Errorf("%q: written as %q, read back as %+v", c.text, out.String(), back.Transport)
		}
		if has := strings.Contains(out.String(), "[transport]"); has != (c.want != nil) {
			t.Errorf("%q: written as %q", c.text, out.String())
		}
	}
	// A table may hold only the transport: what nexar-sim writes for a
	// scenario whose sweeps have nothing to choose between.
	only := &algos.Tuning{Transport: &algos.Thresholds{Bulk: 4096}}
	if err := only.Validate(); err != nil {
		t.Error(err)
	}
	if err := (&algos.Tuning{Transport: &algos.Thresholds{Bulk: -2}}).Validate(); err == nil {
		t.Error("bulk threshold -2: no error")
	}
}

func TestLoadTuning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.toml")
	if err := os.WriteFile(path, []byte(richTable), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := algos.LoadTuning(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("version = 1\n\n[[collective.allreduce.rule]]\nalgorithm = \"rign\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := algos.LoadTuning(path)
	var te *algos.TuningError
	if !errors.As(err, &te) || te.File != path || te.Line != 4 || !strings.HasPrefix(err.Error(), path+":4: ") {
		t.Errorf("got %v, want a *TuningError at %s:4", err, path)
	}
	if _, err := algos.LoadTuning(filepath.Join(t.TempDir(), "missing.toml")); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestTuningErrors checks that each mistake is reported on its line.
func TestTuningErrors(t *testing.T) {
	head := "version = 1\n"
	rule := "[[collective.allreduce.rule]]\n"
	for _, c := range []struct {
		text string
		line int
		msg  string
	}{
		{"", 0, "no version"},
		{"version = 2\n", 1, "version 2"},
		{"version = \"1\"\n", 1, "version"},
		{"version = 1\nversion = 1\n", 2, "already been defined"},   // from the TOML parser
		{head + "[collective.allreduce x]\n", 2, "table name"},      // syntax
		{head + "colective = 1\n", 2, `unknown key "colective"`},    // typo
		{head + "[collective.allreduc]\n", 2, `unknown collective`}, // not in the catalogue
		{head + rule + "algorithm = \"ring\"\n" + rule + "algorithm = \"rign\"\n", 5, `unknown allreduce algorithm "rign"`},
		{head + rule + "algorithm = \"auto\"\n", 3, "cannot select"},
		{head + rule + "min_bytes = 4\n", 2, "no algorithm"},
		{head + rule + "algorithm = \"ring\"\n\nmax_wrld = 8\n", 5, `unknown key "max_wrld"`},
		{head + rule + "algorithm = \"ring\"\nmax_world = 0\n", 4, "below 1"},
		{head + rule + "algorithm = \"ring\"\nmin_bytes = -1\n", 4, "below 0"},
		{head + rule + "algorithm = \"ring\"\nmin_bytes = 9\nmax_bytes = 8\n", 5, "never matches"},
		{head + rule + "algorithm = \"ring\"\nmin_world = 9\nmax_world = 8\n", 5, "never matches"},
		{head + rule + "algorithm = \"ring\"\ncount_below_world = 1\n", 4, "true or false"},
		{head + rule + "algorithm = \"ring\"\nparams = { segment = 4 }\n", 4, `no parameter "segment"`},
		{head + rule + "algorithm = \"pipelined_ring\"\nparams = { segment = 1.5 }\n", 4, "integers"},
		{head + rule + "algorithm = \"pipelined_ring\"\n\nparams.segmnt = 4\n", 5, `no parameter "segmnt"`},
		{head + rule + "algorithm = 7\n", 3, "want a string"},
		{head + "collective.allreduce.rule = 3\n", 2, "array of tables"},
		{head + "collective.allreduce.rule = [3]\n", 2, "want a table"},
		{head + "[[collective.allreduce.crossover]]\nworld = 4\n", 2, "at least one step"},
		{head + "[[collective.allreduce.crossover]]\n[[collective.allreduce.crossover.step]]\nfrom_bytes = 0\nalgorithm = \"ring\"\n", 2, "needs world"},
		{head + "[[collective.allreduce.crossover]]\nworld = 4\nmin_world = 2\n", 4, "not both"},
		{head + "[[collective.allreduce.crossover]]\nmin_world = 8\nmax_world = 4\n[[collective.allreduce.crossover.step]]\nfrom_bytes = 0\nalgorithm = \"ring\"\n", 2, "empty"},
		{head + "[[collective.allreduce.crossover]]\nworld = 4\n[[collective.allreduce.crossover.step]]\nfrom_bytes = 1\nalgorithm = \"ring\"\n", 5, "from 0 bytes"},
		{head + "[[collective.allreduce.crossover]]\nworld = 4\n" +
			"[[collective.allreduce.crossover.step]]\nfrom_bytes = 0\nalgorithm = \"ring\"\n" +
			"[[collective.allreduce.crossover.step]]\nfrom_bytes = 0\nalgorithm = \"direct\"\n", 8, "ascending"},
		{head + "[[collective.allreduce.crossover]]\nworld = 4\n" +
			"[[collective.allreduce.crossover.step]]\nalgorithm = \"ring\"\n", 4, "no from_bytes"},
		{head + "[[collective.allreduce.crossover]]\nworld = 4\n" +
			"[[collective.allreduce.crossover.step]]\nfrom_bytes = 0\nalgorithm = \"ring\"\nto_bytes = 5\n", 7, `unknown key "to_bytes"`},
		{head + "\n[transport]\nbulk_threshold = -1\n", 4, "below 0"},
		{head + "[transport]\nbulk_threshold = \"16KiB\"\n", 3, `"never"`},
		{head + "[transport]\nbulk_threshold = 1.5\n", 3, "want an integer"},
		{head + "[transport]\nbulk_treshold = 4\n", 3, `unknown key "bulk_treshold"`},
		{head + "\n[transport]\n", 3, "no bulk_threshold"},
		{head + "transport = 3\n", 2, "want a table"},
		{head + "[transport]\nbulk_threshold = 1\n" + rule + "algorithm = \"rign\"\n", 5, "rign"},
		{head + "description = \"\"\"\nmany\n[[lines]]\n\"\"\"\n" + rule + "algorithm = \"rign\"\n", 7, "rign"}, // a multi-line string is skipped
	} {
		_, err := algos.ParseTuning("t.toml", []byte(c.text))
		var te *algos.TuningError
		if !errors.As(err, &te) {
			t.Errorf("%q: got %v, want a *TuningError", c.text, err)
			continue
		}
		if te.Line != c.line || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%q:\n got line %d: %s\nwant line %d: ...%s...", c.text, te.Line, te.Msg, c.line, c.msg)
		}
	}
}

// TestTuningValidate checks tables built in code.
func TestTuningValidate(t *testing.T) {
	good := &algos.Tuning{Collectives: []algos.TuningCollective{{Name: "allreduce",
		Rules: []algos.Rule{{Algorithm: "pipelined_ring", Params: map[string]int{"segment": 1 << 20}, MinBytes: 1 << 20}, {Algorithm: "ring"}}}}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []algos.Tuning{
		{Collectives: []algos.TuningCollective{{Name: "allreduce", Rules: []algos.Rule{{Algorithm: "ring", MaxWorld: -1}}}}},
		{Collectives: []algos.TuningCollective{{Name: "allreduce", Crossovers: []algos.Crossover{{MinWorld: 0, Steps: []algos.Step{{Algorithm: "ring"}}}}}}},
		{Collectives: []algos.TuningCollective{{Name: "allreduce"}, {Name: "allreduce"}}},
		{Collectives: []algos.TuningCollective{{Name: "nonesuch"}}},
		// Lossy: a table picks only exact algorithms.
		{Collectives: []algos.TuningCollective{{Name: "allreduce", Rules: []algos.Rule{{Algorithm: "compressed_topk"}}}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// FuzzParseTuning feeds the parser arbitrary text: it must not panic, and
// whatever it accepts must survive a round trip through WriteTo unchanged.
func FuzzParseTuning(f *testing.F) {
	var nexar bytes.Buffer
	algos.DefaultTuning().WriteTo(&nexar)
	f.Add(nexar.Bytes())
	f.Add([]byte(richTable))
	f.Add([]byte("version = 1\n[[collective.allreduce.rule]]\nalgorithm = 'ring'\nparams = {}\n"))
	f.Add([]byte("version = 1\ncollective.allreduce.rule = [{algorithm = \"direct\", max_bytes = 8}]\n"))
	f.Add([]byte("version = 1\n[collective.\"allreduce\".crossover]\n"))
	f.Add([]byte("version = 1\n[transport]\nbulk_threshold = \"never\"\n"))
	f.Add([]byte("version = 1\ntransport = { bulk_threshold = 0 }\n[[collective.allreduce.rule]]\nalgorithm = \"ring\"\n"))
	f.Add([]byte("version = 1\n[transport]\nbulk_threshold = -1\n"))
	f.Add([]byte("[[a.b]]\n[[a.b.c]]\nx = [\n1,\n]\ny = '''\n[[z]]\n'''\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		table, err := algos.ParseTuning("fuzz.toml", data)
		if err != nil {
			var te *algos.TuningError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TuningError", err)
			}
			return
		}
		var out bytes.Buffer
		if _, err := table.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		back, err := algos.ParseTuning("written.toml", out.Bytes())
		if err != nil {
			t.Fatalf("reading back %q: %v", out.String(), err)
		}
		if !reflect.DeepEqual(back, table) {
			t.Fatalf("round trip changed the table:\n%+v\n%+v", table, back)
		}
	})
}
