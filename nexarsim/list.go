package nexarsim

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

func listCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, status, ok := cmdline.ParseCmd("list", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) > 0 {
		return cmdline.UsageError(stderr, "list", "unexpected argument %q", pos[0])
	}
	fmt.Fprintln(stdout, "Collectives (sweep: collective = NAME, algorithms = [NAME, ...]):")
	for _, name := range algos.CollectiveNames() {
		c, err := algos.Lookup(name)
		if err != nil {
			continue
		}
		var traits []string
		if c.Reduces {
			traits = append(traits, "reduces")
		}
		if c.Rooted {
			traits = append(traits, "rooted")
		}
		if !sweep.HasCheck(c) {
			traits = append(traits, "phantom data only")
		}
		line := "  " + c.Name
		if len(traits) > 0 {
			line += " (" + strings.Join(traits, ", ") + ")"
		}
		fmt.Fprintln(stdout, line)
		for _, a := range c.Algorithms {
			fmt.Fprintf(stdout, "    %-26s %s\n", a.Name, a.Summary)
			if a.SMPI != "" {
				fmt.Fprintf(stdout, "    %-26s SimGrid SMPI's %q (the same algorithm; also a name here)\n", "", a.SMPI)
			}
			if len(a.Aliases) > 0 {
				fmt.Fprintf(stdout, "    %-26s also named %s\n", "", strings.Join(a.Aliases, ", "))
			}
			if a.PowerOfTwo {
				fmt.Fprintf(stdout, "    %-26s needs a power-of-two world size\n", "")
			}
			if len(a.Params) > 0 {
				names := make([]string, 0, len(a.Params))
				for n := range a.Params {
					names = append(names, n)
				}
				sort.Strings(names)
				for i, n := range names {
					names[i] = fmt.Sprintf("%s = %d", n, a.Params[n])
				}
				fmt.Fprintf(stdout, "    %-26s params (defaults): %s\n", "", strings.Join(names, ", "))
			}
		}
	}
	keys := func(ks []scenario.KeyInfo) {
		for _, k := range ks {
			req := "optional"
			if k.Required {
				req = "required"
			}
			fmt.Fprintf(stdout, "    %-18s %s; %s\n", k.Name, req, k.Doc)
		}
	}
	fmt.Fprintln(stdout, "\nNetwork models ([network] model = NAME):")
	for _, m := range scenario.Models() {
		fmt.Fprintf(stdout, "  %s: %s\n", m.Name, m.Summary)
		keys(m.Keys)
	}
	fmt.Fprintln(stdout, "\nTopologies of the flow model ([network] topology = NAME, then its keys in [network]):")
	for _, t := range scenario.Topologies() {
		fmt.Fprintf(stdout, "  %s: %s\n", t.Name, t.Summary)
		keys(t.Keys)
	}
	fmt.Fprintln(stdout, "\nGPU machines ([network] preset = NAME, any model: the keys of a gpu_cluster network and its")
	fmt.Fprintln(stdout, "  machine, each figure with its source (docs/gpu-presets.md); every key of [network] overrides the preset's)")
	for _, p := range scenario.Presets() {
		fmt.Fprintf(stdout, "  %s: %s\n", p.Name, p.Summary)
		fmt.Fprintf(stdout, "    %s\n", p.Headline())
	}
	fmt.Fprintln(stdout, "\nMachine ([network], any model): what algorithms that adapt to the hardware (NCCL's) are told of it")
	keys(scenario.PresetKeys())
	keys(scenario.MachineKeys())
	fmt.Fprintln(stdout, "\nNCCL's figures ([network.nccl], any model): override the defaults for the GPU and CPU;")
	fmt.Fprintln(stdout, "  bandwidths as \"20GB/s\" (\"inf\": no cap), durations as \"2us\"")
	keys(scenario.NCCLKeys())
	fmt.Fprintln(stdout, "\nTraining step ([workload], run by nexar-sim step): a model, its layouts and how it trains;")
	fmt.Fprintln(stdout, "  layout, schedule, bucket, zero and each group's algorithms may be lists, which the step sweeps")
	keys(scenario.WorkloadKeys())
	fmt.Fprintln(stdout, "\nSelection policies (policy = NAME, at the top level or in a [[sweep]]): how \"auto\" selects")
	for _, p := range scenario.Policies() {
		fmt.Fprintf(stdout, "  %s: %s\n", p.Name, p.Summary)
	}
	fmt.Fprintln(stdout, "\nMessage protocol ([network], any model): how sends meet receives, as in MPI libraries;")
	fmt.Fprintln(stdout, "  eager_limit = \"64KiB\" with envelope = \"16B\" is SimGrid SMPI's protocol")
	keys(scenario.ProtocolKeys())
	fmt.Fprintln(stdout, "\nTransport ([network.transport], any model): realnet's QUIC and bulk TCP paths, each alpha-beta;")
	fmt.Fprintln(stdout, "  run derives where the bulk path (a QUIC round trip for permission, then TCP) overtakes QUIC,")
	fmt.Fprintln(stdout, "  written to tuning.toml as [transport] bulk_threshold; sweeps run on it with model = \"realnet\"")
	keys(scenario.TransportKeys())
	fmt.Fprintln(stdout, "\nMesh ([network], any model): which ranks are joined; messages between others are relayed hop by hop")
	keys(scenario.MeshKeys())
	fmt.Fprintln(stdout, "\nNoise and faults (top-level [[fault]] tables, kind = NAME, any model):")
	for _, f := range scenario.Faults() {
		s := f.Summary
		if f.Random {
			s += " (random: seeded, lets a sweep repeat)"
		}
		fmt.Fprintf(stdout, "  %s: %s\n", f.Kind, s)
		keys(f.Keys)
	}
	return exitOK
}
