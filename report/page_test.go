package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
)

// writeRun fills dir with the files of a run: results.csv (with the
// columns given), and the others named in extra.
func writeRun(t *testing.T, dir string, cols []string, extra map[string]string) {
	t.Helper()
	var b bytes.Buffer
	w := results.NewWriter(&b, cols, results.LiveDecimals)
	for _, alg := range []string{"ring", "tree"} {
		for _, size := range []int{1024, 4096} {
			r := results.Row{Collective: "allreduce", Algorithm: alg, World: 4, Bytes: size, DType: "f32", Time: float64(size) * 1e-9,
				TimeMin: 1e-6, TimeAvg: 3e-6, TimeMax: 9e-6, Repeats: 3, BulkThreshold: 65536}
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"results.csv": b.String()}
	for k, v := range extra {
		files[k] = v
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pngFile is a small PNG.
func pngFile(t *testing.T) string {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWrite: the page of a folder names what was run, has a table per
// collective, algorithm and world, one image per figure (the PNG where
// both were drawn) as a data: URI, the crossovers, the tuning table and
// the model's error; it fetches nothing, reads on a phone, escapes what
// it shows, and is the same bytes when written again.
func TestWrite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cols    []string
		extra   map[string]string
		figures int
		want    []string
		wantNot []string
	}{
		{"simulated", results.SimColumns, map[string]string{
			"latency_allreduce.png": pngFile(t), "latency_allreduce.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
			"busbw_allreduce.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
			"crossovers.csv":      "collective,dtype,world,below,above,bytes,lo_bytes,hi_bytes\nallreduce,f32,4,tree,ring,2048,1024,4096\n",
			"tuning.toml":         "[[allreduce]]\nalgorithm = \"tree\"\n",
		}, 2, []string{"<h2>Crossovers and tuning table</h2>", `<td class="t">tree</td><td class="t">ring</td><td>2048</td>`, "algorithm = &#34;tree&#34;",
			"data:image/png;base64,", "data:image/svg&#43;xml;base64,", "allreduce · ring · 4 ranks (2 row(s))", `<td>1024</td><td class="t">f32</td><td>1.02</td>`},
			[]string{"<h2>Model error</h2>", "min (µs)", "#wrong"}},
		{"measured", results.WithMinMax(results.LiveColumns(false, true)), map[string]string{
			"compare.png": pngFile(t),
			"compare.csv": "collective,algorithm,world,bytes,dtype,params,op,predicted_s,measured_s,ratio\nallreduce,ring,4,1024,f32,,sum,0.000002,0.000001,2\nallreduce,tree,4,1024,f32,,sum,0.000001,0.000001,1\n",
		}, 1, []string{"<h2>Model error</h2>", "2 point(s): median error 50.0 %, largest 100.0 %", "<td>100.0 %</td>", "min (µs)", "#wrong", "<td>3.00</td>",
			"<th>op</th><th>measured (µs)</th>"},
			[]string{"<h2>Crossovers and tuning table</h2>"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir, tt.cols, tt.extra)
			info := Info{Title: "nexar-sim run", Command: "nexar-sim run <a&b>.toml --out out", Scenario: "study", Network: "alpha-beta: latency 5us",
				Facts: []Fact{{"world", "4 ranks"}}, Notes: []string{"a note"}}
			if err := Write(dir, info); err != nil {
				t.Fatal(err)
			}
			first, err := os.ReadFile(filepath.Join(dir, File))
			if err != nil {
				t.Fatal(err)
			}
			page := string(first)
			want := append([]string{`<meta name="viewport" content="width=device-width, initial-scale=1">`, "max-width: 100%",
				"<h2>What was run</h2>", "<h2>Results</h2>", "<h2>Figures</h2>", "&lt;a&amp;b&gt;.toml", "<dd>4 ranks</dd>", "<li>a note</li>"}, tt.want...)
			for _, w := range want {
				if !strings.Contains(page, w) {
					t.Errorf("no %q in the page", w)
				}
			}
			for _, w := range append(tt.wantNot, "<script", "<link", `src="http`, "url(") {
				if strings.Contains(page, w) {
					t.Errorf("%q in the page", w)
				}
			}
			if n := len(regexp.MustCompile(`<img `).FindAllString(page, -1)); n != tt.figures {
				t.Errorf("%d images, want %d", n, tt.figures)
			}
			// The results' two blocks, the model's points, the crossovers.
			if n := strings.Count(page, "<details"); n != 2+strings.Count(page, "<h2>Model error</h2>")+strings.Count(page, "crossovers.csv: ") {
				t.Errorf("%d blocks", n)
			}
			if err := Write(dir, info); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(filepath.Join(dir, File)); !bytes.Equal(again, first) {
				t.Error("the page differs when written again")
			}
		})
	}
}

// TestWriteBadInput: a folder whose results.csv does not read, or that
// is not there, is an error, and no page is written.
func TestWriteBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "results.csv"), []byte("collective,algorithm\nallreduce\n"), 0o644)
	if err := Write(dir, Info{}); err == nil || !strings.Contains(err.Error(), "results.csv") {
		t.Errorf("bad results.csv: %v", err)
	}
	os.Remove(filepath.Join(dir, "results.csv"))
	os.WriteFile(filepath.Join(dir, "compare.csv"), []byte("predicted_s,measured_s\nx,1\n"), 0o644)
	if err := Write(dir, Info{}); err == nil {
		t.Error("bad compare.csv: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, File)); err == nil {
		t.Error("a page was written")
	}
	if err := Write(filepath.Join(dir, "none"), Info{}); err == nil {
		t.Error("no folder: no error")
	}
}

func TestFigures(t *testing.T) {
	got := Figures([]string{"b.svg", "a.png", "b.png", "results.csv", "a.svg", "c.svg", "report.html"})
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("Figures: %v", got)
	}
}
