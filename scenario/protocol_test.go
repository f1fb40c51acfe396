package scenario

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

func TestProtocolKeys(t *testing.T) {
	src := withNetwork(`model = "flow"
topology = "crossbar"
latency = "5us"
bandwidth = "12.5GB/s"
send_slots = -1
recv_slots = -1
sharing = "latency_weighted"
eager_limit = "64KiB"
envelope = "16B"
lat_factors = "65472:11.6436;0:2.01467;15424:3.48845"
bw_factors = "0:0.8;64KiB:0.95;"
handshake = "rts_cts"
handshake_delay = "500ns"
eager_moves = "at_once"`, "")
	s, err := Parse("p.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Protocol{
		Model: sim.Flow{Topology: sim.Crossbar{Bandwidth: 12.5e9, Latency: 5 * sim.Microsecond}, ReduceBandwidth: inf,
			SendSlots: -1, RecvSlots: -1, Sharing: sim.LatencyWeighted},
		EagerLimit: 64 << 10, Envelope: 16,
		LatencyFactors:   sim.Factors{{From: 0, Factor: 2.01467}, {From: 15424, Factor: 3.48845}, {From: 65472, Factor: 11.6436}},
		BandwidthFactors: sim.Factors{{From: 0, Factor: 0.8}, {From: 65536, Factor: 0.95}},
		Handshake:        sim.Handshake{RTSCTS: true, Delay: 500 * sim.Nanosecond},
		EagerAtOnce:      true,
	}
	if !reflect.DeepEqual(s.Network.Sim, want) {
		t.Errorf("model\n%#v\nwant\n%#v", s.Network.Sim, want)
	}
	if err := s.Network.Check(8); err != nil {
		t.Error(err)
	}

	// Only an envelope: no protocol, the envelope and factors alone.
	s, err = Parse("p.toml", []byte(withNetwork(`model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
envelope = 16`, "")))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Network.Sim.(sim.Protocol); !ok || p.EagerLimit != sim.NoProtocol || p.Envelope != 16 {
		t.Errorf("model %#v, want an envelope of 16 and no protocol", s.Network.Sim)
	}
}

func TestBadProtocolKeys(t *testing.T) {
	// Every bad value is named with its line (the [network] table's first key
	// is on line 5 of withNetwork's file).
	src := withNetwork(`model = "flow"
latency = "5us"
bandwidth = "12.5GB/s"
eager_limit = "64KB.."
envelope = -16
lat_factors = "0:1;64KiB"
bw_factors = "0:1;0:2"
handshake = "rts"
handshake_delay = "fast"
sharing = "tcp"`, "")
	_, err := Parse("p.toml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`p.toml:8: network.eager_limit: "64KB.." is not a size`,
		`p.toml:9: network.envelope: size -16 is negative`,
		`p.toml:10: network.lat_factors: factor step 2 "64KiB": want SIZE:FACTOR`,
		`p.toml:11: network.bw_factors: two factor steps at 0 bytes`,
		`p.toml:12: network.handshake: unknown handshake "rts"`,
		`p.toml:13: network.handshake_delay:`,
		`p.toml:14: network.sharing: unknown sharing "tcp"`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error\n%v\ndoes not say %q", err, w)
		}
	}
	_, err = Parse("p.toml", []byte(withNetwork(`model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
handshake = "rts_cts"`, "")))
	if err == nil || !strings.Contains(err.Error(), "p.toml:8: network.handshake: handshake is for the eager and rendezvous protocol: set eager_limit too") {
		t.Errorf("handshake without eager_limit: %v", err)
	}
}

