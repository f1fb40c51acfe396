package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/sim"
)

// protocolKeys are the [network] keys of the message protocol, read for
// every model (see sim.Protocol).
var protocolKeys = []KeyInfo{
	{"eager_limit", false, `messages of fewer bytes are sent eagerly (the send completes at once), from it on by rendezvous (the message moves once its receive is posted, its send completes on delivery): "64KiB"; left out: no protocol (sends complete on delivery, messages move at once)`},
	{"eager_moves", false, `when an eager message moves: "on_match" (default: once its receive is posted, as SimGrid SMPI's detached sends) or "at_once" (at once, to wait at the receiver, as an MPI library over TCP)`},
	{"envelope", false, `bytes added to every message on the wire: "16B" (SimGrid SMPI's; default 0)`},
	{"lat_factors", false, `factors of each message's latency by its size on the wire, SimGrid's smpi/lat-factor syntax: "0:1;64KiB:1.4" (a step applies above its size; default 1)`},
	{"bw_factors", false, `factors of each message's bandwidth by its size on the wire, as lat_factors: "0:0.8;64KiB:0.95" (default 1)`},
	{"handshake", false, `what a rendezvous costs before its payload moves: "none" (default, as SimGrid SMPI) or "rts_cts" (a request to send and a clear to send, each an envelope-sized message)`},
	{"handshake_delay", false, `time added to every rendezvous before its payload moves: "2us" (default 0)`},
}

// ProtocolKeys describes the [network] keys of the message protocol, which
// every model reads, for listings and help.
func ProtocolKeys() []KeyInfo { return protocolKeys }

// protocol reads the protocol keys of [network]; it returns nil, true if
// none is set, and false if any was bad (reporting why).
func (c *checker) protocol(t *table) (*sim.Protocol, bool) {
	set := false
	for _, k := range protocolKeys {
		if _, ok := t.m[k.Name]; ok {
			set = true
		}
		t.known = append(t.known, k.Name)
	}
	if !set {
		return nil, true
	}
	p := &sim.Protocol{EagerLimit: sim.NoProtocol}
	good := true
	if v, ok := t.size("eager_limit"); ok && v >= 0 {
		p.EagerLimit = int(v)
	} else if !ok {
		good = false
	}
	if v, ok := t.size("envelope"); ok && v >= 0 {
		p.Envelope = int(v)
	} else if !ok {
		good = false
	}
	for _, f := range []struct {
		key string
		dst *sim.Factors
	}{{"lat_factors", &p.LatencyFactors}, {"bw_factors", &p.BandwidthFactors}} {
		s, ok := t.str(f.key, false, "", `factors by size such as "0:1;64KiB:0.9"`)
		if !ok {
			good = false
			continue
		}
		if s == "" {
			continue
		}
		fs, err := ParseFactors(s)
		if err != nil {
			t.errorf(joinPath(t.path, f.key), "%v", err)
			good = false
			continue
		}
		*f.dst = fs
	}
	switch h, ok := t.str("handshake", false, "none", `"none" or "rts_cts"`); {
	case !ok:
		good = false
	case h == "rts_cts":
		p.Handshake.RTSCTS = true
	case h != "none":
		t.errorf(joinPath(t.path, "handshake"), `unknown handshake %q (want "none" or "rts_cts")`, h)
		good = false
	}
	d, ok := t.duration("handshake_delay", false)
	p.Handshake.Delay = d
	good = good && ok
	switch m, ok := t.str("eager_moves", false, "on_match", `"on_match" or "at_once"`); {
	case !ok:
		good = false
	case m == "at_once":
		p.EagerAtOnce = true
	case m != "on_match":
		t.errorf(joinPath(t.path, "eager_moves"), `unknown eager_moves %q (want "on_match" or "at_once")`, m)
		good = false
	}
	if good && p.EagerLimit < 0 {
		for _, k := range []string{"handshake", "handshake_delay", "eager_moves"} {
			if _, set := t.m[k]; set {
				t.errorf(joinPath(t.path, k), "%s is for the eager and rendezvous protocol: set eager_limit too", k)
				good = false
			}
		}
	}
	if !good {
		return nil, false
	}
	return p, true
}

// size reads a size in bytes: a whole number or a size string; -1 if
// absent.
func (t *table) size(key string) (int64, bool) {
	v, path, ok := t.get(key)
	if !ok {
		return -1, true
	}
	var vals []int64
	var err error
	if str, ok := v.(string); ok {
		var n int64
		n, err = ParseBytes(str)
		vals = []int64{n}
	} else {
		vals, err = sizeElem(path, v)
	}
	if err != nil {
		t.errorf(path, "%v", err)
		return 0, false
	}
	return vals[0], true
}

// ParseFactors parses a piecewise list of factors by message size in
// SimGrid's syntax (smpi/bw-factor, smpi/lat-factor): steps "SIZE:FACTOR"
// separated by ";", in any order, where SIZE is a size as ParseBytes reads
// it ("65472", "64KiB") and FACTOR a positive number. A step applies to
// messages larger than its SIZE, up to the next step's; messages no larger
// than the smallest SIZE get 1 (see sim.Factors). Sizes must differ.
func ParseFactors(s string) (sim.Factors, error) {
	var out sim.Factors
	for i, step := range strings.Split(s, ";") {
		step = strings.TrimSpace(step)
		if step == "" && i > 0 && i == strings.Count(s, ";") {
			continue // a trailing ";"
		}
		size, factor, ok := strings.Cut(step, ":")
		if !ok {
			return nil, fmt.Errorf("factor step %d %q: want SIZE:FACTOR, such as \"64KiB:0.9\"", i+1, step)
		}
		b, err := ParseBytes(size)
		if err != nil {
			return nil, fmt.Errorf("factor step %d: %v", i+1, err)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(factor), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("factor step %d: %q is not a positive number", i+1, strings.TrimSpace(factor))
		}
		out = append(out, sim.FactorStep{From: int(b), Factor: f})
	}
	slices.SortStableFunc(out, func(a, b sim.FactorStep) int { return a.From - b.From })
	for i := 1; i < len(out); i++ {
		if out[i].From == out[i-1].From {
			return nil, fmt.Errorf("two factor steps at %d bytes", out[i].From)
		}
	}
	return out, nil
}
