package nexarlive

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/internal/nccltests"
	"github.com/nexar-go/nexar-go/scenario"
)

// flagsScenarioFile is the scenario run writes into its output directory
// from nccl-tests' flags; the workers read it, and 'nexar-live run --np N
// DIR/scenario.toml' runs it again.
const flagsScenarioFile = "scenario.toml"

// defaultNetwork is what a run from flags predicts with (compare.csv):
// the alpha-beta model calibrated on a 4-rank loopback run of
// live/examples/loopback-allreduce.toml on the development machine. Give
// yours with --latency and --bandwidth, from 'nexar-live calibrate'.
var defaultNetwork = nccltests.Network{Latency: "399us", Bandwidth: "413MB/s"}

// flagsScenario makes the scenario of nf for np ranks, to be written as
// file: it returns it read and checked, and its text.
func flagsScenario(nf *nccltests.Flags, np int, file string) (*scenario.Scenario, []byte, error) {
	text, _, err := nf.Scenario([]int{np}, "host")
	if err != nil {
		return nil, nil, err
	}
	s, err := nccltests.Parse(file, text)
	if err != nil {
		return nil, nil, fmt.Errorf("the sweep of the flags: %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	return s, text, nil
}

// writeFlagsScenario writes text, a scenario flagsScenario made, as file,
// creating its directory.
func writeFlagsScenario(text []byte, file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	if err := atomicfile.WriteFile(file, text); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	return nil
}

// flagGiven reports whether the flag name was set on fs's command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
