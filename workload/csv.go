package workload

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Row is one simulated step as step.csv holds it: where it ran, the
// values that make it (its layout, schedule, ZeRO stage, bucket and
// algorithms), and what it measured, in seconds.
type Row struct {
	// Network names the network (the scenario's name); Point is the
	// point's index in its scenario.
	Network string
	Point   int
	Layout  string
	// DP, TP, PP and EP are the layout's sizes, World their product.
	DP, TP, PP, EP, World int
	Schedule              string
	Chunks, Micro         int
	ZeRO                  int
	Bucket                int64
	// Algorithms are the groups' choices, "dp=ring;tp=auto" (groups in
	// order, each collective's where they differ: "dp=allreduce=ring,
	// reduce_scatter=pairwise"); "" for the defaults.
	Algorithms string
	Step       float64
	Compute    float64
	// Utilisation is the mean compute / step.
	Utilisation    float64
	Bubble         float64
	BubbleFraction float64
	Idle           float64
	// Exposed is the mean exposed communication, ExposedBy and BusyBy
	// each group's exposed and busy time (tp, dp, pp, ep, dp_ep; the
	// exposed time of pp is the bubble's waits).
	Exposed   float64
	ExposedBy [5]float64
	BusyBy    [5]float64
	Messages  int64
}

// AlgorithmsText writes a Spec's algorithms as Row.Algorithms does.
func AlgorithmsText(a map[Group]map[string]string) string {
	var parts []string
	for _, g := range Groups() {
		cs := a[g]
		if len(cs) == 0 {
			continue
		}
		names := make([]string, 0, len(cs))
		same := true
		var first string
		for c, n := range cs {
			names = append(names, c)
			if first == "" {
				first = n
			}
			same = same && n == first
		}
		slices.Sort(names)
		if same {
			parts = append(parts, g.String()+"="+first)
			continue
		}
		var each []string
		for _, c := range names {
			each = append(each, c+"="+cs[c])
		}
		parts = append(parts, g.String()+"="+strings.Join(each, ","))
	}
	return strings.Join(parts, ";")
}

// NewRow makes the row of a step of spec that measured res.
func NewRow(network string, point int, spec Spec, res *Result) Row {
	r := Row{Network: network, Point: point, Layout: spec.Layout.String(), DP: spec.DP, TP: spec.TP, PP: spec.PP, EP: max(spec.EP, 1),
		World: spec.World(), Schedule: spec.Schedule.String(), Chunks: spec.chunks(), Micro: spec.MicroBatches, ZeRO: spec.ZeRO,
		Bucket: spec.Bucket, Algorithms: AlgorithmsText(spec.Algorithms),
		Step: res.Step, Compute: res.Compute, Utilisation: res.Utilisation, Bubble: res.Bubble, BubbleFraction: res.BubbleFraction,
		Idle: res.Idle, Exposed: res.ExposedTotal, Messages: res.Messages}
	if spec.PP == 1 {
		r.Schedule, r.Chunks = "", 1
	}
	for _, g := range res.Groups {
		r.ExposedBy[g.Group], r.BusyBy[g.Group] = g.Exposed, g.Busy
	}
	return r
}

// Columns are step.csv's columns, in order: a name ends in its unit
// (_s: seconds, _bytes), as results.csv's do.
var Columns = func() []string {
	cols := []string{"network", "point", "layout", "dp", "tp", "pp", "ep", "world", "schedule", "chunks", "micro_batches", "zero",
		"bucket_bytes", "algorithms", "step_s", "compute_s", "utilisation", "bubble_s", "bubble_fraction", "idle_s", "exposed_s"}
	for _, g := range Groups() {
		cols = append(cols, "exposed_"+g.String()+"_s")
	}
	for _, g := range Groups() {
		cols = append(cols, "busy_"+g.String()+"_s")
	}
	return append(cols, "messages")
}()

func seconds(v float64) string { return strconv.FormatFloat(v, 'f', 12, 64) }

