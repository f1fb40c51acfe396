package report

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	_ "embed"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/results"
)

// File is the name of the page in a run's folder.
const File = "report.html"

// Files of a run's folder the page reads, when they are there.
const (
	resultsFile    = "results.csv"
	crossoversFile = "crossovers.csv"
	tuningFile     = "tuning.toml"
	compareFile    = "compare.csv"
)

// Info is what the page says of a run besides what its folder holds.
type Info struct {
	// Title heads the page: "nexar-sim run".
	Title string
	// Command is the command line that made the folder, as the user gave
	// it; Scenario its scenario's name, ScenarioFile its file,
	// Description its description, Network its network in one line.
	Command, Scenario, ScenarioFile, Description, Network string
	// Facts are more of what was run, in order ("world": "4 ranks").
	Facts []Fact
	// Notes are what the run said besides (derivation's notes,
	// warnings).
	Notes []string
}

// Fact is a named line of the page's "what was run".
type Fact struct{ Name, Value string }

// Write writes dir/report.html (File) from the files in dir (see Render),
// whole or not at all.
func Write(dir string, info Info) error {
	var b bytes.Buffer
	if err := Render(&b, dir, info); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, File), b.Bytes())
}

// Render writes the page of the run whose outputs are in dir: info, then
// the model's error (compare.csv), every figure (each PNG or SVG, the PNG
// where both were drawn, embedded as a data: URI), the tuning table
// (tuning.toml) and the crossovers (crossovers.csv), the results
// (results.csv) as nccl-tests' blocks, nexar-sim step's tables (step.csv,
// best_bucket.csv), and the list of the folder's files. Files that are not there are left out; one that does not read
// is an error. The same folder and info give the same bytes.
func Render(w io.Writer, dir string, info Info) error {
	p := page{Info: info}
	var err error
	if p.Files, err = listFiles(dir); err != nil {
		return err
	}
	if p.Blocks, err = resultBlocks(dir); err != nil {
		return err
	}
	if p.Model, err = modelTable(dir); err != nil {
		return err
	}
	if p.Crossovers, err = csvTable(filepath.Join(dir, crossoversFile)); err != nil {
		return err
	}
	if data, err := os.ReadFile(filepath.Join(dir, tuningFile)); err == nil {
		p.Tuning = string(data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if p.Figures, err = figures(dir, p.Files); err != nil {
		return err
	}
	for _, x := range extraTables {
		t, err := csvTable(filepath.Join(dir, x.file))
		if err != nil {
			return err
		}
		if t != nil {
			p.Extra = append(p.Extra, block{Title: x.title, table: *t})
		}
	}
	return pageTemplate.Execute(w, p)
}

// page is what the template shows.
type page struct {
	Info
	Files      []string
	Blocks     []block
	Model      *model
	Crossovers *table
	Tuning     string
	Figures    []figure
	Extra      []block
}

// extraTables are the other CSV files of a run the page shows as they
// are: nexar-sim step's.
var extraTables = []struct{ file, title string }{
	{"step.csv", "Training step (step.csv)"},
	{"best_bucket.csv", "Best bucket size (best_bucket.csv)"},
}

// table is a header and rows of cells.
type table struct {
	Header []string
	Rows   [][]cell
}

// cell is a table's cell: numbers align right, text left.
type cell struct {
	Text string
	Num  bool
}

// cells are the cells of texts.
func cells(texts []string) []cell {
	out := make([]cell, len(texts))
	for i, t := range texts {
		_, err := strconv.ParseFloat(strings.TrimSuffix(t, " %"), 64)
		out[i] = cell{t, err == nil}
	}
	return out
}

// block is the results of one collective, algorithm and world.
type block struct {
	Title string
	table
}

// model is compare.csv: its summary and its rows.
type model struct {
	Summary string
	table
	err *ModelError
}

// figure is an image of the folder, embedded.
type figure struct {
	Name string
	Src  template.URL
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// listFiles lists the regular files of dir, sorted, but hidden ones and
// the page itself.
func listFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && e.Name() != File {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// Figures returns the figures of the folder whose files are names: each
// name with its extension, .png or .svg, cut off, once, in order. The
// page shows one image per figure.
func Figures(names []string) []string {
	var out []string
	for _, n := range names {
		ext := filepath.Ext(n)
		if ext != ".png" && ext != ".svg" {
			continue
		}
		if base := strings.TrimSuffix(n, ext); !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out
}

// figures reads and embeds the figures of dir, whose files are names.
func figures(dir string, names []string) ([]figure, error) {
	var out []figure
	for _, base := range Figures(names) {
		name, mime := base+".png", "image/png"
		if !slices.Contains(names, name) {
			name, mime = base+".svg", "image/svg+xml"
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, figure{Name: name, Src: template.URL("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data))})
	}
	return out, nil
}

// resultBlocks reads results.csv into blocks of one collective, algorithm
// and world each, in the order they first come; none without the file.
func resultBlocks(dir string) ([]block, error) {
	t, err := results.ReadFile(filepath.Join(dir, resultsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	header := []string{"size (B)", "type", "time (µs)", "algbw (GB/s)", "busbw (GB/s)"}
	minmax := t.Has(results.ColTimeAvg)
	if minmax {
		header = append(header, "min (µs)", "avg (µs)", "max (µs)")
	}
	wrong := t.Has(results.ColWrong)
	if wrong {
		header = append(header, "#wrong")
	}
	var out []block
	index := map[string]int{}
	for _, r := range t.Rows {
		title := fmt.Sprintf("%s · %s · %d ranks", r.Collective, r.Algorithm, r.World)
		i, ok := index[title]
		if !ok {
			i = len(out)
			index[title] = i
			out = append(out, block{Title: title, table: table{Header: header}})
		}
		line := []string{strconv.Itoa(r.Bytes), r.DType, micros(r.Time), gbps(r.AlgBW), gbps(r.BusBW)}
		if minmax {
			line = append(line, micros(r.TimeMin), micros(r.TimeAvg), micros(r.TimeMax))
		}
		if wrong {
			line = append(line, strconv.FormatInt(r.Wrong, 10))
		}
		out[i].Rows = append(out[i].Rows, cells(line))
	}
	return out, nil
}

// micros formats seconds in µs, to two decimals.
func micros(s float64) string { return strconv.FormatFloat(s*1e6, 'f', 2, 64) }

// gbps formats a bandwidth in GB/s, to two decimals.
func gbps(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// readCSV reads a CSV file's records; none if it is not there.
func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// csvTable reads a CSV file as it is; nil if it is not there or has no
// rows.
func csvTable(path string) (*table, error) {
	recs, err := readCSV(path)
	if len(recs) < 2 || err != nil {
		return nil, err
	}
	t := &table{Header: recs[0]}
	for _, rec := range recs[1:] {
		t.Rows = append(t.Rows, cells(rec))
	}
	return t, nil
}

// modelTable reads compare.csv (verify's, of collectives or of training
// steps: the columns naming the point, then predicted_s and measured_s
// among others) into the model's error: a line per point, and the median
// and largest |predicted/measured - 1|.
func modelTable(dir string) (*model, error) {
	path := filepath.Join(dir, compareFile)
	recs, err := readCSV(path)
	if len(recs) < 2 || err != nil {
		return nil, err
	}
	head := recs[0]
	col := func(name string) int { return slices.Index(head, name) }
	// The columns that name the point: those before predicted_s.
	keep := head[:max(col("predicted_s"), 0)]
	m := &model{table: table{Header: append(slices.Clone(keep), "measured (µs)", "predicted (µs)", "error")}}
	var errs []float64
	for i, rec := range recs[1:] {
		pred, err1 := strconv.ParseFloat(field(rec, col("predicted_s")), 64)
		meas, err2 := strconv.ParseFloat(field(rec, col("measured_s")), 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s:%d: want predicted_s and measured_s in seconds: %v", path, i+2, err)
		}
		line := make([]string, 0, len(m.Header))
		for _, k := range keep {
			line = append(line, field(rec, col(k)))
		}
		rel := math.NaN()
		if meas > 0 {
			rel = pred/meas - 1
			errs = append(errs, math.Abs(rel))
		}
		m.Rows = append(m.Rows, cells(append(line, micros(meas), micros(pred), percent(rel))))
	}
	m.Summary = summary(errs)
	m.err = &ModelError{Points: len(errs)}
	if len(errs) > 0 {
		m.err.MedianErr, m.err.MaxErr = Median(errs), slices.Max(errs)
	}
	return m, nil
}

// field is rec[i], "" if i is out of range.
func field(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// percent formats a relative error as a signed percentage.
func percent(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64) + " %"
}

// summary says how far the model is off over errs (|relative errors|).
func summary(errs []float64) string {
	if len(errs) == 0 {
		return "no point with a measured time"
	}
	med, most := Median(errs), slices.Max(errs)
	return fmt.Sprintf("%d point(s): median error %.1f %%, largest %.1f %%", len(errs), 100*med, 100*most)
}

// Median is the median of xs (0 for none); xs is left as it was.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ReadModelError summarises dir's compare.csv (the model's error, as the
// page shows it); nil if there is none.
func ReadModelError(dir string) (*ModelError, error) {
	m, err := modelTable(dir)
	if m == nil || err != nil {
		return nil, err
	}
	return m.err, nil
}
