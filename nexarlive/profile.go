package nexarlive

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// run --profile DIR gives each rank process a CPU profile of its own,
// DIR/rank-N.pprof, through the worker's --profile FILE: what a rank
// spends its processor on over the whole run (joining, warm-up and every
// point), for go tool pprof; and beside it DIR/rank-N.cpu, a line per
// point timed with --timing loop: the process's CPU, page faults and
// context switches per timed iteration (live.Options.CPU), which the
// profile cannot tell apart from the warm-up and the checks.

// cpuFile is where the worker whose CPU profile goes to profile writes
// its CPU per point: rank-N.cpu beside rank-N.pprof.
func cpuFile(profile string) string {
	return strings.TrimSuffix(profile, ".pprof") + ".cpu"
}

// profileFile is the CPU profile of rank's worker in dir.
func profileFile(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("rank-%d.pprof", rank))
}

// profileWorkers makes every worker that command starts write its CPU
// profile into dir (profileFile).
func profileWorkers(command func(int) *exec.Cmd, dir string) func(int) *exec.Cmd {
	return func(rank int) *exec.Cmd {
		c := command(rank)
		c.Args = append(c.Args, "--profile", profileFile(dir, rank))
		return c
	}
}
