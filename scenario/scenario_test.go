package scenario

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// good is a valid scenario; the bad cases below edit it.
const good = `name = "example"
seed = 1

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 3, 8, 64]
bytes = [0, 1024, 8388608]
dtype = "f32"
op = "sum"
data = "phantom"
`

func TestParseGood(t *testing.T) {
	s, err := Parse("good.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "example" || s.Seed != 1 || s.File != "good.toml" {
		t.Errorf("name, seed, file = %q, %d, %q", s.Name, s.Seed, s.File)
	}
	want := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}
	if s.Network.Model != "alpha-beta" || s.Network.Sim != want || s.Network.Line != 4 {
		t.Errorf("network = %+v, want alpha-beta %+v on line 4", s.Network, want)
	}
	if len(s.Sweeps) != 1 {
		t.Fatalf("%d sweeps, want 1", len(s.Sweeps))
	}
	sw := s.Sweeps[0]
	if sw.Collective.Name != "allreduce" || len(sw.Algorithms) != 1 || sw.Algorithms[0].Name != "ring" {
		t.Errorf("collective %s, algorithms %v", sw.Collective.Name, sw.Algorithms)
	}
	if !reflect.DeepEqual(sw.World, []int{2, 3, 8, 64}) || !reflect.DeepEqual(sw.Bytes, []int{0, 1024, 8388608}) {
		t.Errorf("world %v, bytes %v", sw.World, sw.Bytes)
	}
	if sw.DTypes[0] != device.F32 || sw.Op != device.Sum || sw.Data != Phantom || sw.Line != 10 || sw.Index != 0 {
		t.Errorf("dtype %v op %v data %v line %d index %d", sw.DTypes[0], sw.Op, sw.Data, sw.Line, sw.Index)
	}
	if sw.KeyLine("world") != 13 || sw.KeyLine("root") != 10 || sw.Key("world") != "sweep[0].world" {
		t.Errorf("KeyLine(world) = %d, KeyLine(root) = %d, Key(world) = %q", sw.KeyLine("world"), sw.KeyLine("root"), sw.Key("world"))
	}
}

func TestParseDefaultsAndForms(t *testing.T) {
	src := `name = "forms"
[network]
model = "alpha-beta"
latency = "0"
bandwidth = "100Gbit/s"

[[sweep]]
collective = "allreduce"
algorithms = "ring"
world = "2..16 x2"
bytes = "1KiB..4KiB"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [1, "3..9 +3", 64]
bytes = [
  0,          # zero
  "8MiB",
  "1..2 x2",
  1e3,
]
dtype = "u8"
op = "max"
data = "host"
`
	s, err := Parse("forms.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 1 {
		t.Errorf("default seed %d, want 1", s.Seed)
	}
	ab := s.Network.Sim.(sim.AlphaBeta)
	if ab.Latency != 0 || ab.Bandwidth != 12.5e9 || !math.IsInf(ab.ReduceBandwidth, 1) {
		t.Errorf("network %+v, want free reductions", ab)
	}
	a, b := s.Sweeps[0], s.Sweeps[1]
	if !reflect.DeepEqual(a.World, []int{2, 4, 8, 16}) || !reflect.DeepEqual(a.Bytes, []int{1024, 2048, 4096}) {
		t.Errorf("sweep 0: world %v bytes %v", a.World, a.Bytes)
	}
	if a.DTypes[0] != device.F32 || a.Op != device.Sum || a.Data != Phantom || a.Root != 0 {
		t.Errorf("sweep 0 defaults: %v %v %v %d", a.DTypes[0], a.Op, a.Data, a.Root)
	}
	if !reflect.DeepEqual(b.World, []int{1, 3, 6, 9, 64}) || !reflect.DeepEqual(b.Bytes, []int{0, 8 << 20, 1, 2, 1000}) {
		t.Errorf("sweep 1: world %v bytes %v", b.World, b.Bytes)
	}
	if b.DTypes[0] != device.U8 || b.Op != device.Max || b.Data != Host || b.Index != 1 || b.Line != 13 {
		t.Errorf("sweep 1: %v %v %v index %d line %d", b.DTypes[0], b.Op, b.Data, b.Index, b.Line)
	}
	if b.KeyLine("bytes") != 17 || b.KeyLine("dtype") != 23 {
		t.Errorf("sweep 1 lines: bytes %d, dtype %d", b.KeyLine("bytes"), b.KeyLine("dtype"))
	}
}

