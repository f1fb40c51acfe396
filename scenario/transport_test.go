package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

const abNet = `model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"`

func TestTransport(t *testing.T) {
	s, err := Parse("t.toml", []byte(withNetwork(abNet+`

[network.transport]
quic_latency = "30us"
quic_bandwidth = "1.6Gbit/s"
bulk_latency = "10us"
bulk_bandwidth = "1GB/s"`, "")))
	if err != nil {
		t.Fatal(err)
	}
	want := Transport{QUICLatency: 30 * sim.Microsecond, QUICBandwidth: 200e6, BulkLatency: 10 * sim.Microsecond, BulkBandwidth: 1e9, Line: 9}
	if s.Network.Transport == nil || *s.Network.Transport != want {
		t.Fatalf("transport %+v, want %+v", s.Network.Transport, want)
	}
	tr := s.Network.Transport
	if q, b := tr.QUIC(), tr.Bulk(); q != (sim.AlphaBeta{Latency: 30 * sim.Microsecond, Bandwidth: 200e6}) || b != (sim.AlphaBeta{Latency: 10 * sim.Microsecond, Bandwidth: 1e9}) {
		t.Errorf("paths %+v, %+v", q, b)
	}
	// The sweeps' model is the [network] one, untouched by the transport.
	if s.Network.Sim != (sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: inf}) {
		t.Errorf("model %#v", s.Network.Sim)
	}
	// nexar-sim keeps the figures in its manifest, for merge: JSON must
	// carry them exactly.
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var back Transport
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	back.Line = tr.Line
	if back != *tr {
		t.Errorf("JSON %s read back as %+v", data, back)
	}

	s, err = Parse("t.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Network.Transport != nil {
		t.Errorf("no [network.transport], got %+v", s.Network.Transport)
	}
	// An inline table works as well, under any model.
	s, err = Parse("t.toml", []byte(withNetwork(`model = "loggp"
latency = "1us"
bandwidth = "1GB/s"
transport = { quic_latency = "1us", quic_bandwidth = "1GB/s", bulk_latency = "2us", bulk_bandwidth = "2GB/s" }`, "")))
	if err != nil {
		t.Fatal(err)
	}
	if tr := s.Network.Transport; tr == nil || tr.BulkBandwidth != 2e9 || tr.QUICLatency != sim.Microsecond {
		t.Errorf("inline transport %+v", tr)
	}
}

func TestBadTransport(t *testing.T) {
	for _, c := range []struct {
		transport string
		want      []string
	}{
		{`
[network.transport]
quic_latency = "30us"
quic_bandwidth = "1Gbit/s"
bulk_bandwith = "1GB/s"`, []string{
			`n.toml:9: network.transport.bulk_latency: missing required key in [network.transport]`,
			`n.toml:9: network.transport.bulk_bandwidth: missing required key`,
			`n.toml:12: network.transport.bulk_bandwith: unknown key in [network.transport]; did you mean "bulk_bandwidth"?`}},
		{`
[network.transport]
quic_latency = "30 furlongs"
quic_bandwidth = "inf"
bulk_latency = 10
bulk_bandwidth = "0GB/s"`, []string{
			`n.toml:10: network.transport.quic_latency:`,
			`n.toml:11: network.transport.quic_bandwidth: a path's bandwidth must be finite`,
			`n.toml:12: network.transport.bulk_latency: want a duration string`,
			`n.toml:13: network.transport.bulk_bandwidth: "0GB/s" is not a bandwidth`}},
		{"transport = 3", []string{`n.toml:8: network.transport: want a table describing realnet's two paths`}},
	} {
		_, err := Parse("n.toml", []byte(withNetwork(abNet+"\n"+c.transport, "")))
		if err == nil {
			t.Errorf("%s: no error", c.transport)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error\n%v\ndoes not say %q", err, w)
			}
		}
	}
}
