package ladder

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"os/exec"
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
		if g.Key == "ompi" {
			if g.Skipped == "" {
				t.Errorf("ompi rung without a script was not skipped")
			}
			continue
		}
		if g.Skipped != "" || g.Value <= 0 || g.Min <= 0 || g.Samples == 0 {
			t.Errorf("rung %s: %+v", g.Key, g)
		}
		if g.Below != "" && g.Below != "tcp" && g.Below != "ompi" && g.Ratio <= 0 {
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

func TestOMPITime(t *testing.T) {
	out := `# ompi-allreduce
#       size         count      type   redop    root     time   algbw   busbw #wrong
           8             2     float     sum      -1    10.91    0.00    0.00       0
     1048576        262144     float     sum      -1   318.11    3.30    3.30       0
`
	us, err := ompiTime(out, 8)
	if err != nil || us != 10.91 {
		t.Fatalf("ompiTime = %v, %v", us, err)
	}
	if _, err := ompiTime(out, 64); err == nil {
		t.Fatal("no error for a missing size")
	}
	if _, err := ompiTime(strings.Replace(out, "0.00       0", "0.00       3", 1), 8); err == nil {
		t.Fatal("no error for wrong elements")
	}
}