// edit returns good with the line starting with prefix replaced by repl
// (removed if repl is empty), or with repl appended if prefix is empty.
func edit(prefix, repl string) string {
	if prefix == "" {
		return good + repl + "\n"
	}
	lines := strings.Split(good, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			if repl == "" {
				return strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
			}
			lines[i] = repl
			return strings.Join(lines, "\n")
		}
	}
	panic("no line " + prefix)
}

// badCases are bad scenarios, each with a problem it must report: on
// which line, about which key, saying what.
var badCases = []struct {
	name string
	src  string
	line int
	key  string
	msg  string
}{
	{"syntax", edit("world =", "world = [2, 3"), 14, "", "TOML syntax"}, // the parser notices on the next line
	{"syntax unterminated string", edit("dtype =", `dtype = "f32`), 15, "", "TOML syntax"},
	{"duplicate key", edit("op =", `dtype = "f64"`), 16, "", "TOML syntax"},
	{"unknown top key", edit("seed =", "sead = 1"), 2, "sead", `unknown key in the top level; did you mean "seed"?`},
	{"unknown network key", edit("latency =", `latncy = "5us"`), 6, "network.latncy", `did you mean "latency"?`},
	{"unknown sweep key", edit("data =", `dat = "host"`), 17, "sweep[0].dat", `unknown key in [[sweep]] 1; did you mean "data"?`},
	{"unknown model", edit("model =", `model = "logp"`), 5, "network.model", `unknown network model "logp" (want one of alpha-beta, flow, loggp, realnet)`},
	{"unknown collective", edit("collective =", `collective = "allreduse"`), 11, "sweep[0].collective", `unknown collective "allreduse"`},
	{"unknown algorithm", edit("algorithms =", `algorithms = ["ring", "rign"]`), 12, "sweep[0].algorithms", `unknown allreduce algorithm "rign"`},
	{"duplicate algorithm", edit("algorithms =", `algorithms = ["ring", "ring"]`), 12, "sweep[0].algorithms", `"ring" is listed twice`},
	{"unknown dtype", edit("dtype =", `dtype = "float"`), 15, "sweep[0].dtype", `unknown dtype "float"`},
	{"unknown op", edit("op =", `op = "avg"`), 16, "sweep[0].op", `unknown op "avg"`},
	{"unknown data", edit("data =", `data = "gpu"`), 17, "sweep[0].data", `unknown data "gpu" (want phantom or host)`},
	{"negative size", edit("bytes =", "bytes = [0, -4]"), 14, "sweep[0].bytes", "element 2: size -4 is negative"},
	{"negative size string", edit("bytes =", `bytes = ["-4KiB"]`), 14, "sweep[0].bytes", "negative"},
	{"non-numeric size", edit("bytes =", `bytes = [0, "lots"]`), 14, "sweep[0].bytes", `element 2: "lots" is not a size`},
	{"size of wrong type", edit("bytes =", `bytes = [true]`), 14, "sweep[0].bytes", "got the boolean true"},
	{"fractional size", edit("bytes =", `bytes = [2.5]`), 14, "sweep[0].bytes", "not a whole number of bytes"},
	{"bad range", edit("bytes =", `bytes = "8KiB..1KiB x2"`), 14, "sweep[0].bytes", "above end"},
	{"empty sizes", edit("bytes =", `bytes = []`), 14, "sweep[0].bytes", "empty list"},
	{"world zero", edit("world =", "world = [0, 8]"), 13, "sweep[0].world", "world size 0 is out of range"},
	{"world negative", edit("world =", "world = [-2]"), 13, "sweep[0].world", "world size -2 is out of range"},
	{"world float", edit("world =", "world = [2.0]"), 13, "sweep[0].world", "got the float 2"},
	{"world huge", edit("world =", "world = [20000000]"), 13, "sweep[0].world", "out of range"},
	{"bytes not whole elements", edit("bytes =", "bytes = [0, 1022, 1024]"), 14, "sweep[0].bytes", "1022: not a multiple of the f32 element size (4 bytes)"},
	{"bytes not whole f64", strings.Replace(edit("dtype =", `dtype = "f64"`), "1024,", "1028,", 1), 14, "sweep[0].bytes", "not a multiple of the f64 element size (8 bytes)"},
	{"missing name", edit("name =", ""), 1, "name", "missing required key in the top level"},
	{"missing network", strings.Replace(good, "[network]", "[netwerk]", 1), 1, "network", "missing required key"},
	{"missing model", edit("model =", ""), 4, "network.model", "missing required key in [network]"},
	{"missing latency", edit("latency =", ""), 4, "network.latency", "missing required key"},
	{"missing bandwidth", edit("bandwidth =", ""), 4, "network.bandwidth", "missing required key"},
	{"missing sweep", strings.Split(good, "[[sweep]]")[0], 1, "sweep", "at least one [[sweep]]"},
	{"sweep as table", strings.Replace(good, "[[sweep]]", "[sweep]", 1), 10, "sweep", "want an array of tables"},
	{"missing collective", edit("collective =", ""), 10, "sweep[0].collective", "missing required key in [[sweep]] 1"},
	{"missing algorithms", edit("algorithms =", ""), 10, "sweep[0].algorithms", "missing required key"},
	{"missing world", edit("world =", ""), 10, "sweep[0].world", "missing required key"},
	{"missing bytes", edit("bytes =", ""), 10, "sweep[0].bytes", "missing required key"},
	{"latency without unit", edit("latency =", `latency = "5"`), 6, "network.latency", "missing unit"},
	{"latency number", edit("latency =", `latency = 5`), 6, "network.latency", "want a duration string"},
	{"latency negative", edit("latency =", `latency = "-5us"`), 6, "network.latency", "negative"},
	{"bandwidth bad unit", edit("bandwidth =", `bandwidth = "12.5Gb/s"`), 7, "network.bandwidth", `unknown unit "Gb/s"`},
	{"bandwidth zero", edit("bandwidth =", `bandwidth = "0GB/s"`), 7, "network.bandwidth", "positive"},
	{"reduce bandwidth bad", edit("reduce_bandwidth =", `reduce_bandwidth = "fast"`), 8, "network.reduce_bandwidth", "not a bandwidth"},
	{"seed negative", edit("seed =", "seed = -1"), 2, "seed", "out of range"},
	{"seed string", edit("seed =", `seed = "one"`), 2, "seed", "want a whole number"},
	{"name not string", edit("name =", "name = 3"), 1, "name", "want a string"},
	{"root negative", edit("", "root = -1"), 18, "sweep[0].root", "out of range"},
	{"unknown param", edit("", "params = { segment = 1 }"), 18, "sweep[0].params.segment", "unknown parameter"},
	{"params not table", edit("", "params = 3"), 18, "sweep[0].params", "want a table"},
}

