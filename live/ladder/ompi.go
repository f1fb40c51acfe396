package ladder

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
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
	if _, err := exec.LookPath("mpicc"); err != nil {
		return nil, "no mpicc (apt-get install openmpi-bin libopenmpi-dev)", nil
	}
	return measureScript(ctx, script, "--ompi-only", c)
}

// measureGloo runs PyTorch Gloo's allreduce of c.Bytes on two processes
// over TCP through script (scripts/gloo-allreduce/run.sh --gloo-only),
// timed as measureOMPI's, with python (the interpreter with torch), or
// says why it was skipped.
func measureGloo(ctx context.Context, script, python string, c command) ([]float64, string, error) {
	if script == "" {
		return nil, "no --gloo script given", nil
	}
	if err := exec.CommandContext(ctx, python, "-c", "import torch.distributed as d; assert d.is_gloo_available()").Run(); err != nil {
		return nil, fmt.Sprintf("no torch with Gloo for %s (apt-get install python3-torch)", python), nil
	}
	return measureScript(ctx, script, "--gloo-only", c, "PYTHON="+python)
}

// measureScript runs a peer script's one-shot mode (flag) on two
// processes and reads its time of c.Bytes; env is added to the
// script's environment.
func measureScript(ctx context.Context, script, flag string, c command, env ...string) ([]float64, string, error) {
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Sprintf("%v", err), nil
	}
	dir, err := os.MkdirTemp("", "nexar-ladder-peer-*")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, "sh", script, flag, "--np", "2",
		"--sizes", strconv.Itoa(c.Bytes), "--warmup", strconv.Itoa(c.Warmup), "--iters", strconv.Itoa(c.Rounds), "--out", dir)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("%s: %v: %s", script, err, lastLine(errb.String()))
	}
	us, err := peerTime(out.String(), c.Bytes)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", script, err)
	}
	return []float64{us / 1e6}, "", nil
}

// peerTime reads the time in µs of the line of size n from a peer
// script's table (nccl-tests' columns: size, count, type, redop, root,
// time, algbw, busbw, #wrong): the first such line, which must have
// checked right (#wrong 0) and have a positive, finite time.
func peerTime(out string, n int) (float64, error) {
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
		if !(us > 0) || math.IsInf(us, 0) {
			return 0, fmt.Errorf("time %q: want a positive number of µs", f[5])
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