func TestParseFactors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want sim.Factors
		err  string
	}{
		{"0:1", sim.Factors{{From: 0, Factor: 1}}, ""},
		{" 1KiB : 0.5 ; 0:2 ", sim.Factors{{From: 0, Factor: 2}, {From: 1024, Factor: 0.5}}, ""},
		{"0:1;", sim.Factors{{From: 0, Factor: 1}}, ""},
		{"", nil, "want SIZE:FACTOR"},
		{"0:0", nil, "not a positive number"},
		{"0:inf", nil, "not a positive number"},
		{"x:1", nil, "factor step 1"},
		{"1:1;;2:2", nil, "factor step 2"},
	} {
		got, err := ParseFactors(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseFactors(%q): error %v, want one saying %q", c.in, err, c.err)
		case c.err == "" && (err != nil || !reflect.DeepEqual(got, c.want)):
			t.Errorf("ParseFactors(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseFactors(f *testing.F) {
	for _, s := range []string{"0:1", "65472:0.940694;15424:0.697866;0:0.812084", "1KiB:2;", "0:1;0:2", ":", "1e3:1", "0:1e400", ";;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseFactors(s)
		if err != nil {
			return
		}
		if len(fs) == 0 {
			t.Fatalf("ParseFactors(%q) gave no steps and no error", s)
		}
		if err := fs.Validate(); err != nil {
			t.Fatalf("ParseFactors(%q) = %v, which does not validate: %v", s, fs, err)
		}
		// The SimGrid string it writes reads back the same.
		back, err := ParseFactors(fs.String())
		if err != nil || !reflect.DeepEqual(back, fs) {
			t.Fatalf("ParseFactors(%q) = %v, written %q, read back %v, %v", s, fs, fs.String(), back, err)
		}
	})
}

func TestRealnetModel(t *testing.T) {
	paths := `model = "realnet"
%s
[network.transport]
quic_latency = "30us"
quic_bandwidth = "1.65Gbit/s"
bulk_latency = "10us"
bulk_bandwidth = "1.09GB/s"`
	s, err := Parse("r.toml", []byte(withNetwork(strings.Replace(paths, "%s", `bulk_threshold = "32KiB"`, 1), "")))
	if err != nil {
		t.Fatal(err)
	}
	want := sim.TwoPaths{QUIC: sim.AlphaBeta{Latency: 30 * sim.Microsecond, Bandwidth: 1.65e9 / 8},
		Bulk: sim.AlphaBeta{Latency: 10 * sim.Microsecond, Bandwidth: 1.09e9}, Thresholds: algos.Thresholds{Bulk: 32 << 10}, ReduceBandwidth: inf}
	if !reflect.DeepEqual(s.Network.Sim, want) || s.Network.LinkBandwidth != 1.09e9 {
		t.Errorf("model %#v, link bandwidth %g; want %#v", s.Network.Sim, s.Network.LinkBandwidth, want)
	}
	if err := s.Network.Check(4); err != nil {
		t.Error(err)
	}
	s, err = Parse("r.toml", []byte(withNetwork(strings.Replace(paths, "%s", `bulk_threshold = "never"`, 1), "")))
	if err != nil || s.Network.Sim.(sim.TwoPaths).Thresholds.Bulk != algos.BulkNever {
		t.Errorf("bulk_threshold = \"never\": %v, %v", err, s)
	}
	s, err = Parse("r.toml", []byte(withNetwork(strings.Replace(paths, "%s", `eager_threshold = "64KiB"`, 1), "")))
	if err != nil || s.Network.Sim.(sim.TwoPaths).Thresholds.Eager != 64<<10 {
		t.Errorf("eager_threshold = \"64KiB\": %v, %v", err, s)
	}
	s, err = Parse("r.toml", []byte(withNetwork(strings.Replace(paths, "%s", "", 1), "")))
	if err != nil || s.Network.Sim.(sim.TwoPaths).Thresholds.Bulk != algos.DefaultBulkThreshold {
		t.Errorf("no bulk_threshold: %v, %v", err, s)
	}
	_, err = Parse("r.toml", []byte(withNetwork(`model = "realnet"`, "")))
	if err == nil || !strings.Contains(err.Error(), `r.toml:5: network.model: model = "realnet" runs on realnet's two paths: add a [network.transport] table`) {
		t.Errorf("realnet without paths: %v", err)
	}
	_, err = Parse("r.toml", []byte(withNetwork(strings.Replace(paths, "%s", `bulk_threshold = "sometimes"`, 1), "")))
	if err == nil || !strings.Contains(err.Error(), `r.toml:6: network.bulk_threshold: "sometimes" is not a size`) {
		t.Errorf("bad bulk_threshold: %v", err)
	}
	_, err = Parse("r.toml", []byte(withNetwork(strings.Replace(paths, "%s", `eager_threshold = "often"`, 1), "")))
	if err == nil || !strings.Contains(err.Error(), `r.toml:6: network.eager_threshold: "often" is not a size`) {
		t.Errorf("bad eager_threshold: %v", err)
	}
}
