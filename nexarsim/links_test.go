package nexarsim

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sweep"
)

// flowCrossbar is good's network as a flow-model crossbar, with ring
// allreduces at p = 2 and 4.
const flowCrossbar = `name = "links"
seed = 9

[network]
model = "flow"
topology = "crossbar"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 4]
bytes = ["1MiB", "8MiB"]
`

// readLinks reads a links.csv: its header and rows.
func readLinks(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(readFile(t, path))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s is empty", path)
	}
	return rows[0], rows[1:]
}

// TestLinksFlag writes the per-link account of ring allreduces on a
// crossbar. In 2(p-1) steps a rank sends one block of n/p bytes to the
// next, so every port (dev->switch and switch->dev) carries 2(p-1)n/p
// bytes in 2(p-1) messages: n at p = 2, 1.5n at p = 4.
func TestLinksFlag(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", flowCrossbar)
	out := filepath.Join(dir, "out")
	// Point 3 twice, and in another order than the plan's.
	runOK(t, "run", file, "--out", out, "--links", "3", "--links", "allreduce:ring:2:1MiB", "--links", "allreduce:ring:4:8MiB:f32", "-q", "--no-plots")
	header, rows := readLinks(t, filepath.Join(out, linksFile))
	want := "point,collective,algorithm,world,bytes,dtype,seed,time_s,link,from,to,bandwidth_bytes_per_s,latency_s,bytes_carried,messages_carried,busy_s,busy_fraction,utilisation,peak_flows,failed"
	if strings.Join(header, ",") != want {
		t.Fatalf("header %v, want %s", header, want)
	}
	results, err := sweep.ReadCSV(bytes.NewReader(readFile(t, filepath.Join(out, "results.csv"))))
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(header, name) }
	type edge struct {
		point int
		link  string
	}
	var got []edge
	for _, row := range rows {
		point, _ := strconv.Atoi(row[0])
		got = append(got, edge{point, row[col("link")]})
		world, n := map[int]int64{0: 2, 3: 4}[point], map[int]int64{0: 1 << 20, 3: 8 << 20}[point]
		if world == 0 {
			t.Fatalf("row of point %d: only points 0 and 3 were asked", point)
		}
		wantBytes := 2 * (world - 1) * n / world
		r := results[point]
		key := []string{row[0], r.Collective, r.Algorithm, strconv.Itoa(r.World), strconv.Itoa(r.Bytes), r.DType, "9", strconv.FormatFloat(r.Time, 'f', 12, 64)}
		if !slices.Equal(row[:8], key) {
			t.Errorf("row %v: want the key of results.csv's row %d, %v", row, point, key)
		}
		busy, _ := strconv.ParseFloat(row[col("busy_s")], 64)
		if row[col("bytes_carried")] != strconv.FormatInt(wantBytes, 10) || row[col("messages_carried")] != strconv.FormatInt(2*(world-1), 10) ||
			math.Abs(busy-float64(wantBytes)/12.5e9) > 1e-9*busy || row[col("bandwidth_bytes_per_s")] != "1.25e+10" {
			t.Errorf("point %d, %s: %v; want %d bytes in %d messages, busy %gs", point, row[col("link")], row, wantBytes, 2*(world-1), float64(wantBytes)/12.5e9)
		}
	}
	var wantEdges []edge
	for _, pw := range [][2]int{{0, 2}, {3, 4}} {
		for d := range pw[1] {
			wantEdges = append(wantEdges, edge{pw[0], "dev" + strconv.Itoa(d) + "->switch"}, edge{pw[0], "switch->dev" + strconv.Itoa(d)})
		}
	}
	if !slices.Equal(got, wantEdges) {
		t.Errorf("rows of %v, want %v", got, wantEdges)
	}
	m, err := readManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.Files, linksFile) || m.Files[len(m.Files)-1] != manifestFile {
		t.Errorf("manifest files %v", m.Files)
	}
	// A run without --links removes the earlier run's links.csv.
	runOK(t, "run", file, "--out", out, "-q", "--no-plots")
	if _, err := os.Stat(filepath.Join(out, linksFile)); !os.IsNotExist(err) {
		t.Errorf("links.csv of an earlier run left behind (%v)", err)
	}
}

