// Package simtest is for regression tests on simulated topologies, in a
// user's own go test: run an algorithm (or any body) on a scenario's
// network, assert its closed-form time, assert that it stays within a
// bound of a reference algorithm, and compare a set of cases with golden
// results kept in the repository.
//
// The simulator is deterministic: the same network, case and seed give
// the same time to the picosecond on every machine, so these assertions
// are exact and never flaky, unlike timed tests.
package simtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// Network is a modelled network: a scenario's [network] with its faults.
type Network struct {
	net  *scenario.Network
	seed uint64
}

// LoadNetwork reads the network of the scenario file at path (its sweeps
// are not run): the network of a study a test guards.
func LoadNetwork(path string) (*Network, error) {
	s, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	return &Network{net: &s.Network, seed: s.Seed}, nil
}

// ParseNetwork reads a network given as a scenario's [network] table,
// with its [network.*] and [[fault]] tables if any, in TOML:
//
//	[network]
//	model = "alpha-beta"
//	latency = "5us"
//	bandwidth = "12.5GB/s"
func ParseNetwork(text string) (*Network, error) {
	// A scenario needs a name and a sweep; the network is what is kept.
	doc := "name = \"simtest\"\n" + text + "\n\n[[sweep]]\ncollective = \"barrier\"\nalgorithms = [\"dissemination\"]\nworld = [1]\nbytes = [0]\n"
	s, err := scenario.Parse("network", []byte(doc))
	if err != nil {
		return nil, err
	}
	return &Network{net: &s.Network, seed: s.Seed}, nil
}

// MustParseNetwork is ParseNetwork that panics on a bad network, for
// package-level variables of tests.
func MustParseNetwork(text string) *Network {
	n, err := ParseNetwork(text)
	if err != nil {
		panic(err)
	}
	return n
}

// String is the network's summary: its model and parameters.
func (n *Network) String() string { return n.net.Summary }

// Case is one run of a collective's algorithm.
type Case struct {
	Collective string // catalogue name, such as "allreduce"
	Algorithm  string // an algorithm of Collective, the catalogue's or one registered
	World      int    // ranks
	Bytes      int    // message size as nccl-tests counts it (rounded as the collective needs)
	DType      string // element type, "f32" if empty
	Op         string // reduction, "sum" if empty
	Root       int    // root rank of rooted collectives
	// Params are the algorithm's parameters ("segment"); the algorithm's
	// defaults for those left out.
	Params map[string]int
	// Data runs with real bytes and checks every rank's result against
	// the reference: the run fails on a wrong element. Without it buffers
	// are phantom and only time is simulated (much faster).
	Data bool
}

func (c Case) String() string {
	return fmt.Sprintf("%s:%s:%d:%d", c.Collective, c.Algorithm, c.World, c.Bytes)
}

// point is c as the sweep runs it.
func (n *Network) point(c Case) (sweep.Point, error) {
	coll, err := algos.Lookup(c.Collective)
	if err != nil {
		return sweep.Point{}, err
	}
	a, err := coll.Algorithm(c.Algorithm)
	if err != nil {
		return sweep.Point{}, err
	}
	dt, op := device.F32, device.Sum
	if c.DType != "" {
		if dt, err = device.ParseDType(c.DType); err != nil {
			return sweep.Point{}, err
		}
	}
	if c.Op != "" {
		if op, err = device.ParseOp(c.Op); err != nil {
			return sweep.Point{}, err
		}
	}
	if c.World < 1 {
		return sweep.Point{}, fmt.Errorf("%v: world %d: want at least 1 rank", c, c.World)
	}
	data := scenario.Phantom
	if c.Data {
		data = scenario.Host
	}
	return sweep.Point{Collective: coll, Algorithm: a, World: c.World, Bytes: c.Bytes, DType: dt, Op: op, Root: c.Root,
		Params: c.Params, Data: data, Seed: n.seed, Network: n.net}, nil
}

// Simulate runs c on the network and returns its time: until the last
// rank finished. A deadlock, an error of the algorithm or, with c.Data, a
// wrong result is an error.
func (n *Network) Simulate(c Case) (sim.Time, error) {
	p, err := n.point(c)
	if err != nil {
		return 0, err
	}
	res, err := sweep.RunOnce(p, p.Seed, nil)
	if err != nil {
		return 0, fmt.Errorf("%v: %w", c, err)
	}
	return res.End, nil
}

