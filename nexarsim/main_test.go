package nexarsim

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
)

// A collective registered in this test binary only, whose algorithm
// leaves the data untouched: wrong for an allreduce with host data.
func init() {
	algos.Register(&algos.Collective{
		Name:      "clitest-allreduce",
		BusFactor: func(p int) float64 { return 2 * float64(p-1) / float64(p) },
		Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
		Reduces:   true,
		Algorithms: []*algos.Algorithm{
			{Name: "noop", Summary: "does nothing", Params: map[string]int{"segment": 65536},
				Run: func(context.Context, algos.Link, algos.Call) error { return nil }},
		},
	})
	allreduce, _ := algotest.LookupReference("allreduce")
	algotest.RegisterReference("clitest-allreduce", allreduce)
}

// nexarSim runs the command and returns its exit status and output.
func nexarSim(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const defaultScenario = "../scenarios/scenarios.toml"

const good = `name = "cli"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 8]
bytes = [0, 1024, "8MiB"]
dtype = "f32"
op = "sum"
data = "phantom"
`

// replace returns good with old replaced by new, which must occur.
func replace(old, new string) string {
	if !strings.Contains(good, old) {
		panic("no " + old)
	}
	return strings.Replace(good, old, new, 1)
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		src  string // "" for a file that does not exist
		want []string
	}{
		{"unreadable", "", []string{"missing.toml: cannot read scenario"}},
		{"syntax", replace(`world = [2, 8]`, `world = [2, 8`), []string{"s.toml:13: ", "TOML syntax"}},
		{"unknown key", replace(`op = "sum"`, `op = "sum"`+"\nwrold = [1]"), []string{`s.toml:16: sweep[0].wrold: unknown key in [[sweep]] 1; did you mean "world"?`}},
		{"unknown network key", replace(`latency =`, `delay = "1us"`+"\nlatency ="), []string{`s.toml:5: network.delay: unknown key`}},
		{"unknown model", replace(`"alpha-beta"`, `"logpp"`), []string{`s.toml:4: network.model: unknown network model "logpp"`}},
		{"unknown collective", replace(`"allreduce"`, `"allreduse"`), []string{`s.toml:10: sweep[0].collective: unknown collective "allreduse"`}},
		{"unknown algorithm", replace(`["ring"]`, `["rign"]`), []string{`s.toml:11: sweep[0].algorithms: unknown allreduce algorithm "rign"`}},
		{"unknown dtype", replace(`"f32"`, `"f31"`), []string{`s.toml:14: sweep[0].dtype: unknown dtype "f31"`}},
		{"unknown op", replace(`"sum"`, `"avg"`), []string{`s.toml:15: sweep[0].op: unknown op "avg"`}},
		{"negative size", replace(`[0, 1024,`, `[-8, 1024,`), []string{`s.toml:13: sweep[0].bytes: element 1: size -8 is negative`}},
		{"non-numeric size", replace(`"8MiB"`, `"eight"`), []string{`s.toml:13: sweep[0].bytes: element 3: "eight" is not a size`}},
		{"bad unit", replace(`"8MiB"`, `"8M"`), []string{`s.toml:13: sweep[0].bytes: element 3: "8M" is not a size: unknown unit "M"`}},
		{"world below 1", replace(`[2, 8]`, `[0, 8]`), []string{`s.toml:12: sweep[0].world: element 1: world size 0 is out of range`}},
		{"bytes not whole elements", replace(`1024,`, `1023,`), []string{`s.toml:13: sweep[0].bytes: 1023: not a multiple of the f32 element size (4 bytes)`}},
		{"missing key", replace(`bandwidth = "12.5GB/s"`, ``), []string{`s.toml:3: network.bandwidth: missing required key in [network]`}},
		{"missing sweep key", replace(`world = [2, 8]`, ``), []string{`s.toml:9: sweep[0].world: missing required key in [[sweep]] 1`}},
		{"bad latency", replace(`"5us"`, `"5 fortnights"`), []string{`s.toml:5: network.latency: "5 fortnights" is not a duration: unknown unit "fortnights"`}},
		{"bad bandwidth", replace(`"12.5GB/s"`, `"12.5"`), []string{`s.toml:6: network.bandwidth: "12.5" is not a bandwidth: missing unit`}},
		{"several problems", replace(`"f32"`, `"f31"`) + "colour = 1\n", []string{`s.toml:14: sweep[0].dtype`, `s.toml:17: sweep[0].colour`, "2 problems"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "missing.toml")
			if tt.src != "" {
				file = writeFile(t, dir, "s.toml", tt.src)
			}
			out := filepath.Join(dir, "out")
			code, stdout, stderr := nexarSim("run", file, "--out", out, "--quiet")
			if tt.want == nil { // a control: the case is valid
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				return
			}
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, filepath.Join(dir, w)) && !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if tt.src != "" && !strings.Contains(stderr, file+":") {
				t.Errorf("stderr does not name %s with a line:\n%s", file, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %q", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s exists after bad input (%v)", out, err)
			}
			// validate reports the same problems.
			vcode, _, vstderr := nexarSim("validate", file)
			if vcode != 2 || vstderr != stderr {
				t.Errorf("validate: exit %d, stderr\n%s\nwant 2 and\n%s", vcode, vstderr, stderr)
			}
		})
	}
}

