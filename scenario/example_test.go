package scenario_test

import (
	"fmt"

	"github.com/nexar-go/nexar-go/scenario"
)

func ExampleParse() {
	src := `name = "example"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, "4..16 x2"]
bytes = [0, "1KiB..4KiB"]
`
	s, err := scenario.Parse("example.toml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s %+v\n", s.Name, s.Network.Model, s.Network.Sim)
	for _, sw := range s.Sweeps {
		fmt.Printf("line %d: %s %s world=%v bytes=%v %s %s %s\n",
			sw.Line, sw.Collective.Name, sw.Algorithms[0].Name, sw.World, sw.Bytes, sw.DTypes[0], sw.Op, sw.Data)
	}
	// Output:
	// example: alpha-beta {Latency:5us Bandwidth:1.25e+10 ReduceBandwidth:2.5e+10 SwitchBandwidth:0}
	// line 9: allreduce ring world=[2 4 8 16] bytes=[0 1024 2048 4096] f32 sum phantom
}

func ExampleParse_errors() {
	src := `name = "broken"

[network]
model = "alpha-beta"
latency = "5"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [0, 8]
bytes = [1022]
colour = "red"
`
	_, err := scenario.Parse("broken.toml", []byte(src))
	fmt.Println(err)
	// Output:
	// broken.toml:5: network.latency: "5" is not a duration: missing unit (want one of ps, ns, us, µs, μs, ms, s)
	// broken.toml:11: sweep[0].world: element 1: world size 0 is out of range (want 1 to 16777216 ranks)
	// broken.toml:12: sweep[0].bytes: 1022: not a multiple of the f32 element size (4 bytes)
	// broken.toml:13: sweep[0].colour: unknown key in [[sweep]] 1 (known keys: collective, algorithms, world, bytes, dtype, op, data, symmetry, root, params, repeat, tuning, policy)
}

func ExampleParseBytes() {
	for _, s := range []string{"1024", "8MiB", "1.5KB", "1.5B"} {
		n, err := scenario.ParseBytes(s)
		fmt.Println(n, err)
	}
	// Output:
	// 1024 <nil>
	// 8388608 <nil>
	// 1500 <nil>
	// 0 "1.5B" is not a whole number of bytes
}

func ExampleParseByteRange() {
	sizes, _ := scenario.ParseByteRange("1KiB..1MiB x4")
	fmt.Println(sizes)
	steps, _ := scenario.ParseByteRange("0..3KiB +1KiB")
	fmt.Println(steps)
	// Output:
	// [1024 4096 16384 65536 262144 1048576]
	// [0 1024 2048 3072]
}

func ExampleParseBandwidth() {
	for _, s := range []string{"12.5GB/s", "100Gbit/s", "1GiB/s"} {
		bw, _ := scenario.ParseBandwidth(s)
		fmt.Printf("%s = %g B/s\n", s, bw)
	}
	// Output:
	// 12.5GB/s = 1.25e+10 B/s
	// 100Gbit/s = 1.25e+10 B/s
	// 1GiB/s = 1.073741824e+09 B/s
}

func ExampleParseDuration() {
	d, _ := scenario.ParseDuration("5us")
	fmt.Println(d, int64(d), "ps")
	// Output:
	// 5us 5000000 ps
}

func ExampleModels() {
	for _, m := range scenario.Models() {
		fmt.Print(m.Name, ":")
		for _, k := range m.Keys {
			fmt.Print(" ", k.Name)
		}
		fmt.Println()
	}
	// Output:
	// alpha-beta: latency bandwidth reduce_bandwidth overhead switch_reduce_bandwidth
	// flow: topology placement placement_group send_slots recv_slots sharing reduce_bandwidth overhead
	// loggp: latency overhead gap bandwidth reduce_bandwidth
	// realnet: bulk_threshold eager_threshold reduce_bandwidth
}

func ExampleTopologies() {
	for _, t := range scenario.Topologies() {
		fmt.Print(t.Name, ":")
		for _, k := range t.Keys {
			fmt.Print(" ", k.Name)
		}
		fmt.Println()
	}
	// Output:
	// crossbar: bandwidth latency ports backplane_bandwidth
	// ring: size link_bandwidth link_latency nic_bandwidth nic_latency
	// torus: dims link_bandwidth link_latency nic_bandwidth nic_latency
	// fat_tree: radix tiers oversubscription routing link_bandwidth link_latency nic_bandwidth nic_latency
	// dragonfly: groups routers hosts global_links routing local_bandwidth local_latency global_bandwidth global_latency nic_bandwidth nic_latency
	// hierarchical: devices_per_node nodes nics_per_node host_bandwidth host_latency inter intra_bandwidth intra_latency
	// gpu_cluster: gpus_per_node nodes nvlink_domain nvlink_bandwidth nvlink_latency nvls_bandwidth pcie_bandwidth pcie_latency nics_per_node nic_bandwidth nic_latency inter inter_radix inter_oversubscription inter_link_bandwidth inter_link_latency inter_routing sharp_bandwidth
}
