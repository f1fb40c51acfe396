package nexarsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/derive"
)

// A run of NCCL's algorithms on a GPU preset writes nccl_tuner.conf
// beside tuning.toml, in what the example plugin's parser reads, with the
// nodes of each world; merged shards write the same.
func TestNCCLTunerConf(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "g.toml", `name = "g"
[network]
preset = "dgx-h100"

[[sweep]]
collective = "allreduce"
algorithms = ["auto", "nccl_ring_ll", "nccl_tree_ll"]
world = [8, 16]
bytes = [1024, "64KiB"]
policy = "nccl"
`)
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "--no-plots", "-q")
	data, err := os.ReadFile(filepath.Join(out, derive.NCCLTunerFile))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := tuner.ParseConfig(strings.NewReader(string(data)), true)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	nodes := map[int]int{}
	for _, l := range lines {
		if l.Rule.Coll != tuner.AllReduce || l.Rule.Channels < 1 {
			t.Errorf("line %d: %+v", l.Line, l.Rule)
		}
		nodes[l.Rule.Ranks] = l.Rule.Nodes
	}
	if nodes[8] != 1 || nodes[16] != 2 || nodes[-1] != -1 {
		t.Errorf("nodes by ranks %v\n%s", nodes, data)
	}
	var rep struct {
		NCCLTuner bool `json:"nccl_tuner_conf"`
	}
	js, _ := os.ReadFile(filepath.Join(out, jsonFile))
	if err := json.Unmarshal(js, &rep); err != nil || !rep.NCCLTuner {
		t.Errorf("results.json: %v, nccl_tuner_conf %t", err, rep.NCCLTuner)
	}

	// Two shards merged give the same file.
	var shards []string
	for _, sh := range []string{"1/2", "2/2"} {
		d := filepath.Join(dir, "shard"+sh[:1])
		runOK(t, "run", file, "--out", d, "--no-plots", "-q", "--shard", sh)
		shards = append(shards, d)
	}
	merged := filepath.Join(dir, "merged")
	runOK(t, append([]string{"merge", "--out", merged, "--no-plots", "-q"}, shards...)...)
	again, err := os.ReadFile(filepath.Join(merged, derive.NCCLTunerFile))
	if err != nil {
		t.Fatal(err)
	}
	// The comments name the run; the rules are the same.
	rules := func(b []byte) string {
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if rules(again) != rules(data) {
		t.Errorf("merged:\n%s\nrun:\n%s", again, data)
	}
}
