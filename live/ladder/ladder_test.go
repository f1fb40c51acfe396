package ladder

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary is its own peer process: with LADDER_TEST_PEER set,
// TestMain serves a ladder instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("LADDER_TEST_PEER") != "" {
		if err := ServePeer(os.Stdin, os.Stdout, os.Args[1:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testPeer(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LADDER_TEST_PEER=1")
	return cmd
}

// TestLadder runs every rung, briefly, between two real processes.
func TestLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and sockets")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Rounds: 20, Warmup: 5, BWBytes: 256 << 10, BWRounds: 2, Iters: 20, Peer: testPeer})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rungs) != len(Keys()) {
		t.Fatalf("%d rungs, want %d", len(rep.Rungs), len(Keys()))
	}
	for _, g := range rep.Rungs {
		if g.Key == "ompi" || g.Key == "gloo" {
			if g.Skipped == "" {
				t.Errorf("%s rung without a script was not skipped", g.Key)
			}
			continue
		}
		if g.Skipped != "" || g.Value <= 0 || g.Min <= 0 || g.Samples == 0 {
			t.Errorf("rung %s: %+v", g.Key, g)
		}
		if g.Below != "" && g.Below != "tcp" && g.Below != "ompi" && g.Below != "gloo" && g.Ratio <= 0 {
			t.Errorf("rung %s: no ratio to %s", g.Key, g.Below)
		}
		if !g.Bandwidth && g.Min > g.Value || g.Bandwidth && g.Min < g.Value {
			t.Errorf("rung %s: best %g worse than median %g", g.Key, g.Min, g.Value)
		}
	}
	var tab bytes.Buffer
	rep.WriteTable(&tab)
	for _, k := range Keys() {
		if !strings.Contains(tab.String(), "\n"+k+" ") {
			t.Errorf("table lacks rung %s:\n%s", k, tab.String())
		}
	}
	// The columns line up: every name starts at one column, and every
	// median (or "-" where the rung was skipped) sits past the longest
	// name.
	nameW, nameCol := 0, -1
	for _, g := range rep.Rungs {
		nameW = max(nameW, len(g.Name))
	}
	for _, g := range rep.Rungs {
		for _, line := range strings.Split(tab.String(), "\n") {
			if !strings.HasPrefix(line, g.Key+" ") {
				continue
			}
			col := strings.Index(line, g.Name)
			if nameCol < 0 {
				nameCol = col
			}
			if col != nameCol || len(line) < col+nameW+11 {
				t.Fatalf("rung %s: name at column %d (want %d), or short: %q", g.Key, col, nameCol, line)
			}
			v := strings.TrimSpace(line[col+nameW : col+nameW+11])
			if _, err := strconv.ParseFloat(v, 64); err != nil && v != "-" {
				t.Errorf("rung %s: no median at its column: %q", g.Key, line)
			}
		}
	}
	var c bytes.Buffer
	if err := rep.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != len(rep.Rungs)+1 || len(recs[0]) != len(CSVHeader) {
		t.Fatalf("csv: %v, %d records", err, len(recs))
	}
}

func TestLadderUnknownRung(t *testing.T) {
	_, err := Run(context.Background(), Options{Only: []string{"nope"}, Peer: testPeer})
	if err == nil || !strings.Contains(err.Error(), "unknown rung") {
		t.Fatalf("err = %v", err)
	}
}

const peerTable = `# ompi-allreduce
#       size         count      type   redop    root     time   algbw   busbw #wrong
           8             2     float     sum      -1    10.91    0.00    0.00       0
     1048576        262144     float     sum      -1   318.11    3.30    3.30       0
# load average: 0.52 0.60 0.71
`

func TestPeerTime(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		n         int
		want      float64 // 0: an error
	}{
		{"small", peerTable, 8, 10.91},
		{"large", peerTable, 1 << 20, 318.11},
		{"missing size", peerTable, 64, 0},
		{"wrong elements", strings.Replace(peerTable, "0.00       0", "0.00       3", 1), 8, 0},
		{"time not a number", strings.Replace(peerTable, "10.91", "N/A", 1), 8, 0},
		{"zero time", strings.Replace(peerTable, "   10.91", "    0.00", 1), 8, 0},
		{"infinite time", strings.Replace(peerTable, "10.91", "+Inf", 1), 8, 0},
		{"short line", "8 2 float sum -1 10.91 0.00 0.00\n", 8, 0},
		{"gloo skip comment", "# reduce_scatter skipped: ProcessGroupGloo does not support reduce_scatter\n", 8, 0},
	} {
		us, err := peerTime(tc.out, tc.n)
		switch {
		case tc.want == 0 && err == nil:
			t.Errorf("%s: peerTime = %v, want an error", tc.name, us)
		case tc.want != 0 && (err != nil || us != tc.want):
			t.Errorf("%s: peerTime = %v, %v, want %v", tc.name, us, err, tc.want)
		}
	}
}

// FuzzPeerTime: any output gives a positive finite time or an error,
// never a panic, and a time only from a line of the size asked for.
func FuzzPeerTime(f *testing.F) {
	f.Add(peerTable, 8)
	f.Add(peerTable, 1<<20)
	f.Add("8 2 float sum -1 1e999 0 0 0", 8)
	f.Add("8 2 float sum -1 NaN 0 0 0", 8)
	f.Fuzz(func(t *testing.T, out string, n int) {
		us, err := peerTime(out, n)
		if err != nil {
			return
		}
		if !(us > 0) || math.IsInf(us, 0) {
			t.Fatalf("peerTime = %v without an error", us)
		}
		if !strings.Contains(out, strconv.Itoa(n)) {
			t.Fatalf("time %v for size %d, which the output does not name", us, n)
		}
	})
}

// TestGlooRung runs the Gloo rung through the real script where torch
// is installed (apt-get install python3-torch).
func TestGlooRung(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python processes")
	}
	if exec.Command(DefaultPython, "-c", "import torch.distributed").Run() != nil {
		t.Skip("no torch for " + DefaultPython)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Only: []string{"tcp", "gloo"}, Rounds: 20, Warmup: 5, Iters: 20, Peer: testPeer,
		GlooScript: "../../scripts/gloo-allreduce/run.sh"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Rungs {
		if g.Key == "gloo" && (g.Skipped != "" || g.Value <= 0 || g.Ratio <= 0) {
			t.Errorf("gloo rung: %+v", g)
		}
	}
}

func TestGlooRungNoTorch(t *testing.T) {
	_, why, err := measureGloo(context.Background(), "../../scripts/gloo-allreduce/run.sh", "/nonexistent/python3", command{Bytes: 8, Rounds: 1})
	if err != nil || !strings.Contains(why, "python3-torch") {
		t.Fatalf("measureGloo without torch: %q, %v", why, err)
	}
}
