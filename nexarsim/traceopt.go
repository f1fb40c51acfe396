package nexarsim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/trace"
	"github.com/nexar-go/nexar-go/units"
)

// traceOptions are the --trace-* flags: which ranks and what window of
// simulated time a trace keeps, its format, and the largest file it may
// write.
type traceOptions struct {
	ranks    []bool // nil: every rank
	rankSpec string
	from, to sim.Time
	window   bool
	format   trace.Format
	limit    int64 // bytes; 0 for no limit
}

// defaultTraceLimit is --trace-limit's default: a Perfetto file of this
// size opens in ui.perfetto.dev in a browser tab.
const defaultTraceLimit = 512 << 20

// parseTraceOptions reads the --trace-* flags' values.
func parseTraceOptions(ranks, window, format, limit string) (traceOptions, error) {
	o := traceOptions{limit: defaultTraceLimit, rankSpec: ranks}
	var err error
	if o.format, err = trace.ParseFormat(format); err != nil {
		return o, fmt.Errorf("--trace-format: %v", err)
	}
	if limit != "" {
		if limit == "0" || limit == "none" {
			o.limit = 0
		} else if o.limit, err = units.ParseBytes(limit); err != nil || o.limit <= 0 {
			return o, fmt.Errorf("--trace-limit %q: want a size such as 512MiB, or none", limit)
		}
	}
	if ranks != "" {
		if o.ranks, err = parseRanks(ranks); err != nil {
			return o, fmt.Errorf("--trace-ranks %q: %v", ranks, err)
		}
	}
	if window != "" {
		a, b, ok := strings.Cut(window, ":")
		if !ok {
			return o, fmt.Errorf("--trace-window %q: want FROM:TO in simulated time, such as 10us:20us (either may be left out)", window)
		}
		if a != "" {
			if o.from, err = scenario.ParseDuration(a); err != nil {
				return o, fmt.Errorf("--trace-window %q: %v", window, err)
			}
		}
		if b != "" {
			if o.to, err = scenario.ParseDuration(b); err != nil {
				return o, fmt.Errorf("--trace-window %q: %v", window, err)
			}
			if o.to <= o.from {
				return o, fmt.Errorf("--trace-window %q: the end is not after the start", window)
			}
		}
		o.window = true
	}
	return o, nil
}

// parseRanks reads a list of ranks and ranges: "0-7,512,1023".
func parseRanks(s string) ([]bool, error) {
	var set []bool
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= 1<<24 {
			return nil, fmt.Errorf("%q is not a rank or a range of ranks A-B", part)
		}
		if b >= len(set) {
			set = append(set, make([]bool, b+1-len(set))...)
		}
		for r := a; r <= b; r++ {
			set[r] = true
		}
	}
	return set, nil
}

// keeps reports whether rank is traced.
func (o traceOptions) keeps(rank int) bool {
	return o.ranks == nil || (rank < len(o.ranks) && o.ranks[rank])
}

// kept is how many of a world's ranks are traced.
func (o traceOptions) kept(world int) int {
	if o.ranks == nil {
		return world
	}
	n := 0
	for r := range min(world, len(o.ranks)) {
		if o.ranks[r] {
			n++
		}
	}
	return n
}

// filter is the recorder's filter for a trace of p.
func (o traceOptions) filter() trace.Filter {
	f := trace.Filter{From: o.from, To: o.to, MaxBytes: o.limit, Format: o.format}
	if o.ranks != nil {
		f.Ranks = o.keeps
	}
	return f
}

// check refuses a trace of p that its estimate puts over the limit
// without a window that could make it smaller, and returns a warning
// when a window might; est is p's estimate.
func (o traceOptions) check(spec string, p sweep.Point, est sweep.Estimate) (warning string, err error) {
	if o.ranks != nil && o.kept(p.World) == 0 {
		return "", fmt.Errorf("--trace %s: --trace-ranks %s names none of the %d ranks of %v", spec, o.rankSpec, p.World, p)
	}
	if o.limit == 0 {
		return "", nil
	}
	size := o.estimateSize(p, est)
	if size <= o.limit {
		return "", nil
	}
	if o.window {
		return fmt.Sprintf("the whole trace of %v would be about %s, over --trace-limit %s; the window will decide (a trace that passes the limit is not written)",
			p, bytesOf(size), bytesOf(o.limit)), nil
	}
	return "", fmt.Errorf("--trace %s: the trace of %v would be about %s, over --trace-limit %s; keep fewer ranks (--trace-ranks 0-15), a window of time (--trace-window 0:100us), or raise the limit",
		spec, p, bytesOf(size), bytesOf(o.limit))
}

// estimateSize is about how large the trace of p would be, from its
// estimate: each kept rank sends and receives its share of the messages,
// and has its share of the spans (waits, reductions).
func (o traceOptions) estimateSize(p sweep.Point, est sweep.Estimate) int64 {
	share := float64(o.kept(p.World)) / float64(p.World)
	msgs := int64(float64(est.Messages) * share)
	spans := int64(float64(max(est.Events-est.Messages, 0)) * share)
	return trace.EstimateSize(o.format, msgs, msgs, spans)
}

// traceName names the trace file of p.
func traceName(p sweep.Point, f trace.Format) string {
	s := fmt.Sprintf("trace_%s_%s_p%d_%dB_%s", p.Collective.Name, p.VariantName(), p.World, p.UsedBytes(), p.DType)
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '=') {
			b[i] = '_'
		}
	}
	return string(b) + f.Ext()
}
