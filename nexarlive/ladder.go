package nexarlive

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/live/ladder"
	"github.com/nexar-go/nexar-go/units"
)

// defaultOMPIScript is where the Open MPI rung's script lies in a
// checkout, run from its root.
const defaultOMPIScript = "scripts/ompi-allreduce/run.sh"

// defaultGlooScript is the Gloo rung's script, likewise.
const defaultGlooScript = "scripts/gloo-allreduce/run.sh"

func ladderCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ladder", flag.ContinueOnError)
	var opt ladder.Options
	fs.IntVar(&opt.Rounds, "rounds", ladder.DefaultRounds, "timed round trips of each latency rung")
	fs.IntVar(&opt.Warmup, "warmup", ladder.DefaultWarmup, "untimed round trips before them")
	bwBytes := fs.String("bw-bytes", "16MiB", "message of the bandwidth rungs")
	fs.IntVar(&opt.BWRounds, "bw-rounds", ladder.DefaultBWRounds, "timed transfers of each bandwidth rung")
	fs.IntVar(&opt.Repeat, "repeat", 1, "passes over the whole ladder, rounds pooled")
	fs.IntVar(&opt.Iters, "iters", ladder.DefaultIters, "timed iterations of the nexar-live rungs")
	only := fs.String("only", "", "comma-separated rungs to run (default all): "+strings.Join(ladder.Keys(), ","))
	fs.StringVar(&opt.OMPIScript, "ompi", defaultOMPIScript, `Open MPI rung's script ("" skips it)`)
	fs.StringVar(&opt.GlooScript, "gloo", defaultGlooScript, `PyTorch Gloo rung's script ("" skips it)`)
	fs.StringVar(&opt.Python, "python", ladder.DefaultPython, "the Python with torch, for the Gloo rung")
	csvFile := fs.String("csv", "", "also write the rungs as CSV to this file")
	fs.StringVar(&opt.Profile, "profile", "", "write CPU profiles of both processes into this directory")
	pos, status, ok := cmdline.ParseCmd("ladder", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) != 0 {
		return cmdline.UsageError(stderr, "ladder", "no arguments expected, got %q", pos)
	}
	n, err := units.ParseBytes(*bwBytes)
	if err != nil || n < 1 {
		return cmdline.UsageError(stderr, "ladder", "--bw-bytes %q: want a size of at least 1 byte", *bwBytes)
	}
	opt.BWBytes = int(n)
	if *only != "" {
		opt.Only = strings.Split(*only, ",")
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live ladder: %v\n", err)
		return exitRanks
	}
	opt.Peer = func(args []string) *exec.Cmd { return exec.Command(exe, append([]string{"ladder-peer"}, args...)...) }
	opt.Progress = stderr
	ctx, stop := signalContext()
	defer stop()
	rep, err := ladder.Run(ctx, opt)
	if rep != nil {
		rep.WriteTable(stdout)
	}
	if err == nil && *csvFile != "" {
		var b bytes.Buffer
		if err = rep.WriteCSV(&b); err == nil {
			err = atomicfile.WriteFile(*csvFile, b.Bytes())
		}
	}
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "nexar-live ladder: interrupted\n")
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "nexar-live ladder: %v\n", err)
	if strings.Contains(err.Error(), "unknown rung") {
		return exitUsage
	}
	return exitRanks
}

// ladderPeerCmd is the other process of a ladder (not for users).
func ladderPeerCmd(args []string, stdout, stderr io.Writer) int {
	if err := ladder.ServePeer(os.Stdin, stdout, args); err != nil {
		fmt.Fprintf(stderr, "nexar-live ladder-peer: %v\n", err)
		return exitRanks
	}
	return exitOK
}
