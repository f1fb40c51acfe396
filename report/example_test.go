package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/report"
)

// Write makes report.html of a run's folder: here a folder that holds a
// results.csv only.
func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)
	csv := "collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s\n" +
		"allreduce,ring,4,4096,f32,0.00002,0.2048,0.3072\n"
	os.WriteFile(filepath.Join(dir, "results.csv"), []byte(csv), 0o644)
	err := report.Write(dir, report.Info{Title: "nexar-sim run", Scenario: "study", Network: "alpha-beta: latency 5us, bandwidth 12.5GB/s"})
	page, _ := os.ReadFile(filepath.Join(dir, report.File))
	for _, want := range []string{"<h1>nexar-sim run: study</h1>", "allreduce · ring · 4 ranks", "<td>20.00</td>"} {
		fmt.Println(want, strings.Contains(string(page), want))
	}
	fmt.Println(err)
	// Output:
	// <h1>nexar-sim run: study</h1> true
	// allreduce · ring · 4 ranks true
	// <td>20.00</td> true
	// <nil>
}
