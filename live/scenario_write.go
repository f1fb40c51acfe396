package live

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// WriteScenario writes a scenario file that nexar-sim reads: the
// calibrated model as its [network], and sweeps that cover the samples
// (one per collective, dtype, op, root and parameter setting, with every
// algorithm, world size and size the samples name), so that nexar-sim
// predicts the measured points and their neighbours. The file is checked
// with scenario.Parse before anything is written.
func (f *Fit) WriteScenario(w io.Writer, name string) error {
	var b bytes.Buffer
	sum := Summarize(f.Comparisons())
	fmt.Fprintf(&b, "# Calibrated by nexar-live calibrate: the %s model fitted to %d measured points\n", f.Model.Name, len(f.Samples))
	fmt.Fprintf(&b, "# by least squares on relative error (%s).\n", sum)
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "# Note: %s\n", n)
	}
	fmt.Fprintf(&b, "name = %s\n", strconv.Quote(name))
	fmt.Fprintf(&b, "description = %s\n", strconv.Quote(fmt.Sprintf("%s calibrated on %d points: %s", f.Model.Name, len(f.Samples), f.Describe())))
	fmt.Fprintf(&b, "seed = 1\n\n[network]\nmodel = %s\n", strconv.Quote(f.Model.Name))
	for i, p := range f.Model.Params {
		v := f.Values[i]
		if p.PerByte {
			fmt.Fprintf(&b, "%s = %s # %s = %.4g ns/B\n", p.Name, strconv.Quote(formatRate(v)), p.Symbol, v*1e9)
		} else {
			fmt.Fprintf(&b, "%s = %s # %s\n", p.Name, strconv.Quote(formatDuration(v)), p.Symbol)
		}
	}
	for _, sw := range sweepsOf(f.Samples) {
		b.WriteString("\n[[sweep]]\n")
		fmt.Fprintf(&b, "collective = %s\n", strconv.Quote(sw.collective))
		fmt.Fprintf(&b, "algorithms = [%s]\n", quoteAll(sw.algorithms))
		fmt.Fprintf(&b, "world = [%s]\n", joinInts(sw.worlds))
		fmt.Fprintf(&b, "bytes = [%s]\n", joinInts(sw.bytes))
		fmt.Fprintf(&b, "dtype = %s\n", strconv.Quote(sw.dtype))
		if sw.op != "" {
			fmt.Fprintf(&b, "op = %s\n", strconv.Quote(sw.op))
		}
		if sw.root != 0 {
			fmt.Fprintf(&b, "root = %d\n", sw.root)
		}
		writeParams(&b, sw.params)
	}
	if _, err := scenario.Parse(name+".toml", b.Bytes()); err != nil {
		return fmt.Errorf("live: the calibrated scenario does not parse: %w\n%s", err, b.String())
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Describe writes the fitted parameters in readable units.
func (f *Fit) Describe() string {
	parts := make([]string, len(f.Model.Params))
	for i, p := range f.Model.Params {
		if p.PerByte {
			parts[i] = fmt.Sprintf("%s %s", p.Name, formatRateHuman(f.Values[i]))
		} else {
			parts[i] = fmt.Sprintf("%s %s", p.Name, formatDurationHuman(f.Values[i]))
		}
	}
	return strings.Join(parts, ", ")
}

// formatDuration writes seconds as scenario.ParseDuration reads them.
func formatDuration(s float64) string {
	if s == 0 {
		return "0"
	}
	return strconv.FormatFloat(s*1e9, 'f', 3, 64) + "ns"
}

// formatRate writes seconds per byte as a bandwidth that
// scenario.ParseBandwidth reads: "inf" for 0.
func formatRate(perByte float64) string {
	if perByte <= 0 {
		return "inf"
	}
	return strconv.FormatFloat(1/perByte, 'f', 0, 64) + "B/s"
}

func formatDurationHuman(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.3g ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.3g µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3g ms", s*1e3)
	}
	return fmt.Sprintf("%.3g s", s)
}

func formatRateHuman(perByte float64) string {
	if perByte <= 0 {
		return "inf"
	}
	r := 1 / perByte
	switch {
	case r >= 1e9:
		return fmt.Sprintf("%.3g GB/s", r/1e9)
	case r >= 1e6:
		return fmt.Sprintf("%.3g MB/s", r/1e6)
	}
	return fmt.Sprintf("%.3g KB/s", r/1e3)
}

type sweepSpec struct {
	collective, dtype, op string
	root                  int
	params                map[string]int
	algorithms            []string
	worlds, bytes         []int
}

// sweepsOf groups samples into the sweeps of a scenario.
func sweepsOf(samples []Sample) []*sweepSpec {
	var out []*sweepSpec
	idx := map[string]*sweepSpec{}
	for _, s := range samples {
		coll, err := algos.Lookup(s.Collective)
		if err != nil {
			continue
		}
		op := ""
		if coll.Reduces {
			op = s.Op.String()
		}
		root := 0
		if coll.Rooted {
			root = s.Root
		}
		key := strings.Join([]string{s.Collective, s.DType.String(), op, strconv.Itoa(root), sweep.FormatParams(s.Params)}, "\x00")
		sw := idx[key]
		if sw == nil {
			sw = &sweepSpec{collective: s.Collective, dtype: s.DType.String(), op: op, root: root, params: s.Params}
			idx[key] = sw
			out = append(out, sw)
		}
		if a := sweep.BaseAlgorithm(s.Algorithm); !slices.Contains(sw.algorithms, a) {
			sw.algorithms = append(sw.algorithms, a)
		}
		if !slices.Contains(sw.worlds, s.World) {
			sw.worlds = append(sw.worlds, s.World)
		}
		if !slices.Contains(sw.bytes, s.Bytes) {
			sw.bytes = append(sw.bytes, s.Bytes)
		}
	}
	for _, sw := range out {
		slices.Sort(sw.worlds)
		slices.Sort(sw.bytes)
		// A root must exist at every world size.
		if sw.root >= sw.worlds[0] {
			sw.root = 0
		}
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// writeParams writes a sweep's params line, its names in order; nothing
// when there are none.
func writeParams(b *bytes.Buffer, params map[string]int) {
	if len(params) == 0 {
		return
	}
	names := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s = %d", n, params[n])
	}
	fmt.Fprintf(b, "params = { %s }\n", strings.Join(parts, ", "))
}