// TestLinksNoLinks asks for links on models that have none: a usage
// error, before anything is simulated (the point would fail with wrong
// data if it ran, exit 1) or written.
func TestLinksNoLinks(t *testing.T) {
	noop := `
[[sweep]]
collective = "clitest-allreduce"
algorithms = ["noop"]
world = [4]
bytes = ["1KiB"]
data = "host"
`
	loggp := `name = "l"

[network]
model = "loggp"
latency = "2us"
bandwidth = "10GB/s"
`
	for _, net := range []string{good[:strings.Index(good, "[[sweep]]")], loggp} {
		dir := t.TempDir()
		file := writeFile(t, dir, "s.toml", net+noop)
		out := filepath.Join(dir, "out")
		code, _, stderr := nexarSim("run", file, "--out", out, "--links", "clitest-allreduce:noop:4:1KiB", "-q")
		if code != exitUsage || !strings.Contains(stderr, `--links clitest-allreduce:noop:4:1KiB: `) ||
			!strings.Contains(stderr, `has no links to account for: links exist only for model = "flow" topologies`) {
			t.Errorf("exit %d, %s", code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a refused run wrote %s (%v)", out, err)
		}
		// The same scenario without --links does simulate, and fails.
		if code, _, _ := nexarSim("run", file, "--out", out, "-q"); code != exitFailed {
			t.Errorf("the scenario without --links: exit %d, want %d", code, exitFailed)
		}
	}
}

// fatTree has competing algorithms on an oversubscribed fat tree, where
// flows share links.
const fatTree = `name = "ft"
seed = 5

[network]
model = "flow"
topology = "fat_tree"
radix = 8
oversubscription = 3
link_bandwidth = "25GB/s"
nic_bandwidth = "12.5GB/s"
link_latency = "1us"
reduce_bandwidth = "50GB/s"
recv_slots = -1
send_slots = -1

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "recursive_doubling"]
world = [8, 16]
bytes = ["64KiB", "4MiB"]

[[sweep]]
collective = "alltoall"
algorithms = ["pairwise"]
world = [16]
bytes = ["1MiB"]
`

// TestLinksJobsByteIdentical writes links.csv of several fat-tree points
// with one job and eight, the flags in different orders: the same bytes.
func TestLinksJobsByteIdentical(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "ft.toml", fatTree)
	specs := []string{"allreduce:ring:16:4MiB", "allreduce:halving_doubling:8:64KiB", "alltoall:pairwise:16:1MiB", "1", "allreduce:recursive_doubling:16:4MiB"}
	for _, jobs := range []string{"1", "8"} {
		args := []string{"run", file, "--out", filepath.Join(dir, "j"+jobs), "--jobs", jobs, "--no-plots", "-q"}
		for _, s := range specs {
			args = append(args, "--links", s)
		}
		runOK(t, args...)
		slices.Reverse(specs)
	}
	for _, name := range []string{linksFile, "results.csv", manifestFile} {
		if !bytes.Equal(readFile(t, filepath.Join(dir, "j1", name)), readFile(t, filepath.Join(dir, "j8", name))) {
			t.Errorf("%s differs between --jobs 1 and --jobs 8", name)
		}
	}
	_, rows := readLinks(t, filepath.Join(dir, "j1", linksFile))
	var points []string
	for _, row := range rows {
		if len(points) == 0 || points[len(points)-1] != row[0] {
			points = append(points, row[0])
		}
	}
	// Plan order: ring p8 64KiB, 4MiB, p16 64KiB, 4MiB (3), hd p8 64KiB (4), ..., rd p16 4MiB (11), alltoall (12).
	if want := []string{"1", "3", "4", "11", "12"}; !slices.Equal(points, want) {
		t.Errorf("points %v, want %v in plan order", points, want)
	}
}
