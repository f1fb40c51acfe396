package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

func TestVariants(t *testing.T) {
	// ring takes neither parameter; auto none either.
	s, err := Parse("v.toml", []byte(strings.Replace(good, `["ring"]`, `["ring", "auto"]`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Parse("v.toml", []byte(strings.Replace(good, `["ring"]`, `["ring", "pipelined_ring", "hierarchical"]`, 1)+
		`params = { segment = ["512KiB", "2 MiB", 65536], group = [2, 4] }
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sweeps[0].Variants; len(got) != 2 || got[0].Name != "ring" || got[0].Params != nil || got[1].Name != "auto" {
		t.Errorf("ring alone: variants %+v", got)
	}
	var names []string
	for _, v := range s2.Sweeps[0].Variants {
		names = append(names, v.Name)
	}
	want := []string{"ring",
		"pipelined_ring(segment=512KiB)", "pipelined_ring(segment=2MiB)", "pipelined_ring(segment=65536)",
		"hierarchical(group=2)", "hierarchical(group=4)"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("variants %q, want %q", names, want)
	}
	if v := s2.Sweeps[0].Variants[2]; v.Params["segment"] != 2<<20 || len(v.Params) != 1 {
		t.Errorf("variant %s params %v", v.Name, v.Params)
	}
	if p := s2.Sweeps[0].Params["group"]; len(p) != 2 || p[1] != (ParamValue{4, "4"}) {
		t.Errorf("params %v", s2.Sweeps[0].Params)
	}
}

// TestVariantsOdometer checks the order of the combinations of two
// parameters of one algorithm: the first by name varies slowest.
func TestVariantsOdometer(t *testing.T) {
	got := variants(nil, nil)
	if got != nil {
		t.Errorf("no algorithms: %v", got)
	}
	s, err := Parse("v.toml", []byte(strings.Replace(good, `algorithms = ["ring"]`, `algorithms = ["bucketed"]`, 1)+`params = { tensors = [1, 8] }
`))
	if err != nil {
		t.Fatal(err)
	}
	sw := s.Sweeps[0]
	a := sw.Algorithms[0]
	a2 := *a
	a2.Params = map[string]int{"x": 1, "y": 2}
	vs := variants([]*algos.Algorithm{&a2}, map[string][]ParamValue{
		"x": {{1, "1"}, {2, "2"}}, "y": {{3, "3KiB"}, {4, "4"}, {5, "5"}}, "z": {{9, "9"}}})
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	want := "bucketed(x=1,y=3KiB) bucketed(x=1,y=4) bucketed(x=1,y=5) bucketed(x=2,y=3KiB) bucketed(x=2,y=4) bucketed(x=2,y=5)"
	if strings.Join(names, " ") != want {
		t.Errorf("variants %q, want %q", strings.Join(names, " "), want)
	}
}

func TestDTypesAndRepeat(t *testing.T) {
	s, err := Parse("d.toml", []byte(strings.Replace(good, `dtype = "f32"`, `dtype = ["f32", "f64", "bf16"]`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sweeps[0].DTypes; !reflect.DeepEqual(got, []device.DType{device.F32, device.F64, device.BF16}) {
		t.Errorf("dtypes %v", got)
	}
	if s.Sweeps[0].Repeat != 1 {
		t.Errorf("default repeat %d", s.Sweeps[0].Repeat)
	}
	for _, tt := range []struct{ src, msg string }{
		{strings.Replace(good, `dtype = "f32"`, `dtype = ["f32", "f32"]`, 1), `dtype "f32" is listed twice`},
		{strings.Replace(good, `dtype = "f32"`, `dtype = ["f32", "f128"]`, 1), `unknown dtype "f128"`},
		{strings.Replace(good, `dtype = "f32"`, `dtype = []`, 1), `empty list`},
		// 1028 is a whole number of f32 but not of f64.
		{strings.Replace(strings.Replace(good, `dtype = "f32"`, `dtype = ["f32", "f64"]`, 1), "1024", "1028", 1), "1028: not a multiple of the f64 element size"},
		{good + "repeat = 3\n", "the network draws no random numbers"},
		{good + "repeat = 0\n", "out of range"},
		{strings.Replace(good, `["ring"]`, `["pipelined_ring"]`, 1) + `params = { segment = [] }` + "\n", "empty list"},
		{strings.Replace(good, `["ring"]`, `["pipelined_ring"]`, 1) + `params = { segment = ["1KiB", 1024] }` + "\n", "1024 is listed twice"},
		{strings.Replace(good, `["ring"]`, `["pipelined_ring"]`, 1) + `params = { segment = ["1KiB", true] }` + "\n", "element 2: want a whole number or a size"},
	} {
		_, err := Parse("d.toml", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("error %v, want one saying %q", err, tt.msg)
		}
	}
}

func TestTuningKey(t *testing.T) {
	dir := t.TempDir()
	table := `version = 1
[[collective.allreduce.rule]]
algorithm = "ring"
`
	if err := os.WriteFile(filepath.Join(dir, "t.toml"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.toml"), []byte("version = 1\n[[collective.allreduce.rule]]\nalgorithm = \"auto\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.toml")
	src := strings.Replace(good, "seed = 1\n", "seed = 1\ntuning = \"t.toml\"\n", 1)
	s, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Tuning == nil || s.TuningFile != "t.toml" || s.Sweeps[0].Tuning != s.Tuning {
		t.Fatalf("tuning %v %q, sweep's %v", s.Tuning, s.TuningFile, s.Sweeps[0].Tuning)
	}
	plain, _ := Parse(file, []byte(good))
	if plain.Hash == s.Hash || len(s.Hash) != 64 {
		t.Errorf("hashes %q and %q", plain.Hash, s.Hash)
	}
	again, _ := Parse(file, []byte(src))
	if again.Hash != s.Hash {
		t.Error("the same scenario hashes differently")
	}
	// A sweep's own table wins over the scenario's.
	s, err = Parse(file, []byte(good+`tuning = "t.toml"`+"\n"))
	if err != nil || s.Tuning != nil || s.Sweeps[0].Tuning == nil {
		t.Errorf("sweep tuning: %v, %v", s, err)
	}
	for _, tt := range []struct{ key, want string }{
		{`tuning = "missing.toml"`, "s.toml:18: sweep[0].tuning: cannot read tuning table"},
		{`tuning = "bad.toml"`, "s.toml:18: sweep[0].tuning: bad tuning table: "},
		{`tuning = 3`, "s.toml:18: sweep[0].tuning: want the path of a tuning table"},
	} {
		_, err := Parse(file, []byte(good+tt.key+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.key, err, tt.want)
		}
	}
}
