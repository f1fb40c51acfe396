package calibrate

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/plots"
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
	sum := f.Summary()
	fmt.Fprintf(&b, "# Calibrated by nexar-go's calibrate: the %s model fitted to %d measured points\n", f.Model.Name, len(f.Samples))
	fmt.Fprintf(&b, "# by least squares on relative error (%s).\n", sum)
	sweeps, pointToPoint := sweepsOf(f.Samples)
	if pointToPoint > 0 {
		fmt.Fprintf(&b, "# %d point-to-point samples (osu_latency, osu_bw, ...) were fitted; nexar-sim sweeps collectives only.\n", pointToPoint)
	}
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
	if len(sweeps) == 0 {
		// Only point-to-point samples: predict the allreduce of two ranks
		// at their sizes.
		b.WriteString("\n# No collective was measured: what the fitted model predicts for an allreduce of two ranks.\n")
		sweeps = []*sweepSpec{{Collective: "allreduce", Algorithms: []string{"ring"}, Worlds: []int{2}, DType: "u8", Op: "sum", Bytes: sizesOf(f.Samples)}}
	}
	b.WriteString("\n")
	if err := writeSweeps(&b, sweeps); err != nil {
		return err
	}
	if _, err := scenario.Parse(name+".toml", b.Bytes()); err != nil {
		return fmt.Errorf("calibrate: the calibrated scenario does not parse: %w\n%s", err, b.String())
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
			parts[i] = fmt.Sprintf("%s %s", p.Name, plots.FormatSeconds(f.Values[i]))
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

// sweepSpec is one [[sweep]] table of the calibrated scenario, as
// scenario.Parse reads it.
type sweepSpec struct {
	Collective string         `toml:"collective"`
	Algorithms []string       `toml:"algorithms"`
	Worlds     []int          `toml:"world"`
	Bytes      []int          `toml:"bytes"`
	DType      string         `toml:"dtype"`
	Op         string         `toml:"op,omitempty"`
	Root       int            `toml:"root,omitzero"`
	Params     map[string]int `toml:"params,omitempty"`
}

// writeSweeps writes sweeps as the scenario's [[sweep]] tables.
func writeSweeps(w io.Writer, sweeps []*sweepSpec) error {
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	return enc.Encode(struct {
		Sweep []*sweepSpec `toml:"sweep"`
	}{sweeps})
}

// sweepsOf groups the collective samples into the sweeps of a scenario,
// and counts the others.
func sweepsOf(samples []Sample) (sweeps []*sweepSpec, pointToPoint int) {
	var out []*sweepSpec
	idx := map[string]*sweepSpec{}
	for _, s := range samples {
		coll, err := algos.Lookup(s.Collective)
		if err != nil {
			pointToPoint++
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
			sw = &sweepSpec{Collective: s.Collective, DType: s.DType.String(), Op: op, Root: root, Params: s.Params}
			idx[key] = sw
			out = append(out, sw)
		}
		if a := sweep.BaseAlgorithm(s.Algorithm); !slices.Contains(sw.Algorithms, a) {
			sw.Algorithms = append(sw.Algorithms, a)
		}
		if !slices.Contains(sw.Worlds, s.World) {
			sw.Worlds = append(sw.Worlds, s.World)
		}
		if !slices.Contains(sw.Bytes, s.Bytes) {
			sw.Bytes = append(sw.Bytes, s.Bytes)
		}
	}
	for _, sw := range out {
		slices.Sort(sw.Worlds)
		slices.Sort(sw.Bytes)
		// A root must exist at every world size.
		if sw.Root >= sw.Worlds[0] {
			sw.Root = 0
		}
	}
	return out, pointToPoint
}

// sizesOf are the sizes of samples, in order, each once.
func sizesOf(samples []Sample) []int {
	var out []int
	for _, s := range samples {
		if !slices.Contains(out, s.Bytes) {
			out = append(out, s.Bytes)
		}
	}
	slices.Sort(out)
	return out
}
