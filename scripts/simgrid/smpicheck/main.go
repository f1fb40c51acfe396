// Command smpicheck holds nexar-sim against SimGrid SMPI on the points of
// a scenario: for every point whose algorithm SMPI also has, it runs the
// same collective under smpirun on a platform made from the scenario's
// network, and prints nexar-sim's time, SMPI's and their ratio. It is the
// engine of scripts/simgrid/run.sh, which builds the MPI program it runs;
// see scripts/simgrid/README.md for the settings and how to read the
// table.
//
//	go run ./scripts/simgrid/smpicheck -coll BIN [-out DIR] [-csv FILE] SCENARIO.toml
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("smpicheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	coll := fs.String("coll", "", "the MPI program built from scripts/simgrid/coll.c with smpicc (required)")
	out := fs.String("out", "smpi-out", "directory for platforms, host files and SMPI's logs")
	csvPath := fs.String("csv", "", "also write the table as CSV to this file")
	smpirun := fs.String("smpirun", "smpirun", "the smpirun to use")
	var extra, as multiFlag
	fs.Var(&extra, "cfg", "an extra SMPI setting, NAME:VALUE, passed as --cfg=NAME:VALUE (repeatable)")
	fs.Var(&as, "as", "hold COLLECTIVE/ALGORITHM against another SMPI algorithm: COLLECTIVE/ALGORITHM=SMPI[,COLL:ALG...], the\nlist setting the algorithms of the collectives SMPI's calls (repeatable); for variants SMPI has no\ntwin of, such as allreduce/binomial_tree_nearest=redbcast,reduce:binomial,bcast:binomial_tree")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: smpicheck -coll BIN [-out DIR] [-csv FILE] [-cfg NAME:VALUE]... [-as C/A=SMPI[,COLL:ALG...]]... SCENARIO.toml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *coll == "" {
		fs.Usage()
		return 2
	}
	s, err := scenario.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	points, err := sweep.Plan(s)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	overrides, err := parseOverrides(as)
	if err != nil {
		fmt.Fprintln(stderr, "smpicheck:", err)
		return 2
	}
	c := &checker{coll: *coll, out: *out, smpirun: *smpirun, extra: extra, as: overrides, stderr: stderr}
	rows, err := c.check(context.Background(), points)
	if err != nil {
		fmt.Fprintln(stderr, "smpicheck:", err)
		return 1
	}
	report(stdout, rows)
	if *csvPath != "" {
		if err := writeCSV(*csvPath, rows); err != nil {
			fmt.Fprintln(stderr, "smpicheck:", err)
			return 1
		}
	}
	return 0
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// row is one point held against SMPI.
type row struct {
	Collective, Algorithm, SMPI string
	World, Bytes                int
	Nexar, Peer                 float64 // seconds
}

func (r row) ratio() float64 { return r.Nexar / r.Peer }

type checker struct {
	coll, out, smpirun string
	extra              []string
	as                 map[string]override
	stderr             io.Writer
}

// override is what -as sets for one variant: SMPI's algorithm and the
// settings of the collectives it calls.
type override struct {
	name  string
	extra []string
}

// parseOverrides reads the -as flags.
func parseOverrides(flags []string) (map[string]override, error) {
	out := map[string]override{}
	for _, f := range flags {
		key, val, ok := strings.Cut(f, "=")
		if !ok || !strings.Contains(key, "/") || val == "" {
			return nil, fmt.Errorf("-as %q: want COLLECTIVE/ALGORITHM=SMPI[,COLL:ALG...]", f)
		}
		parts := strings.Split(val, ",")
		o := override{name: parts[0]}
		for _, x := range parts[1:] {
			coll, alg, ok := strings.Cut(x, ":")
			if !ok {
				return nil, fmt.Errorf("-as %q: %q is not COLL:ALG", f, x)
			}
			o.extra = append(o.extra, "smpi/"+coll+":"+alg)
		}
		out[key] = o
	}
	return out, nil
}

// group is the points one smpirun measures: one collective, algorithm
// and world, every size.
type group struct {
	points []sweep.Point
	smpi   []string // the --cfg settings selecting SMPI's algorithm
	name   string
}

func (c *checker) check(ctx context.Context, points []sweep.Point) ([]row, error) {
	var groups []*group
	byKey := map[string]*group{}
	skipped := map[string]bool{}
	for _, p := range points {
		sel, name, err := c.smpiAlgorithm(p)
		if err != nil {
			if !skipped[p.Collective.Name+"/"+p.VariantName()] {
				skipped[p.Collective.Name+"/"+p.VariantName()] = true
				fmt.Fprintf(c.stderr, "smpicheck: skipping %s/%s: %v\n", p.Collective.Name, p.VariantName(), err)
			}
			continue
		}
		key := fmt.Sprintf("%d/%s/%d", p.Sweep, p.VariantName(), p.World)
		g := byKey[key]
		if g == nil {
			g = &group{smpi: sel, name: name}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.points = append(g.points, p)
	}
	var rows []row
	for _, g := range groups {
		got, err := c.runGroup(ctx, g)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

func (c *checker) runGroup(ctx context.Context, g *group) ([]row, error) {
	p0 := g.points[0]
	net, err := describe(p0.Network.Sim, p0.World)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p0, err)
	}
	base := fmt.Sprintf("%s-%s-%d", p0.Collective.Name, p0.VariantName(), p0.World)
	base = strings.NewReplacer("(", "_", ")", "", "=", "", ",", "_").Replace(base)
	plat := filepath.Join(c.out, fmt.Sprintf("platform-%d.xml", p0.World))
	hosts := filepath.Join(c.out, fmt.Sprintf("hosts-%d", p0.World))
	if err := writeFile(plat, func(w io.Writer) error { return writePlatform(w, net.topo, p0.World) }); err != nil {
		return nil, err
	}
	if err := writeFile(hosts, func(w io.Writer) error { return writeHostfile(w, net.topo, p0.World) }); err != nil {
		return nil, err
	}
	args := []string{"-np", strconv.Itoa(p0.World), "-platform", plat, "-hostfile", hosts}
	for _, s := range append(append(net.settings(), g.smpi...), c.extra...) {
		args = append(args, "--cfg="+s)
	}
	args = append(args, "--log=root.thres:warning", c.coll, collName(p0.Collective.Name))
	for _, p := range g.points {
		args = append(args, strconv.Itoa(p.UsedBytes()))
	}
	fmt.Fprintf(c.stderr, "smpicheck: %s %s\n", c.smpirun, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, c.smpirun, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	log := filepath.Join(c.out, base+".log")
	if err := os.WriteFile(log, append(stdout.Bytes(), stderr.Bytes()...), 0o644); err != nil {
		return nil, err
	}
	if runErr != nil {
		return nil, fmt.Errorf("smpirun for %s at %d ranks failed (%v); see %s", p0.VariantName(), p0.World, runErr, log)
	}
	peer, err := parseTimes(&stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", log, err)
	}
	var rows []row
	for _, p := range g.points {
		t, ok := peer[p.UsedBytes()]
		if !ok {
			return nil, fmt.Errorf("%s: no time for %d bytes", log, p.UsedBytes())
		}
		r, err := sweep.RunPoint(p)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{Collective: p.Collective.Name, Algorithm: p.VariantName(), SMPI: g.name,
			World: p.World, Bytes: p.UsedBytes(), Nexar: r.Time, Peer: t})
	}
	return rows, nil
}

// parseTimes reads coll's lines "COLLECTIVE,WORLD,BYTES,SECONDS".
func parseTimes(r io.Reader) (map[int]float64, error) {
	out := map[int]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(f) != 4 {
			continue
		}
		n, err1 := strconv.Atoi(f[2])
		t, err2 := strconv.ParseFloat(f[3], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out[n] = t
	}
	if len(out) == 0 {
		return nil, errors.New("SMPI printed no times")
	}
	return out, sc.Err()
}

// collName is the name coll.c takes for a collective of the catalogue.
func collName(c string) string {
	if c == "broadcast" {
		return "bcast"
	}
	return c
}

func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// report prints the table and its summary: how many points are within 1%
// and 5% of SMPI, and the worst.
func report(w io.Writer, rows []row) {
	fmt.Fprintf(w, "%-15s %-26s %-22s %5s %10s %14s %14s %8s\n", "collective", "algorithm", "smpi", "world", "bytes", "nexar_us", "smpi_us", "ratio")
	for _, r := range rows {
		fmt.Fprintf(w, "%-15s %-26s %-22s %5d %10d %14.4f %14.4f %8.5f\n", r.Collective, r.Algorithm, r.SMPI, r.World, r.Bytes, r.Nexar*1e6, r.Peer*1e6, r.ratio())
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no comparable points")
		return
	}
	within := func(tol float64) int {
		n := 0
		for _, r := range rows {
			if math.Abs(r.ratio()-1) <= tol {
				n++
			}
		}
		return n
	}
	n := len(rows)
	fmt.Fprintf(w, "\n%d points: %d (%.1f%%) within 1%% of SMPI, %d (%.1f%%) within 5%%\n",
		n, within(0.01), 100*float64(within(0.01))/float64(n), within(0.05), 100*float64(within(0.05))/float64(n))
	worst := slices.Clone(rows)
	slices.SortStableFunc(worst, func(a, b row) int {
		return -cmp.Compare(math.Abs(a.ratio()-1), math.Abs(b.ratio()-1))
	})
	fmt.Fprintln(w, "worst:")
	for _, r := range worst[:min(10, len(worst))] {
		fmt.Fprintf(w, "  %s/%s (SMPI %s) world %d, %d bytes: %.4f\n", r.Collective, r.Algorithm, r.SMPI, r.World, r.Bytes, r.ratio())
	}
}

func writeCSV(path string, rows []row) error {
	return writeFile(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintln(bw, "collective,algorithm,smpi,world,bytes,nexar_s,smpi_s,ratio")
		for _, r := range rows {
			fmt.Fprintf(bw, "%s,%s,%s,%d,%d,%.17g,%.17g,%.9f\n", r.Collective, r.Algorithm, r.SMPI, r.World, r.Bytes, r.Nexar, r.Peer, r.ratio())
		}
		return bw.Flush()
	})
}

// network is what smpicheck needs of a scenario's model for one world.
type network struct {
	topo *sim.Topology
	// detached is SMPI's smpi/send-is-detached-thresh: the model's eager
	// limit, 0 if it has no protocol (every send waits for delivery);
	// async is smpi/async-small-thresh, the same limit if eager messages
	// move at once, else 0.
	detached, async int
	// latFactors and bwFactors are the model's factor lists, nil if it
	// has none.
	latFactors, bwFactors sim.Factors
}

// settings are the SMPI settings that make its network the model's (see
// README.md): CM02's max-min sharing without cross traffic or the TCP
// window bound, factors of 1 (or the model's lists, through the SMPI
// model whose weight-S is set to 0, which is then CM02 with SMPI's
// factors), no simulated computation, and the model's eager limit as the
// detached-send threshold.
func (n network) settings() []string {
	s := []string{
		"network/model:CM02",
		"network/crosstraffic:0",
		"network/TCP-gamma:1e30",
		"smpi/simulate-computation:no",
		"smpi/async-small-thresh:" + strconv.Itoa(n.async),
		"smpi/send-is-detached-thresh:" + strconv.Itoa(n.detached),
	}
	if n.latFactors != nil || n.bwFactors != nil {
		s[0] = "network/model:SMPI"
		s = append(s, "network/weight-S:0")
	}
	s = append(s, "smpi/lat-factor:"+factorString(n.latFactors), "smpi/bw-factor:"+factorString(n.bwFactors))
	return s
}

// factorString is f in SimGrid's syntax, "0:1" for none.
func factorString(f sim.Factors) string {
	if len(f) == 0 {
		return "0:1"
	}
	return f.String()
}

// describe returns the network of model m at world ranks, or why SMPI
// cannot run it.
func describe(m sim.Model, world int) (network, error) {
	switch x := m.(type) {
	case sim.Protocol:
		n, err := describe(x.Model, world)
		if err != nil {
			return n, err
		}
		if x.Envelope != 16 {
			return n, fmt.Errorf("envelope of %d bytes: SMPI's is 16", x.Envelope)
		}
		if x.Handshake != (sim.Handshake{}) {
			return n, fmt.Errorf("handshake %v: SMPI's rendezvous has none", x.Handshake)
		}
		n.detached = max(x.EagerLimit, 0)
		if x.EagerAtOnce {
			n.async = n.detached
		}
		n.latFactors, n.bwFactors = x.LatencyFactors, x.BandwidthFactors
		return n, nil
	case sim.AlphaBeta:
		if !freeReductions(x.ReduceBandwidth) {
			return network{}, errors.New("SMPI here simulates no reductions: use a network with free ones (no reduce_bandwidth)")
		}
		t, err := sim.Crossbar{Bandwidth: x.Bandwidth, Latency: x.Latency}.Build(world)
		return network{topo: t}, err
	case sim.Flow:
		if !freeReductions(x.ReduceBandwidth) {
			return network{}, errors.New("SMPI here simulates no reductions: use a network with free ones (no reduce_bandwidth)")
		}
		if x.Placement != nil {
			return network{}, errors.New("only the linear placement is supported")
		}
		t, err := x.Topology.Build(world)
		return network{topo: t}, err
	}
	return network{}, fmt.Errorf("model %T: smpicheck knows the alpha-beta and flow models only", m)
}

func freeReductions(bw float64) bool { return bw == 0 || math.IsInf(bw, 1) }

// smpiAlgorithm returns the SMPI settings that select p's algorithm and
// its name there, or why SMPI has none.
func (c *checker) smpiAlgorithm(p sweep.Point) ([]string, string, error) {
	if p.DType.Size() != 4 {
		return nil, "", fmt.Errorf("dtype %s: the SMPI program sums f32", p.DType)
	}
	if p.Collective.Rooted && p.Root != 0 {
		return nil, "", errors.New("the SMPI program uses root 0")
	}
	if len(p.Params) > 0 {
		return nil, "", errors.New("parameters are not passed to SMPI")
	}
	if o, ok := c.as[p.Collective.Name+"/"+p.VariantName()]; ok {
		return append([]string{"smpi/" + collName(p.Collective.Name) + ":" + o.name}, o.extra...), o.name, nil
	}
	name := p.Algorithm.SMPI
	if name == "" {
		return nil, "", errors.New("SMPI has no such algorithm")
	}
	if why := incomparable(p, name); why != "" {
		return nil, "", errors.New(why)
	}
	return []string{"smpi/" + collName(p.Collective.Name) + ":" + name}, name, nil
}

// incomparable says why SMPI's algorithm name is not the same as p's at
// p's size, "" if it is: SMPI's implementations hand some cases to
// another algorithm.
func incomparable(p sweep.Point, name string) string {
	_, _, used := p.Layout()
	switch {
	case name == "lr" && used%p.World != 0:
		return "SMPI's lr runs another allreduce on the count's remainder modulo the world size"
	case name == "lr" && used < p.World:
		return "SMPI's lr runs redbcast below one element per rank"
	}
	return ""
}