func (r Row) record() []string {
	rec := []string{r.Network, strconv.Itoa(r.Point), r.Layout, strconv.Itoa(r.DP), strconv.Itoa(r.TP), strconv.Itoa(r.PP), strconv.Itoa(r.EP),
		strconv.Itoa(r.World), r.Schedule, strconv.Itoa(r.Chunks), strconv.Itoa(r.Micro), strconv.Itoa(r.ZeRO),
		strconv.FormatInt(r.Bucket, 10), r.Algorithms, seconds(r.Step), seconds(r.Compute), strconv.FormatFloat(r.Utilisation, 'f', 6, 64),
		seconds(r.Bubble), strconv.FormatFloat(r.BubbleFraction, 'f', 6, 64), seconds(r.Idle), seconds(r.Exposed)}
	for _, v := range r.ExposedBy {
		rec = append(rec, seconds(v))
	}
	for _, v := range r.BusyBy {
		rec = append(rec, seconds(v))
	}
	return append(rec, strconv.FormatInt(r.Messages, 10))
}

// WriteCSV writes rows as step.csv, with its header.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write(r.record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads what WriteCSV writes.
func ReadCSV(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("step.csv: %w", err)
	}
	if !slices.Equal(head, Columns) {
		return nil, fmt.Errorf("step.csv: header %q, want %q", strings.Join(head, ","), strings.Join(Columns, ","))
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("step.csv: %w", err)
		}
		row, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("step.csv:%d: %w", line, err)
		}
		rows = append(rows, row)
	}
}

func parseRow(rec []string) (Row, error) {
	var r Row
	var err error
	i := 0
	next := func() string { i++; return rec[i-1] }
	atoi := func(dst *int) {
		if err == nil {
			*dst, err = strconv.Atoi(next())
		}
	}
	float := func(dst *float64) {
		if err == nil {
			*dst, err = strconv.ParseFloat(next(), 64)
		}
	}
	r.Network = next()
	atoi(&r.Point)
	r.Layout = next()
	for _, d := range []*int{&r.DP, &r.TP, &r.PP, &r.EP, &r.World} {
		atoi(d)
	}
	r.Schedule = next()
	atoi(&r.Chunks)
	atoi(&r.Micro)
	atoi(&r.ZeRO)
	if err == nil {
		r.Bucket, err = strconv.ParseInt(next(), 10, 64)
	}
	r.Algorithms = next()
	for _, f := range []*float64{&r.Step, &r.Compute, &r.Utilisation, &r.Bubble, &r.BubbleFraction, &r.Idle, &r.Exposed} {
		float(f)
	}
	for k := range r.ExposedBy {
		float(&r.ExposedBy[k])
	}
	for k := range r.BusyBy {
		float(&r.BusyBy[k])
	}
	if err == nil {
		r.Messages, err = strconv.ParseInt(next(), 10, 64)
	}
	return r, err
}

// ExposedColumns are exposed.csv's columns: each point's exposed
// communication by group and collective.
var ExposedColumns = []string{"network", "point", "group", "collective", "exposed_s", "max_s"}

// WriteExposedCSV writes the exposed communication of each point's
// result (results[i] for rows[i]) as exposed.csv.
func WriteExposedCSV(w io.Writer, rows []Row, results []*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ExposedColumns); err != nil {
		return err
	}
	for i, r := range rows {
		for _, e := range results[i].Exposed {
			if err := cw.Write([]string{r.Network, strconv.Itoa(r.Point), e.Group.String(), e.Collective, seconds(e.Seconds), seconds(e.Max)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteRanksCSV writes each rank's account of a step (ranks.csv).
func WriteRanksCSV(w io.Writer, network string, point int, res *Result) error {
	cw := csv.NewWriter(w)
	for _, r := range res.Ranks {
		rec := []string{network, strconv.Itoa(point), strconv.Itoa(r.Rank), strconv.Itoa(r.Stage), strconv.FormatFloat(r.Speed, 'f', 6, 64),
			seconds(r.End), seconds(r.Compute), seconds(r.Exposed), seconds(r.Bubble), seconds(r.Idle)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// RanksColumns are ranks.csv's columns.
var RanksColumns = []string{"network", "point", "rank", "stage", "speed", "end_s", "compute_s", "exposed_s", "bubble_s", "idle_s"}
