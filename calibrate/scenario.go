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
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
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
	b.WriteString("seed = 1\n\n[network]\n")
	if f.Model.network != nil {
		f.Model.network(&b, f)
	} else {
		fmt.Fprintf(&b, "model = %s\n", strconv.Quote(f.Model.Name))
		for i := range f.Model.Params {
			writeParam(&b, f, i)
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

// writeParam writes parameter i of f as its scenario key, with its
// symbol (and what it is held at, if held) in a comment.
func writeParam(b *bytes.Buffer, f *Fit, i int) {
	p, v := f.Model.Params[i], f.Values[i]
	comment := p.Symbol
	switch {
	case p.PerByte:
		fmt.Fprintf(b, "%s = %s", p.Name, strconv.Quote(formatRate(v)))
		comment += fmt.Sprintf(" = %.4g ns/B", v*1e9)
	case p.Factor:
		fmt.Fprintf(b, "%s = %s", p.Name, strconv.FormatFloat(v, 'g', 6, 64))
	default:
		fmt.Fprintf(b, "%s = %s", p.Name, strconv.Quote(formatDuration(v)))
	}
	if i < len(f.Estimates) && f.Estimates[i].Held {
		comment += ", held (" + f.Estimates[i].Why + ")"
	}
	fmt.Fprintf(b, " # %s\n", comment)
}

// writeSetting writes setting i of f as its scenario key.
func writeSetting(b *bytes.Buffer, f *Fit, i int) {
	st := f.Settings[i]
	v := strconv.Itoa(st.Value)
	if st.Value < 0 {
		v = `"never"`
	}
	fmt.Fprintf(b, "%s = %s # %s\n", st.Name, v, st.How())
}

// writeProtocol is the [network] of the alpha-beta-protocol model:
// alpha-beta with its protocol keys, the rendezvous factors as one step
// of lat_factors and bw_factors at the eager limit.
func writeProtocol(b *bytes.Buffer, f *Fit) {
	b.WriteString("model = \"alpha-beta\"\n")
	writeProtocolKeys(b, f)
}

// writeSharedHost is the [network] of the shared-host model: the flow
// model on a crossbar with alpha-beta-protocol's keys and the backplane.
func writeSharedHost(b *bytes.Buffer, f *Fit) {
	b.WriteString("model = \"flow\"\ntopology = \"crossbar\"\n")
	writeProtocolKeys(b, f)
	writeParam(b, f, 5)
}

// writeProtocolKeys writes alpha-beta-protocol's parameters (the first
// five of f) and its protocol keys.
func writeProtocolKeys(b *bytes.Buffer, f *Fit) {
	for i := range 3 {
		writeParam(b, f, i)
	}
	writeSetting(b, f, 0)
	b.WriteString("eager_moves = \"at_once\"\nhandshake = \"rts_cts\"\n")
	from := max(f.Settings[0].Value-1, 0)
	for i, key := range []string{"lat_factors", "bw_factors"} {
		p := f.Model.Params[3+i]
		fmt.Fprintf(b, "%s = %s # %s\n", key, strconv.Quote(sim.Factors{{From: from, Factor: f.Values[3+i]}}.String()), describeEstimate(f, 3+i, p))
	}
}

// writeRealnet is the [network] of the realnet model: its settings and
// gamma, then the two paths as [network.transport].
func writeRealnet(b *bytes.Buffer, f *Fit) {
	b.WriteString("model = \"realnet\"\n")
	for i, st := range f.Settings {
		if st.Name == "eager_threshold" && st.Value == 0 {
			continue // off, the scenario's default
		}
		writeSetting(b, f, i)
	}
	writeParam(b, f, 4)
	b.WriteString("\n[network.transport]\n")
	for i := range 4 {
		writeParam(b, f, i)
	}
}

// describeEstimate says how parameter i of f was found, for comments.
func describeEstimate(f *Fit, i int, p Param) string {
	if i < len(f.Estimates) && f.Estimates[i].Held {
		return p.Name + ", held (" + f.Estimates[i].Why + ")"
	}
	return p.Name
}

// Describe writes the fitted parameters in readable units, and the held
// settings.
func (f *Fit) Describe() string {
	parts := make([]string, 0, len(f.Model.Params)+len(f.Settings))
	for i, p := range f.Model.Params {
		parts = append(parts, fmt.Sprintf("%s %s", p.Name, formatValue(p, f.Values[i])))
	}
	for _, st := range f.Settings {
		parts = append(parts, fmt.Sprintf("%s %s", st.Name, formatSetting(st.Value)))
	}
	return strings.Join(parts, ", ")
}

// Size writes the setting's value for people: a size, "never" or "0
// (off)".
func (v SettingValue) Size() string { return formatSetting(v.Value) }

// formatSetting writes a setting's size for people.
func formatSetting(n int) string {
	switch {
	case n < 0, n == neverLimit:
		return "never"
	case n == 0:
		return "0 (off)"
	}
	return formatSize(n)
}

// formatDuration writes seconds as units.ParseDuration reads them.
func formatDuration(s float64) string {
	if s == 0 {
		return "0"
	}
	return units.FormatNanoseconds(s, 3)
}

// formatRate writes seconds per byte as a bandwidth that
// units.ParseBandwidth reads: "inf" for 0.
func formatRate(perByte float64) string {
	if perByte <= 0 {
		return "inf"
	}
	return units.FormatBandwidthWhole(1 / perByte)
}

func formatRateHuman(perByte float64) string {
	if perByte <= 0 {
		return "inf"
	}
	return units.FormatBandwidthG(1 / perByte)
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
