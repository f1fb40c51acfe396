package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
)

// Files this package writes into an output directory.
const (
	// CompareFile is predictions beside measurements (WriteCompareCSV, or
	// WriteStepCompareCSV for training steps), ComparePlotFile their
	// figure (ComparePlot).
	CompareFile     = "compare.csv"
	ComparePlotFile = "compare.png"
	// CrossoverFile is nexar-live verify's crossovers (WriteCrossoverCSV),
	// CrossoverPlotFile their figure (CrossoverPlot).
	CrossoverFile     = "verify.csv"
	CrossoverPlotFile = "verify.png"
)

// CompareRun holds the rows rs of a finished run against the network
// model of its scenario s (nothing without one): it predicts every point
// (Predict), prints the error over them to table (if not nil), and writes
// compare.csv and compare.png into dir (if not ""). It is the
// live.Output.Compare of nexar-live's runs. A prediction the model cannot
// make, or a figure that cannot be drawn, is a warning; a file that
// cannot be written, compare.csv or compare.png, is an error.
func CompareRun(s *scenario.Scenario, dir string, table io.Writer, rs []results.Row) ([]string, error) {
	if s == nil {
		return nil, nil
	}
	cs, err := Predict(s, rs)
	if err != nil {
		return []string{fmt.Sprintf("no comparison with the model: %v", err)}, nil
	}
	if table != nil {
		fmt.Fprintf(table, "# Model %q of %s: %v\n", s.Network.Model, s.File, Summarize(cs))
		if note := StagingNote(s, rs); note != "" {
			fmt.Fprintf(table, "# %s\n", note)
		}
	}
	if dir == "" {
		return nil, nil
	}
	var b bytes.Buffer
	if err := WriteCompareCSV(&b, cs); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, CompareFile), b.Bytes()); err != nil {
		return nil, err
	}
	if err := ComparePlot(filepath.Join(dir, ComparePlotFile), CompareSubtitle(s), cs); err != nil {
		if WriteFailed(err) {
			return nil, err
		}
		return []string{fmt.Sprintf("no comparison plot: %v", err)}, nil
	}
	return nil, nil
}

// WriteFailed reports whether err is a file's that could not be written
// (a full disk, a directory that refuses it), as opposed to a figure that
// could not be drawn: the first fails a command, the second is a warning.
func WriteFailed(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}
