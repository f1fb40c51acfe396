package nexarsim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestWorldChangesSurviveResumeAndMerge checks that a shrinking recovery
// and a join, which results.csv has no column for, reach results.json
// byte-identical after --resume from a checkpoint past them and after a
// merge of shards, one of which holds them.
func TestWorldChangesSurviveResumeAndMerge(t *testing.T) {
	for _, name := range []string{"recovery-shrink.toml", "elastic-join.toml"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("..", "scenarios", name)
			dir := t.TempDir()
			whole := filepath.Join(dir, "whole")
			runOK(t, "run", file, "--out", whole, "--no-plots", "-q")
			want := readFile(t, filepath.Join(whole, jsonFile))
			if !bytes.Contains(want, []byte(`"recovery"`)) && !bytes.Contains(want, []byte(`"join"`)) {
				t.Fatalf("results.json of %s reports no world change", name)
			}

			// An interrupted run's checkpoint, its first 6 of 7 points past
			// the change on point 4 (as a run writes it, row by row).
			s, err := scenario.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			points, err := sweep.Plan(s)
			if err != nil {
				t.Fatal(err)
			}
			resumed := filepath.Join(dir, "resumed")
			if err := os.Mkdir(resumed, 0o777); err != nil {
				t.Fatal(err)
			}
			ckPath := filepath.Join(resumed, checkpointFile)
			ck, err := writeCheckpoint(ckPath, fmt.Sprintf("%s hash=%s shard=%s", checkpointMagic, s.Hash, shard{1, 1}), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range points[:6] {
				r, err := sweep.RunPoint(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := ck.add(r); err != nil {
					t.Fatal(err)
				}
			}
			ck.Close()
			if !strings.Contains(string(readFile(t, ckPath)), changePrefix) {
				t.Fatalf("the checkpoint holds no world change:\n%s", readFile(t, ckPath))
			}
			stderr := runOK(t, "run", file, "--out", resumed, "--no-plots", "--resume")
			if !strings.Contains(stderr, "resuming after 6 of 7 points") {
				t.Fatalf("did not resume: %s", stderr)
			}
			if got := readFile(t, filepath.Join(resumed, jsonFile)); !bytes.Equal(got, want) {
				t.Errorf("the resumed run's results.json differs from the whole run's:\n%s\nwant\n%s", got, want)
			}

			// Shards: 3 of them, point 4 in shard 2.
			var shards []string
			for i := 1; i <= 3; i++ {
				out := filepath.Join(dir, fmt.Sprintf("shard%d", i))
				runOK(t, "run", file, "--out", out, "--shard", fmt.Sprintf("%d/3", i), "-q")
				shards = append(shards, out)
			}
			merged := filepath.Join(dir, "merged")
			runOK(t, "merge", "--out", merged, "--no-plots", "-q", shards[2], shards[0], shards[1])
			if got := readFile(t, filepath.Join(merged, jsonFile)); !bytes.Equal(got, want) {
				t.Errorf("the merged results.json differs from the whole run's:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
