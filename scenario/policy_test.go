package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
)

const policyScenario = `name = "p"
%TOP%
[network]
preset = "dgx-h100"

[[sweep]]
collective = "allreduce"
algorithms = ["auto", "nccl_ring_simple"]
world = [8, 16]
bytes = [1024, "1GiB"]
%SWEEP%

[[sweep]]
collective = "allreduce"
algorithms = ["auto"]
world = [8]
bytes = [1024]
`

func policyFile(top, sweep string) string {
	return strings.NewReplacer("%TOP%", top, "%SWEEP%", sweep).Replace(policyScenario)
}

func TestPolicyKey(t *testing.T) {
	s, err := Parse("p.toml", []byte(policyFile("", `policy = "nccl"`)))
	if err != nil {
		t.Fatal(err)
	}
	sw := s.Sweeps[0]
	if sw.Policy != "nccl" || sw.Tuning == nil || sw.Tuning.Policy == nil || sw.Tuning.Policy.Name() != "nccl" {
		t.Fatalf("sweep 1: policy %q, tuning %+v", sw.Policy, sw.Tuning)
	}
	if s.Sweeps[1].Policy != "" || (s.Sweeps[1].Tuning != nil && s.Sweeps[1].Tuning.Policy != nil) {
		t.Errorf("sweep 2 has a policy without asking for one")
	}
	ch, err := sw.Tuning.SelectFor(nil, "allreduce", 16, 1<<30, 1<<28)
	if err != nil || ch.Algorithm != "nccl_nvls_tree" {
		t.Errorf("two DGX H100, 1 GiB: %+v, %v", ch, err)
	}

	// At the top level, for every sweep; "table" takes it back.
	s, err = Parse("p.toml", []byte(policyFile(`policy = "nccl"`, `policy = "table"`)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Policy != "nccl" || s.Sweeps[0].Policy != "" || s.Sweeps[0].Tuning != nil && s.Sweeps[0].Tuning.Policy != nil ||
		s.Sweeps[1].Policy != "nccl" || s.Sweeps[1].Tuning.Policy == nil {
		t.Errorf("top-level policy: %q; sweeps %q, %q", s.Policy, s.Sweeps[0].Policy, s.Sweeps[1].Policy)
	}
	// alltoall is the table's, which has no entry for it.
	var pe *algos.PolicyError
	if _, err := s.Sweeps[1].Tuning.SelectFor(nil, "alltoall", 8, 1024, 256); err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "no entry for alltoall") {
		t.Errorf("alltoall under the nccl policy: %v, want the table's error", err)
	}
}

// TestPolicyNCCLEnv: nccl_algo and nccl_proto limit what the nccl
// policy chooses, as NCCL_ALGO and NCCL_PROTO limit NCCL; a value NCCL
// would refuse is an error at its key.
func TestPolicyNCCLEnv(t *testing.T) {
	for _, c := range []struct {
		env, want string
	}{
		{"", "nccl_nvls_tree"},
		{`nccl_algo = "Tree"`, "nccl_tree_"},
		{`nccl_algo = "ring"` + "\n" + `nccl_proto = "LL128"`, "nccl_ring_ll128"},
		{`nccl_algo = "^NVLS,NVLSTree"`, "nccl_"},
	} {
		file := strings.Replace(policyFile("", `policy = "nccl"`), `preset = "dgx-h100"`, "preset = \"dgx-h100\"\n"+c.env, 1)
		s, err := Parse("p.toml", []byte(file))
		if err != nil {
			t.Fatalf("%s: %v", c.env, err)
		}
		ch, err := s.Sweeps[0].Tuning.SelectFor(nil, "allreduce", 16, 1<<30, 1<<28)
		if err != nil || !strings.HasPrefix(ch.Algorithm, c.want) || (c.env != "" && strings.Contains(ch.Algorithm, "nvls")) {
			t.Errorf("%s: two DGX H100, 1 GiB: %+v, %v; want %s...", c.env, ch, err, c.want)
		}
	}
	file := strings.Replace(policyFile("", `policy = "nccl"`), `preset = "dgx-h100"`, "preset = \"dgx-h100\"\nnccl_algo = \"Ring, Tree\"", 1)
	if _, err := Parse("p.toml", []byte(file)); err == nil || !strings.Contains(err.Error(), `network.nccl_algo: NCCL_ALGO="Ring, Tree": unknown name " Tree"`) {
		t.Errorf("a bad nccl_algo: %v", err)
	}
}

func TestPolicyErrors(t *testing.T) {
	for _, c := range []struct {
		name, file string
		line       int
		key, msg   string
	}{
		{"unknown", policyFile("", `policy = "nccl2"`), 11, "sweep[0].policy", `unknown policy "nccl2"`},
		{"unknown at the top", policyFile(`policy = 3`, ""), 2, "policy", "want a policy's name"},
		{"no auto", strings.Replace(policyFile("", `policy = "nccl"`), `["auto", "nccl_ring_simple"]`, `["nccl_ring_simple"]`, 1), 11, "sweep[0].policy", `"auto", which this sweep does not run`},
		{"no GPU", strings.Replace(policyFile(`policy = "nccl"`, ""), `preset = "dgx-h100"`, "model = \"alpha-beta\"\nlatency = \"2us\"\nbandwidth = \"50GB/s\"", 1), 2, "policy", "describes no GPUs"},
	} {
		_, err := Parse("p.toml", []byte(c.file))
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("%s: %v, want Errors", c.name, err)
		}
		found := false
		for _, e := range es {
			if e.Line == c.line && e.Key == c.key && strings.Contains(e.Msg, c.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %v, want line %d, key %s: %q", c.name, err, c.line, c.key, c.msg)
		}
	}
}

func TestNCCLCluster(t *testing.T) {
	s, err := Parse("p.toml", []byte(policyFile("", "")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Network.NCCLCluster()
	if err != nil {
		t.Fatal(err)
	}
	want := tuner.Cluster{CompCap: 90, CPUArch: tuner.X86, CPUVendor: tuner.Intel, GPUsPerNode: 8, NVLink: 450e9, NVSwitch: true, NVLS: true,
		PCIe: 64e9, NICs: 8, NIC: 50e9, Channels: s.Network.Machine.Channels}
	if c != want {
		t.Errorf("dgx-h100: %+v, want %+v", c, want)
	}
	// Another model: ranks_per_node GPUs a node on the link bandwidth.
	s, err = Parse("p.toml", []byte(strings.Replace(policyFile("", `policy = "nccl"`), `preset = "dgx-h100"`,
		"model = \"alpha-beta\"\nlatency = \"2us\"\nbandwidth = \"50GB/s\"\ngpu = \"ampere\"\ncpu = \"amd\"\nranks_per_node = 4", 1)))
	if err != nil {
		t.Fatal(err)
	}
	c, _ = s.Network.NCCLCluster()
	if c.GPUsPerNode != 4 || c.NVLink != 50e9 || c.NIC != 50e9 || c.CompCap != 80 || c.CPUVendor != tuner.AMD || c.NVLS {
		t.Errorf("alpha-beta: %+v", c)
	}
}
