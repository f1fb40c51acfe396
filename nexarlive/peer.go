package nexarlive

import (
	"flag"
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/verify"
)

func peerCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peer", flag.ContinueOnError)
	name := fs.String("name", "peer", "what to call the other library in the table")
	format := fs.String("format", "", `the peer log's format: "nccl-tests" or "osu" (default: guessed)`)
	var opt calibrate.LogOptions
	fs.StringVar(&opt.Collective, "collective", "", "collective of a log that does not name it")
	fs.IntVar(&opt.World, "world", 0, "number of ranks of a log that does not say (OSU)")
	pos, status, ok := cmdline.ParseCmd("peer", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) != 2 {
		return cmdline.UsageError(stderr, "peer", "want a results file and a peer's log, got %d arguments", len(pos))
	}
	rs, err := live.ReadResultsFile(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live peer: %v\n", err)
		return exitUsage
	}
	log, err := calibrate.ReadFile(pos[1], *format, opt)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live peer: %v\n", err)
		return exitUsage
	}
	rows, err := verify.ComparePeer(live.Rows(rs), log.Samples())
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live peer: %v\n", err)
		return exitUsage
	}
	verify.WritePeerTable(stdout, rows, *name)
	return exitOK
}