// Time is Simulate in a test: a failed run fails tb.
func (n *Network) Time(tb testing.TB, c Case) sim.Time {
	tb.Helper()
	t, err := n.Simulate(c)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	return t
}

// Run runs body on world ranks of the network, as sim.Run does, for
// whatever a Case does not say (several collectives in a row, a
// sub-communicator, a body of the user's own). A failed run fails tb.
func (n *Network) Run(tb testing.TB, world int, hostData bool, body sim.Body) *sim.Result {
	tb.Helper()
	res, err := sim.Run(sim.Config{World: world, Model: n.net.Seeded(n.seed), Machine: n.net.MachineFor(world), HostData: hostData}, body)
	if err != nil {
		tb.Fatalf("simtest: world %d: %v", world, err)
	}
	return res
}

// AssertTime fails tb unless got is want within tol (0: exactly, to the
// picosecond), as a closed form on alpha-beta gives it.
func AssertTime(tb testing.TB, what string, got, want, tol sim.Time) {
	tb.Helper()
	if d := got - want; d > tol || -d > tol {
		tb.Errorf("%s: simulated %v, closed form %v (off by %v, tolerance %v)", what, got, want, d, tol)
	}
}

// Ratio simulates c and the same case with the reference algorithm, and
// returns c's time over the reference's.
func (n *Network) Ratio(c Case, reference string) (float64, error) {
	t, err := n.Simulate(c)
	if err != nil {
		return 0, err
	}
	r := c
	r.Algorithm, r.Params = reference, nil
	ref, err := n.Simulate(r)
	if err != nil {
		return 0, err
	}
	if ref == 0 {
		if t == 0 {
			return 1, nil
		}
		return 0, fmt.Errorf("%v: the reference %s takes no time", c, reference)
	}
	return float64(t) / float64(ref), nil
}

// AssertWithin fails tb unless c takes at most factor times what the
// reference algorithm takes on the same case: a bound that guards a
// variant against regressions relative to the algorithm it improves on.
func (n *Network) AssertWithin(tb testing.TB, c Case, reference string, factor float64) {
	tb.Helper()
	r, err := n.Ratio(c, reference)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	if r > factor {
		tb.Errorf("%v on %v: %.4g times %s's time, want at most %.4g", c, n, r, reference, factor)
	}
}

// UpdateEnv names the environment variable that makes Golden write its
// file instead of comparing: NEXAR_UPDATE_GOLDEN=1 go test ./...
const UpdateEnv = "NEXAR_UPDATE_GOLDEN"

// goldenColumns are the columns of a golden file: those of results.csv
// that say the point, its time and its messages.
var goldenColumns = []string{results.ColCollective, results.ColAlgorithm, results.ColWorld, results.ColBytes, results.ColDType, results.ColTime, results.ColMessages}

// Golden simulates every case and compares the times (in seconds to the
// picosecond) and message counts with the golden file at path, a
// results.csv of goldenColumns (results.Writer writes it, its readers read
// it). With NEXAR_UPDATE_GOLDEN=1 in the
// environment it writes the file instead, for a change that means to move
// the results: review its diff and commit it.
func (n *Network) Golden(tb testing.TB, path string, cases []Case) {
	tb.Helper()
	var buf bytes.Buffer
	w := results.NewWriter(&buf, goldenColumns, results.SimDecimals)
	if err := w.WriteHeader(); err != nil {
		tb.Fatal(err)
	}
	for _, c := range cases {
		p, err := n.point(c)
		if err != nil {
			tb.Fatalf("simtest: %v", err)
		}
		res, err := sweep.RunOnce(p, p.Seed, nil)
		if err != nil {
			tb.Fatalf("simtest: %v: %v", c, err)
		}
		if err := w.Write(results.Row{Collective: c.Collective, Algorithm: c.Algorithm, World: c.World, Bytes: p.UsedBytes(), DType: p.DType.String(),
			Time: res.End.Seconds(), Messages: res.Messages}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if os.Getenv(UpdateEnv) == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("simtest: wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("simtest: no golden file %s; write it with %s=1 go test", path, UpdateEnv)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if diff := diffLines(string(want), buf.String()); diff != "" {
		tb.Errorf("simtest: results differ from %s (run with %s=1 to accept them):\n%s", path, UpdateEnv, diff)
	}
}

// diffLines lists the lines of got that differ from want, by line.
func diffLines(want, got string) string {
	wl := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	gl := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	var b strings.Builder
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  line %d:\n    golden %s\n    now    %s\n", i+1, w, g)
		}
	}
	return b.String()
}
