package results

import (
	"bytes"
	"strings"
	"testing"
)

// TestNCCLTableMinMax: with MinMax every line has three more columns, the
// fastest, mean and slowest iteration in µs, under their names; without,
// nccl-tests' 84 characters.
func TestNCCLTableMinMax(t *testing.T) {
	for _, tt := range []struct {
		name   string
		line   TableLine
		minmax bool
		want   string // the line's end
	}{
		{"plain", TableLine{Row: Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 1024, DType: "f32", Time: 2e-6}, Count: 256, Redop: "sum", Root: -1},
			false, "   2.00    0.00    0.00      0"},
		{"times", TableLine{Row: Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 1024, DType: "f32", Time: 2e-6}, Count: 256, Redop: "sum", Root: -1,
			Times: []float64{1e-6, 2e-6, 6e-6}}, true, "      0     1.00     3.00     6.00"},
		{"row", TableLine{Row: Row{Collective: "broadcast", Algorithm: "tree", World: 2, Bytes: 1024, DType: "u8", Time: 2e-6, TimeMin: 1e-6, TimeAvg: 2.5e-6, TimeMax: 4e-6}, Count: 1024, Root: 0},
			true, "      0     1.00     2.50     4.00"},
		{"row without mean", TableLine{Row: Row{Collective: "broadcast", Algorithm: "tree", World: 2, Bytes: 1024, DType: "u8", Time: 2e-6, TimeMin: 1e-6, TimeMax: 4e-6}, Count: 1024, Root: 0},
			true, "      0     1.00     2.00     4.00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tab := NewNCCLTable(&b)
			tab.MinMax = tt.minmax
			tab.Add(tt.line)
			tab.Close()
			lines := strings.Split(b.String(), "\n")
			var data, names string
			for _, l := range lines {
				if strings.HasPrefix(l, "#       size") {
					names = l
				}
				if l != "" && l[0] != '#' {
					data = l
				}
			}
			if !strings.HasSuffix(data, tt.want) {
				t.Errorf("line %q, want it to end in %q", data, tt.want)
			}
			if want := 84 + 27*boolInt(tt.minmax); len(data) != want {
				t.Errorf("line of %d characters, want %d: %q", len(data), want, data)
			}
			if tt.minmax {
				for i, name := range []string{"min", "avg", "max"} {
					end := strings.Index(names, " "+name) + 1 + len(name)
					if end != 84+9*(i+1) {
						t.Errorf("column %q ends at %d, its numbers at %d:\n%s\n%s", name, end, 84+9*(i+1), names, data)
					}
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMinMaxColumn: WithMinMax puts time_avg_s after time_max_s once; a
// file with it reads its mean back, one without (an older file, or
// nexar-sim's) reads as 0.
func TestMinMaxColumn(t *testing.T) {
	cols := WithMinMax(LiveColumns(false, true))
	if i := indexOf(cols, ColTimeAvg); i < 1 || cols[i-1] != ColTimeMax || len(WithMinMax(cols)) != len(cols) {
		t.Fatalf("WithMinMax: %v", cols)
	}
	if got := WithMinMax([]string{ColCollective}); len(got) != 2 || got[1] != ColTimeAvg {
		t.Errorf("WithMinMax without time_max_s: %v", got)
	}
	row := Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, DType: "f32", Time: 2e-6, TimeMin: 1e-6, TimeAvg: 2.5e-6, TimeMax: 4e-6, Repeats: 3, BulkThreshold: 65536}
	for _, tt := range []struct {
		cols []string
		want float64
	}{{cols, 2.5e-6}, {LiveColumns(false, true), 0}, {SimColumns, 0}} {
		var b bytes.Buffer
		w := NewWriter(&b, tt.cols, LiveDecimals)
		if err := w.Write(row); err != nil || w.Flush() != nil {
			t.Fatal(err)
		}
		tab, err := Read(&b)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Rows[0]; got.TimeAvg != tt.want || got.TimeMax != row.TimeMax {
			t.Errorf("columns %v: read back mean %g, max %g; want %g, %g", tt.cols, got.TimeAvg, got.TimeMax, tt.want, row.TimeMax)
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