// TestBadInputKeepsOldResults checks that bad input leaves an existing
// output directory as it was.
func TestBadInputKeepsOldResults(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, "results.csv", "old\n")
	bad := writeFile(t, dir, "bad.toml", replace(`"ring"`, `"rign"`))
	if code, _, _ := nexarSim("run", bad, "--out", out); code != 2 {
		t.Fatalf("exit %d", code)
	}
	entries, _ := os.ReadDir(out)
	data, _ := os.ReadFile(filepath.Join(out, "results.csv"))
	if len(entries) != 1 || string(data) != "old\n" {
		t.Errorf("output directory changed: %v, %q", entries, data)
	}
}

func TestRunDefaultScenarioTwice(t *testing.T) {
	dir := t.TempDir()
	var results [2][]byte
	for i := range results {
		out := filepath.Join(dir, "out"+strconv.Itoa(i), "nested")
		code, stdout, stderr := nexarSim("run", defaultScenario, "--out", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// stdout is the table and nothing else (table_test.go).
		if !strings.Contains(stdout, "# Collective test starting: allreduce") || strings.Contains(stdout, "sweep 1/") {
			t.Errorf("stdout: %q", stdout)
		}
		if !strings.Contains(stderr, "sweep 1/") || !strings.Contains(stderr, "wrote "+out+": results.csv") {
			t.Errorf("progress:\n%s", stderr)
		}
		var err error
		if results[i], err = os.ReadFile(filepath.Join(out, "results.csv")); err != nil {
			t.Fatal(err)
		}
		// The outputs the README promises, and nothing half-written.
		for _, name := range []string{"results.json", "crossovers.csv", "tuning.toml", "manifest.json",
			"latency_allreduce.png", "busbw_allreduce.svg", "crossover_allreduce.png", "auto_allreduce.png"} {
			if _, err := os.Stat(filepath.Join(out, name)); err != nil {
				t.Error(err)
			}
		}
		m, err := readManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(out)
		if len(entries) != len(m.Files) {
			t.Errorf("%s holds %d files, the manifest lists %d", out, len(entries), len(m.Files))
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
		if _, err := algos.LoadTuning(filepath.Join(out, "tuning.toml")); err != nil {
			t.Errorf("tuning.toml does not read back: %v", err)
		}
	}
	if !bytes.Equal(results[0], results[1]) {
		t.Error("two runs of the default scenario differ")
	}
	header, _, _ := strings.Cut(string(results[0]), "\n")
	if !strings.HasPrefix(header, "collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s,") {
		t.Errorf("header %q", header)
	}
	rows, err := csv.NewReader(bytes.NewReader(results[0])).ReadAll()
	if err != nil || len(rows) < 10 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

// TestWorkedExample checks the row of ring allreduce at p = 8, 8 MiB with
// the worked parameters of reference/cost-models.md, end to end.
func TestWorkedExample(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	code, _, stderr := nexarSim("run", "--quiet", file, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("--quiet run wrote to stderr: %q", stderr)
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("%d rows, want header + 6", len(rows))
	}
	if len(rows[0]) != len(results.SimColumns) {
		t.Fatalf("header %v", rows[0])
	}
	found := false
	for _, r := range rows[1:] {
		if r[0] == "allreduce" && r[1] == "ring" && r[2] == "8" && r[3] == "8388608" && r[4] == "f32" {
			found = true
			ts, _ := strconv.ParseFloat(r[5], 64)
			if want := 1538.0064e-6; (ts-want)/want > 1e-7 || (want-ts)/want > 1e-7 {
				t.Errorf("time_s %s, want %g", r[5], want)
			}
			algbw, _ := strconv.ParseFloat(r[6], 64)
			busbw, _ := strconv.ParseFloat(r[7], 64)
			if algbw != 8388608/ts/1e9 || busbw != algbw*2*7/8 {
				t.Errorf("algbw %s busbw %s", r[6], r[7])
			}
		}
		if r[3] == "0" && (r[6] != "0" || r[7] != "0") {
			t.Errorf("row %v: bandwidths of 0 bytes are not 0", r)
		}
	}
	if !found {
		t.Errorf("no row for ring at p=8, 8MiB:\n%v", rows)
	}
}

func TestHostDataRun(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", replace(`data = "phantom"`, `data = "host"`))
	code, _, stderr := nexarSim("run", file, "--out", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.csv")); err != nil {
		t.Fatal(err)
	}
}

func TestFailedSimulation(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", replace(`collective = "allreduce"
algorithms = ["ring"]`, `collective = "clitest-allreduce"
algorithms = ["noop"]`)+`
[[sweep]]
collective = "clitest-allreduce"
algorithms = ["noop"]
world = [3]
bytes = [64]
data = "host"
`)
	out := filepath.Join(dir, "out")
	code, _, stderr := nexarSim("run", file, "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	for _, want := range []string{"sweep 2/2", "clitest-allreduce/noop world=3 bytes=64 f32 sum host", "rank 0: wrong data"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, stderr)
		}
	}
	// No output, but the rows of the first sweep's points, which were
	// computed, are kept for --resume, and stderr says where.
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) != 1 || entries[0].Name() != checkpointFile {
		t.Errorf("%s after a failed run: %v (%v), want the checkpoint alone", out, entries, err)
	}
	if !strings.Contains(stderr, "rows computed are kept in "+filepath.Join(out, checkpointFile)) {
		t.Errorf("stderr does not say where the rows computed are:\n%s", stderr)
	}

	// A run that fails before any point is complete leaves nothing.
	file = writeFile(t, dir, "f.toml", `name = "fails"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "clitest-allreduce"
algorithms = ["noop"]
world = [3]
bytes = [64]
data = "host"
`)
	out = filepath.Join(dir, "out2")
	if code, _, stderr := nexarSim("run", file, "--out", out, "--jobs", "1"); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s left behind after a failed run that computed nothing (%v)", out, err)
	}
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	tests := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{nil, 2, "", "Usage:"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"--help"}, 0, "Usage:", ""},
		{[]string{"-h"}, 0, "[[sweep]]", ""},
		{[]string{"help"}, 0, "nexar-sim run SCENARIO.toml --out DIR", ""},
		{[]string{"help", "run"}, 0, "algbw_GB_per_s", ""},
		{[]string{"help", "validate"}, 0, "FILE:LINE: KEY: MESSAGE", ""},
		{[]string{"help", "list"}, 0, "nexar-sim list", ""},
		{[]string{"help", "plot"}, 0, "nexar-sim plot out/results.csv", ""},
		{[]string{"help", "merge"}, 0, "nexar-sim merge --out out/", ""},
		{[]string{"plot", "-h"}, 0, "Usage: nexar-sim plot", ""},
		{[]string{"merge", "--help"}, 0, "Usage: nexar-sim merge", ""},
		{[]string{"plot"}, 2, "", "want one results file"},
		{[]string{"plot", file}, 2, "", "missing --out DIR"},
		{[]string{"merge", dir}, 2, "", "missing --out DIR"},
		{[]string{"merge", "--out", dir}, 2, "", "no shard directories given"},
		{[]string{"run", file, "--out", dir, "--jobs", "0"}, 2, "", "--jobs 0: want at least 1"},
		{[]string{"run", file, "--out", dir, "--shard", "3/2"}, 2, "", `--shard "3/2": want I/N`},
		{[]string{"run", file, "--out", dir, "--trace", "allreduce:ring:8"}, 2, "", "want an index or COLLECTIVE:ALGORITHM:WORLD:BYTES"},
		{[]string{"run", file, "--out", dir, "--trace", "allreduce:ring:4:8MiB"}, 2, "", "no point of the scenario matches"},
		{[]string{"run", file, "--out", dir, "--trace", "99"}, 2, "", "the scenario has points 0 to 5"},
		{[]string{"run", file, "--out", dir, "--links", "99"}, 2, "", "--links 99: the scenario has points 0 to 5"},
		{[]string{"run", file, "--out", dir, "--links", "allreduce:ring:8:8MiB"}, 2, "", `links exist only for model = "flow" topologies`},
		{[]string{"help", "run"}, 0, "--links POINT", ""},
		{[]string{"help", "help"}, 0, "nexar-sim help run", ""},
		{[]string{"help", "nope"}, 2, "", `unknown command "nope"`},
		{[]string{"help", "run", "list"}, 2, "", "at most one command"},
		{[]string{"run", "--help"}, 0, "Usage: nexar-sim run", ""},
		{[]string{"run", file, "-h"}, 0, "Usage: nexar-sim run", ""},
		{[]string{"run"}, 2, "", "no scenario file given"},
		{[]string{"run", file}, 2, "", "missing --out DIR"},
		{[]string{"run", file, file, "--out", dir}, 2, "", "want one scenario file"},
		{[]string{"run", file, "--out"}, 2, "", "flag needs an argument: -out"},
		{[]string{"run", file, "--out", dir, "--fast"}, 2, "", "flag provided but not defined: -fast"},
		{[]string{"run", "--out", filepath.Join(file, "sub"), file}, 2, "", "--out:"},
		{[]string{"validate"}, 2, "", "no scenario file given"},
		{[]string{"validate", "--help"}, 0, "Usage: nexar-sim validate", ""},
		{[]string{"validate", file, file}, 0, file + `: ok: "cli", 1 sweep(s), 6 point(s)`, ""},
		{[]string{"list", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"list", "-h"}, 0, "Usage: nexar-sim list", ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := nexarSim(tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("nexar-sim %q: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q",
				tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
		if tt.code == 2 && tt.stderr != "" && !strings.Contains(stderr, "nexar-sim help") && !strings.Contains(stderr, "Usage:") {
			t.Errorf("nexar-sim %q: usage error does not point to help:\n%s", tt.args, stderr)
		}
	}
}

// TestFlagOrder checks that flags may come before or after the scenario
// file, and that "--" ends the flags.
func TestFlagOrder(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	dash := writeFile(t, dir, "-s.toml", good)
	for i, args := range [][]string{
		{"run", file, "--out", filepath.Join(dir, "a")},
		{"run", "--out", filepath.Join(dir, "b"), file},
		{"run", "-out=" + filepath.Join(dir, "c"), "-q", file},
		{"run", "--quiet", "--out", filepath.Join(dir, "d"), "--", dash},
	} {
		code, _, stderr := nexarSim(args...)
		if code != 0 {
			t.Errorf("args %d %q: exit %d: %s", i, args, code, stderr)
		}
	}
	for _, d := range []string{"a", "b", "c", "d"} {
		if _, err := os.Stat(filepath.Join(dir, d, "results.csv")); err != nil {
			t.Error(err)
		}
	}
}

func TestList(t *testing.T) {
	code, stdout, stderr := nexarSim("list")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range algos.CollectiveNames() {
		c, _ := algos.Lookup(name)
		if !strings.Contains(stdout, "\n  "+name) {
			t.Errorf("list does not show collective %s", name)
		}
		for _, a := range c.Algorithms {
			if !strings.Contains(stdout, "    "+a.Name) {
				t.Errorf("list does not show algorithm %s/%s", name, a.Name)
			}
		}
	}
	for _, want := range []string{"params (defaults): segment = 65536", "alpha-beta:", "latency", "reduce_bandwidth",
		"Topologies of the flow model", "fat_tree:", "inter_", "Noise and faults", "jitter:", "lets a sweep repeat",
		"Message protocol", "eager_limit", "lat_factors", `SimGrid SMPI's "rab_rdb"`,
		"gpu_cluster:", "nvlink_bandwidth", "GPU machines", "dgx-h100: NVIDIA DGX H100", "gb200-nvl72:", "8 GPUs a node (hopper)",
		"ranks_per_node", "[network.nccl]", "ll128_channel_bandwidth"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list does not show %q:\n%s", want, stdout)
		}
	}
}

// TestHelpExamples checks that the scenario the help teaches with is valid,
// and that validate's help shows what validate says.
func TestHelpExamples(t *testing.T) {
	if _, err := scenario.Parse("help.toml", []byte(exampleScenario)); err != nil {
		t.Errorf("the help's example scenario is invalid:\n%v", err)
	}
	dir := t.TempDir()
	src := replace(`["ring"]`, `["rign"]`)
	src = strings.Replace(src, `[2, 8]`, `[0, 8]`, 1)
	src = strings.Replace(src, `[0, 1024, "8MiB"]`, `["1KiB..1MiB x2", 6]`, 1)
	file := writeFile(t, dir, "s.toml", src)
	_, _, stderr := nexarSim("validate", file)
	help := commandHelp["validate"]
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasSuffix(line, "problems") {
			continue
		}
		_, rest, _ := strings.Cut(line, "s.toml:")
		rest, _, _ = strings.Cut(rest, "(want one of ring") // the catalogue grows
		if !strings.Contains(help, "s.toml:"+rest) {
			t.Errorf("validate's help does not show %q", "s.toml:"+rest)
		}
	}
}