func TestParseBad(t *testing.T) {
	for _, tt := range badCases {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("bad.toml", []byte(tt.src))
			if err == nil {
				t.Fatalf("no error; parsed %+v", s)
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %T %v, want Errors", err, err)
			}
			prefix := "bad.toml:" + strconv.Itoa(tt.line) + ": "
			if tt.key != "" {
				prefix += tt.key + ": "
			}
			found := false
			for _, e := range errs {
				if e.File == "bad.toml" && e.Line == tt.line && (tt.key == "" || e.Key == tt.key) && strings.Contains(e.Msg, tt.msg) &&
					strings.HasPrefix(e.Error(), prefix) {
					found = true
				}
			}
			if !found {
				t.Errorf("got\n%v\nwant an error starting %q, message containing %q", err, prefix, tt.msg)
			}
		})
	}
}

// TestParseAllProblems checks that one file with many problems reports
// every one of them, in line order.
func TestParseAllProblems(t *testing.T) {
	src := `name = "many"
colour = "blue"

[network]
model = "alpha-beta"
latency = "5 parsecs"
bandwidth = "12.5GB/s"
jitter = "1us"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "tree?"]
world = [0, 3]
bytes = [-1, 6, "big"]
dtype = "f32"
op = "avg"

[[sweep]]
collective = "allgather?"
algorithms = ["ring"]
world = [8]
bytes = [1024]
dtype = "f7"
`
	_, err := Parse("many.toml", []byte(src))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v, want Errors", err)
	}
	want := []string{
		"many.toml:2: colour: unknown key",
		"many.toml:6: network.latency: \"5 parsecs\" is not a duration",
		"many.toml:8: network.jitter: unknown key in [network] of model alpha-beta",
		"many.toml:12: sweep[0].algorithms: unknown allreduce algorithm \"tree?\"",
		"many.toml:13: sweep[0].world: element 1: world size 0",
		"many.toml:14: sweep[0].bytes: element 1: size -1 is negative",
		"many.toml:14: sweep[0].bytes: element 3: \"big\" is not a size",
		"many.toml:14: sweep[0].bytes: 6: not a multiple of the f32 element size",
		"many.toml:16: sweep[0].op: unknown op \"avg\"",
		"many.toml:19: sweep[1].collective: unknown collective \"allgather?\"",
		"many.toml:23: sweep[1].dtype: unknown dtype \"f7\"",
	}
	if len(errs) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(errs), len(want), err)
	}
	for i := range min(len(errs), len(want)) {
		if !strings.HasPrefix(errs[i].Error(), want[i]) {
			t.Errorf("error %d = %q, want prefix %q", i, errs[i].Error(), want[i])
		}
	}
	if got := err.Error(); strings.Count(got, "\n") != len(errs)-1 {
		t.Errorf("Errors.Error() has %d lines, want %d", strings.Count(got, "\n")+1, len(errs))
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil || s.File != path {
		t.Fatalf("Load = %v, %v", s, err)
	}
	missing := filepath.Join(dir, "missing.toml")
	_, err = Load(missing)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].File != missing || !strings.Contains(err.Error(), "cannot read scenario") {
		t.Fatalf("Load(missing) = %v, want one error naming the file", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "cannot read scenario") {
		t.Fatalf("Load(directory) = %v", err)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{"f.toml", 3, "network.latency", "bad"}, "f.toml:3: network.latency: bad"},
		{Error{"f.toml", 0, "", "cannot read"}, "f.toml: cannot read"},
		{Error{"f.toml", 7, "", "TOML syntax: x"}, "f.toml:7: TOML syntax: x"},
		{Error{"", 0, "", "bare"}, "bare"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
	if (Errors{}).Err() != nil {
		t.Error("empty Errors.Err() is not nil")
	}
}

func TestKeyLines(t *testing.T) {
	src := `# comment [not a table]
a = 1 # trailing
"quoted key" = 'x#y'
b.c = [ 1,
  2, # ] comment with a bracket
  3 ]
s = """
[fake]
x = 1
"""
t = '''
also fake = 2'''
e = "esc \" [ ]"

[tab]
k = {x = 1, y = [1,
 2]}
after = true

[[arr]]
v = 1
[arr.sub]
w = 2
[[arr]]
v = 2
  [[arr.items]]
  i = 1
  [[arr.items]]
  i = 2
[ "spaced" . "header" ]
z = 0
`
	want := map[string]int{
		"a": 2, "quoted key": 3, "b.c": 4, "s": 7, "t": 11, "e": 13,
		"tab": 15, "tab.k": 16, "tab.after": 18,
		"arr[0]": 20, "arr[0].v": 21, "arr[0].sub": 22, "arr[0].sub.w": 23,
		"arr[1]": 24, "arr[1].v": 25,
		"arr[1].items[0]": 26, "arr[1].items[0].i": 27, "arr[1].items[1]": 28, "arr[1].items[1].i": 29,
		"spaced.header": 30, "spaced.header.z": 31,
	}
	got := keyLines(src)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keyLines:\n got %v\nwant %v", got, want)
	}
	if n := lineOf(got, "tab.k.x"); n != 16 {
		t.Errorf("lineOf(tab.k.x) = %d, want 16 (its parent's)", n)
	}
	if n := lineOf(got, "arr[1].missing"); n != 24 {
		t.Errorf("lineOf(arr[1].missing) = %d, want 24 (the header)", n)
	}
	if n := lineOf(got, "nothing"); n != 0 {
		t.Errorf("lineOf(nothing) = %d, want 0", n)
	}
}
