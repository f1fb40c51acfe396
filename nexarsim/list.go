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

// listCmd is 'nexar-sim list': what a scenario may name, the collectives
// and their algorithms first, then the tables and their keys.
func listCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, status, ok := cmdline.ParseCmd("list", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) > 0 {
		return cmdline.UsageError(stderr, "list", "unexpected argument %q", pos[0])
	}
	listCollectives(stdout)
	listTables(stdout)
	return exitOK
}

// listCollectives lists the collectives, each with its traits and its
// algorithms.
func listCollectives(w io.Writer) {
	fmt.Fprintln(w, "Collectives (sweep: collective = NAME, algorithms = [NAME, ...]):")
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
		fmt.Fprintln(w, line)
		for _, a := range c.Algorithms {
			listAlgorithm(w, a)
		}
	}
}

// listAlgorithm lists an algorithm: its summary, its other names, what it
// needs, and its parameters with their defaults, in name order.
func listAlgorithm(w io.Writer, a *algos.Algorithm) {
	fmt.Fprintf(w, "    %-26s %s\n", a.Name, a.Summary)
	if a.SMPI != "" {
		fmt.Fprintf(w, "    %-26s SimGrid SMPI's %q (the same algorithm; also a name here)\n", "", a.SMPI)
	}
	if len(a.Aliases) > 0 {
		fmt.Fprintf(w, "    %-26s also named %s\n", "", strings.Join(a.Aliases, ", "))
	}
	if a.PowerOfTwo {
		fmt.Fprintf(w, "    %-26s needs a power-of-two world size\n", "")
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
		fmt.Fprintf(w, "    %-26s params (defaults): %s\n", "", strings.Join(names, ", "))
	}
}

// listKeys lists the keys of a table, each required or optional.
func listKeys(w io.Writer, ks []scenario.KeyInfo) {
	for _, k := range ks {
		req := "optional"
		if k.Required {
			req = "required"
		}
		fmt.Fprintf(w, "    %-18s %s; %s\n", k.Name, req, k.Doc)
	}
}

// listTables lists the tables of a scenario besides [[sweep]]: the
// network models, topologies, presets, policies and faults, and the keys
// of each table.
func listTables(w io.Writer) {
	fmt.Fprintln(w, "\nNetwork models ([network] model = NAME):")
	for _, m := range scenario.Models() {
		fmt.Fprintf(w, "  %s: %s\n", m.Name, m.Summary)
		listKeys(w, m.Keys)
	}
	fmt.Fprintln(w, "\nTopologies of the flow model ([network] topology = NAME, then its keys in [network]):")
	for _, t := range scenario.Topologies() {
		fmt.Fprintf(w, "  %s: %s\n", t.Name, t.Summary)
		listKeys(w, t.Keys)
	}
	fmt.Fprintln(w, "\nGPU machines ([network] preset = NAME, any model: the keys of a gpu_cluster network and its")
	fmt.Fprintln(w, "  machine, each figure with its source (docs/gpu-presets.md); every key of [network] overrides the preset's)")
	for _, p := range scenario.Presets() {
		fmt.Fprintf(w, "  %s: %s\n", p.Name, p.Summary)
		fmt.Fprintf(w, "    %s\n", p.Headline())
	}
	fmt.Fprintln(w, "\nMachine ([network], any model): what algorithms that adapt to the hardware (NCCL's) are told of it")
	listKeys(w, scenario.PresetKeys())
	listKeys(w, scenario.MachineKeys())
	fmt.Fprintln(w, "\nNCCL's figures ([network.nccl], any model): override the defaults for the GPU and CPU;")
	fmt.Fprintln(w, "  bandwidths as \"20GB/s\" (\"inf\": no cap), durations as \"2us\"")
	listKeys(w, scenario.NCCLKeys())
	fmt.Fprintln(w, "\nTraining step ([workload], run by nexar-sim step): a model, its layouts and how it trains;")
	fmt.Fprintln(w, "  layout, schedule, bucket, zero and each group's algorithms may be lists, which the step sweeps")
	listKeys(w, scenario.WorkloadKeys())
	fmt.Fprintln(w, "\nSelection policies (policy = NAME, at the top level or in a [[sweep]]): how \"auto\" selects")
	for _, p := range scenario.Policies() {
		fmt.Fprintf(w, "  %s: %s\n", p.Name, p.Summary)
	}
	fmt.Fprintln(w, "\nMessage protocol ([network], any model): how sends meet receives, as in MPI libraries;")
	fmt.Fprintln(w, "  eager_limit = \"64KiB\" with envelope = \"16B\" is SimGrid SMPI's protocol")
	listKeys(w, scenario.ProtocolKeys())
	fmt.Fprintln(w, "\nTransport ([network.transport], any model): realnet's QUIC and bulk TCP paths, each alpha-beta;")
	fmt.Fprintln(w, "  run derives where the bulk path (a TCP round trip for permission, then the payload on TCP) overtakes QUIC,")
	fmt.Fprintln(w, "  written to tuning.toml as [transport] bulk_threshold; sweeps run on it with model = \"realnet\"")
	listKeys(w, scenario.TransportKeys())
	fmt.Fprintln(w, "\nMesh ([network], any model): which ranks are joined; messages between others are relayed hop by hop")
	listKeys(w, scenario.MeshKeys())
	fmt.Fprintln(w, "\nNoise and faults (top-level [[fault]] tables, kind = NAME, any model):")
	for _, f := range scenario.Faults() {
		s := f.Summary
		if f.Random {
			s += " (random: seeded, lets a sweep repeat)"
		}
		fmt.Fprintf(w, "  %s: %s\n", f.Kind, s)
		listKeys(w, f.Keys)
	}
}
