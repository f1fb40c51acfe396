package nexarlive

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/internal/calibratecmd"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/verify"
)

func compareCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	out := fs.String("out", "", "directory for compare.csv and compare.png (default: print only)")
	pos, status, ok := cmdline.ParseCmd("compare", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) != 2 {
		return cmdline.UsageError(stderr, "compare", "want a scenario file and a results file, got %d arguments", len(pos))
	}
	s, err := scenario.Load(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	rs, err := live.ReadResultsFile(pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
		return exitUsage
	}
	cs, err := verify.Predict(s, live.Rows(rs))
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "model %q of %s against %s\n", s.Network.Model, pos[0], pos[1])
	if note := verify.StagingNote(s, live.Rows(rs)); note != "" {
		fmt.Fprintln(stdout, note)
	}
	printSummary(stdout, cs)
	dir := *out
	if dir == "" {
		dir = filepath.Dir(pos[1])
	}
	sum := verify.Summarize(cs)
	if hint := calibrateHint("compare", pos[0], sum.Median, sum.N, []string{pos[1]}, dir); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o777); err != nil {
			return cmdline.UsageError(stderr, "compare", "--out: %v", err)
		}
		var b bytes.Buffer
		if err := verify.WriteCompareCSV(&b, cs); err != nil {
			fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
			return exitRanks
		}
		if err := atomicfile.WriteFile(filepath.Join(*out, verify.CompareFile), b.Bytes()); err != nil {
			fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
			return exitRanks
		}
		if err := verify.ComparePlot(filepath.Join(*out, verify.ComparePlotFile), verify.CompareSubtitle(s), cs); err != nil {
			if verify.WriteFailed(err) {
				fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
				return exitRanks
			}
			fmt.Fprintf(stderr, "nexar-live compare: no plot: %v\n", err)
		}
		fmt.Fprintf(stderr, "nexar-live compare: wrote %s and %s\n", filepath.Join(*out, verify.CompareFile), filepath.Join(*out, verify.ComparePlotFile))
	}
	return exitOK
}

// printSummary prints the error of a model over points, and its worst
// points.
func printSummary(w io.Writer, cs []verify.Comparison) {
	s := verify.Summarize(cs)
	fmt.Fprintf(w, "%v\n", s)
	if len(s.Worst) == 0 {
		return
	}
	fmt.Fprintf(w, "worst points:\n")
	for _, c := range s.Worst {
		fmt.Fprintf(w, "  %-16s %-30s p=%-3d %10s  predicted %9s  measured %9s  (%+.0f%%)\n", c.Collective, c.Algorithm, c.World,
			units.FormatBytes(float64(c.Bytes)), units.FormatSeconds(c.Predicted), units.FormatSeconds(c.Time), 100*(c.Ratio()-1))
	}
}

// calibrateCmd is the calibrate command nexar-sim shares.
var calibrateCmd = calibratecmd.Command(&cmdline, exitRanks)
