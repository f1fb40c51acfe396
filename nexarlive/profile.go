package nexarlive

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// run --profile DIR gives each rank process a CPU profile of its own,
// DIR/rank-N.pprof, through the worker's --profile FILE: what a rank
// spends its processor on over the whole run (joining, warm-up and every
// point), for go tool pprof.

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
