package nexarlive

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/internal/nccltests"
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

// writeFlagsScenario writes the scenario of nf for np ranks, checked,
// into out, and returns its path.
func writeFlagsScenario(nf *nccltests.Flags, np int, out string) (string, error) {
	text, _, err := nf.Scenario([]int{np}, "host")
	if err != nil {
		return "", err
	}
	file := filepath.Join(out, flagsScenarioFile)
	if _, err := nccltests.Parse(file, text); err != nil {
		return "", fmt.Errorf("the sweep of the flags: %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	if err := os.WriteFile(file, text, 0o644); err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	return file, nil
}

// flagGiven reports whether the flag name was set on fs's command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
