package scenario_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
)

// TestNetworkSummary checks the one-line description of a network that
// figures carry: the model, the keys in the file's order with their
// values as written (sub-tables left out), then the faults.
func TestNetworkSummary(t *testing.T) {
	for _, c := range []struct{ name, network, want string }{
		{"alpha-beta", `
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"
`, "alpha-beta: latency 5us, bandwidth 12.5GB/s, reduce_bandwidth 25GB/s"},
		{"fat tree with jitter and a transport", `
[[fault]]
kind = "jitter"
dist = "lognormal"
mean = "4us"
stddev = "4us"

[network]
model = "flow"
topology = "fat_tree"
tiers = 2
radix = 16
oversubscription = 3
link_bandwidth = "25Gbit/s"
link_latency = "1us"
routing = "ecmp"

[network.transport]
quic_latency = "30us"
quic_bandwidth = "1GB/s"
bulk_latency = "60us"
bulk_bandwidth = "3GB/s"
`, "flow: topology fat_tree, tiers 2, radix 16, oversubscription 3, link_bandwidth 25Gbit/s, link_latency 1us, routing ecmp; latency jitter lognormal(mean 4us, stddev 4us)"},
		{"torus dims in order", `
[network]
link_bandwidth = "10GB/s"
model = "flow"
topology = "torus"
dims = [4, 2]
link_latency = "1us"
`, "flow: link_bandwidth 10GB/s, topology torus, dims [4, 2], link_latency 1us"},
		{"realnet's two paths", `
[network]
model = "realnet"
bulk_threshold = "64KiB"

[network.transport]
quic_latency = "30us"
quic_bandwidth = "1GB/s"
bulk_latency = "60us"
bulk_bandwidth = "3GB/s"
`, "realnet: bulk_threshold 64KiB, quic_latency 30us, quic_bandwidth 1GB/s, bulk_latency 60us, bulk_bandwidth 3GB/s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenario.Parse("net.toml", []byte(`name = "n"`+c.network+`
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [8]
`))
			if err != nil {
				t.Fatal(err)
			}
			if s.Network.Summary != c.want {
				t.Errorf("Summary = %q\nwant      %q", s.Network.Summary, c.want)
			}
		})
	}
}
