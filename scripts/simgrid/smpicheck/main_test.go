package main

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// platform is the part of a SimGrid platform file the tests read back.
type platform struct {
	Hosts []struct {
		ID string `xml:"id,attr"`
	} `xml:"zone>host"`
	Links []struct {
		ID        string `xml:"id,attr"`
		Bandwidth string `xml:"bandwidth,attr"`
		Latency   string `xml:"latency,attr"`
	} `xml:"zone>link"`
	Routes []struct {
		Src   string `xml:"src,attr"`
		Dst   string `xml:"dst,attr"`
		Links []struct {
			ID string `xml:"id,attr"`
		} `xml:"link_ctn"`
	} `xml:"zone>route"`
}

func TestWritePlatformCrossbar(t *testing.T) {
	top, err := sim.Crossbar{Ports: 4, Bandwidth: 12.5e9, Latency: 5 * sim.Microsecond}.Build(3)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writePlatform(&b, top, 3); err != nil {
		t.Fatal(err)
	}
	var p platform
	if err := xml.Unmarshal([]byte(b.String()), &p); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	// 3 hosts, the 6 port edges they use (not port 3's), and 6 routes of
	// an uplink then a downlink: the same links nexar-sim's crossbar
	// routes over.
	if len(p.Hosts) != 3 || p.Hosts[0].ID != "dev0" || len(p.Links) != 6 || len(p.Routes) != 6 {
		t.Fatalf("hosts %v, %d links, %d routes:\n%s", p.Hosts, len(p.Links), len(p.Routes), b.String())
	}
	for _, l := range p.Links {
		if l.Bandwidth != "12500000000Bps" || (l.Latency != "5.0000000000000004e-06s" && l.Latency != "0s") {
			t.Errorf("link %+v", l)
		}
	}
	r := p.Routes[0]
	if r.Src != "dev0" || r.Dst != "dev1" || len(r.Links) != 2 {
		t.Errorf("first route %+v", r)
	}
	var hosts strings.Builder
	if err := writeHostfile(&hosts, top, 3); err != nil || hosts.String() != "dev0\ndev1\ndev2\n" {
		t.Errorf("host file %q, %v", hosts.String(), err)
	}
}

func TestWritePlatformFatTree(t *testing.T) {
	// Every ordered pair gets nexar-sim's route, edge for edge.
	top, err := sim.FatTree{Radix: 6, Oversubscription: 2, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: sim.Microsecond}}.Build(8)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writePlatform(&b, top, 8); err != nil {
		t.Fatal(err)
	}
	var p platform
	if err := xml.Unmarshal([]byte(b.String()), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Routes) != 8*7 {
		t.Fatalf("%d routes, want 56", len(p.Routes))
	}
	names := map[string]string{}
	for _, e := range top.Edges() {
		names["e"+strconv.Itoa(e.ID)] = e.Name
	}
	for _, r := range p.Routes {
		var got []string
		for _, l := range r.Links {
			got = append(got, names[l.ID])
		}
		s, d := deviceIndex(r.Src), deviceIndex(r.Dst)
		if want := top.Route(s, d); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("route %s -> %s: %v, want %v", r.Src, r.Dst, got, want)
		}
	}
}

// deviceIndex reads the device index of a fat tree host name, "host5".
func deviceIndex(name string) int {
	n := 0
	for _, c := range strings.TrimPrefix(name, "host") {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestParseTimes(t *testing.T) {
	got, err := parseTimes(strings.NewReader("noise\nallreduce,4,1024,3.0000000000000001e-05\nallreduce,4,2048,4e-05\n"))
	if err != nil || len(got) != 2 || got[1024] != 3e-05 || got[2048] != 4e-05 {
		t.Errorf("parseTimes = %v, %v", got, err)
	}
	if _, err := parseTimes(strings.NewReader("nothing\n")); err == nil {
		t.Error("no times, no error")
	}
}

func TestParseOverrides(t *testing.T) {
	got, err := parseOverrides([]string{"allreduce/binomial_tree_nearest=redbcast,reduce:binomial,bcast:binomial_tree"})
	o := got["allreduce/binomial_tree_nearest"]
	if err != nil || o.name != "redbcast" || strings.Join(o.extra, " ") != "smpi/reduce:binomial smpi/bcast:binomial_tree" {
		t.Errorf("parseOverrides = %v, %v", got, err)
	}
	for _, bad := range []string{"ring=lr", "allreduce/ring", "allreduce/ring=lr,reduce"} {
		if _, err := parseOverrides([]string{bad}); err == nil {
			t.Errorf("-as %q: no error", bad)
		}
	}
}

func TestSettings(t *testing.T) {
	p := sim.Protocol{Model: sim.Flow{Topology: sim.Crossbar{Bandwidth: 1e9, Latency: 1}}, EagerLimit: 65536, Envelope: 16,
		BandwidthFactors: sim.Factors{{From: 0, Factor: 0.9}}}
	n, err := describe(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(n.settings(), " ")
	for _, want := range []string{"network/model:SMPI", "network/weight-S:0", "smpi/send-is-detached-thresh:65536",
		"smpi/async-small-thresh:0", "smpi/bw-factor:0:0.9", "smpi/lat-factor:0:1", "network/TCP-gamma:1e30"} {
		if !strings.Contains(s, want) {
			t.Errorf("settings %q lack %q", s, want)
		}
	}
	p.Envelope = 0
	if _, err := describe(p, 2); err == nil {
		t.Error("an envelope SMPI does not have: no error")
	}
}

// TestCheckScenarios: the scenarios of the peer check validate, and every
// algorithm of the crossbar check runs in SMPI under its own name.
func TestCheckScenarios(t *testing.T) {
	for _, f := range []string{"../crossbar.toml", "../fattree.toml"} {
		s, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		points, err := sweep.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		if f != "../crossbar.toml" {
			continue
		}
		c := &checker{}
		for _, p := range points {
			if _, name, err := c.smpiAlgorithm(p); err != nil && name == "" && p.Algorithm.SMPI == "" {
				t.Errorf("%s: %s/%s has no SMPI name", f, p.Collective.Name, p.VariantName())
			}
		}
	}
}
