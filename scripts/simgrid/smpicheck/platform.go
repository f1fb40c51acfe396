package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/nexar-go/nexar-go/sim"
)

// unlimited is the bandwidth SimGrid gets for an edge that nexar-sim does
// not limit (SimGrid needs a number): far above any real link, so it never
// binds a flow.
const unlimited = 1e18

// writePlatform writes topology t as a SimGrid platform (version 4.1): one
// zone with full routing, a host per device, a link per directed edge (its
// bandwidth and latency, shared by the flows that cross it, as an edge of
// nexar-sim's flow model is), and for every ordered pair of the first
// world devices the route nexar-sim takes between them, edge for edge. So
// both simulators move every message over the same links, whatever the
// topology and its routing (ECMP hashes included).
func writePlatform(w io.Writer, t *sim.Topology, world int) error {
	if world > t.NumDevices() {
		return fmt.Errorf("topology %s has %d devices, fewer than %d ranks", t.Name, t.NumDevices(), world)
	}
	edges := t.Edges()
	byName := make(map[string]int, len(edges))
	for _, e := range edges {
		byName[e.Name] = e.ID
	}
	var b strings.Builder
	b.WriteString("<?xml version='1.0'?>\n")
	b.WriteString(`<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">` + "\n")
	fmt.Fprintf(&b, "<!-- nexar-sim topology %s, %d ranks -->\n", xmlEscape(t.Name), world)
	b.WriteString("<platform version=\"4.1\">\n<zone id=\"nexar\" routing=\"Full\">\n")
	for i := range world {
		fmt.Fprintf(&b, "  <host id=%q speed=\"1Gf\"/>\n", hostName(t, i))
	}
	used := make([]bool, len(edges))
	routes := make([][]int, 0, world*(world-1))
	for s := range world {
		for d := range world {
			if s == d {
				continue
			}
			names := t.Route(s, d)
			if names == nil {
				return fmt.Errorf("no route from device %d to %d in %s", s, d, t.Name)
			}
			ids := make([]int, len(names))
			for i, n := range names {
				id, ok := byName[n]
				if !ok {
					return fmt.Errorf("edge %q of a route is not in %s", n, t.Name)
				}
				ids[i] = id
				used[id] = true
			}
			routes = append(routes, ids)
		}
	}
	for _, e := range edges {
		if !used[e.ID] {
			continue
		}
		bw := e.Bandwidth
		if math.IsInf(bw, 1) {
			bw = unlimited
		}
		fmt.Fprintf(&b, "  <link id=\"e%d\" bandwidth=\"%sBps\" latency=\"%ss\"/> <!-- %s -->\n",
			e.ID, fmtFloat(bw), fmtFloat(e.Latency.Seconds()), xmlEscape(e.Name))
	}
	k := 0
	for s := range world {
		for d := range world {
			if s == d {
				continue
			}
			fmt.Fprintf(&b, "  <route src=%q dst=%q symmetrical=\"NO\">", hostName(t, s), hostName(t, d))
			for _, id := range routes[k] {
				fmt.Fprintf(&b, "<link_ctn id=\"e%d\"/>", id)
			}
			b.WriteString("</route>\n")
			k++
		}
	}
	b.WriteString("</zone>\n</platform>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHostfile writes the hosts of ranks 0..world-1, one per line: rank r
// runs on device r.
func writeHostfile(w io.Writer, t *sim.Topology, world int) error {
	var b strings.Builder
	for i := range world {
		b.WriteString(hostName(t, i) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hostName is the SimGrid host of device i: the device's node name.
func hostName(t *sim.Topology, i int) string {
	return t.Nodes()[t.Devices()[i]].Name
}

// fmtFloat writes x exactly enough for SimGrid to read back the same
// double.
func fmtFloat(x float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.17g", x), ".")
}

func xmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "--", "- -")
	return r.Replace(s)
}
