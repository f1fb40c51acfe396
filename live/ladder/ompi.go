package ladder

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// measureOMPI runs Open MPI's allreduce of c.Bytes on two processes over
// TCP through script (scripts/ompi-allreduce/run.sh --ompi-only) and
// returns its time per iteration (one sample: the script reports the mean
// of c.Rounds back-to-back iterations of the slowest rank, nccl-tests'
// way), or why it was skipped.
func measureOMPI(ctx context.Context, script string, c command) ([]float64, string, error) {
	if script == "" {
		return nil, "no --ompi script given", nil
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Sprintf("%v", err), nil
	}
	if _, err := exec.LookPath("mpicc"); err != nil {
		return nil, "no mpicc (apt-get install openmpi-bin libopenmpi-dev)", nil
	}
	dir, err := os.MkdirTemp("", "nexar-ladder-ompi-*")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, "sh", script, "--ompi-only", "--np", "2",
		"--sizes", strconv.Itoa(c.Bytes), "--warmup", strconv.Itoa(c.Warmup), "--iters", strconv.Itoa(c.Rounds), "--out", dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("%s: %v: %s", script, err, lastLine(errb.String()))
	}
	us, err := ompiTime(out.String(), c.Bytes)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", script, err)
	}
	return []float64{us / 1e6}, "", nil
}

// ompiTime reads the time in µs of the line of size n from the script's
// table (nccl-tests' columns: size, count, type, redop, root, time, ...).
func ompiTime(out string, n int) (float64, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || strings.HasPrefix(f[0], "#") || f[0] != strconv.Itoa(n) {
			continue
		}
		us, err := strconv.ParseFloat(f[5], 64)
		if err != nil {
			return 0, fmt.Errorf("time %q: %v", f[5], err)
		}
		if f[8] != "0" {
			return 0, fmt.Errorf("%s wrong elements", f[8])
		}
		return us, nil
	}
	return 0, fmt.Errorf("no line for %d bytes in its output", n)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
