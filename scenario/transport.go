package scenario

import (
	"math"

	"github.com/nexar-go/nexar-go/sim"
)

// Transport is the optional [network.transport] table: realnet's two paths
// between a pair of ranks, each an alpha-beta link, from which nexar-sim
// derives the bulk threshold of the tuning table it writes ([transport]
// bulk_threshold; see package derive). The sweeps run on the [network]
// model; with model = "realnet" that model is these two paths
// (sim.TwoPaths), so a live run can be predicted path by path.
//
//	[network.transport]
//	quic_latency = "30us"          # one way, a message on its QUIC stream
//	quic_bandwidth = "1.65Gbit/s"  # QUIC's rate (user-space, CPU-bound)
//	bulk_latency = "10us"          # one way on the open bulk TCP connection
//	bulk_bandwidth = "1.09GB/s"    # the bulk connection's rate
//	copy_bandwidth = "10GB/s"      # optional: a receiver's memory copy
//
// A bulk message first asks permission over QUIC (realnet's request to
// send, answered on TCP by a clear-to-send once the receiver has a buffer),
// and only then goes on TCP: bulk_latency is the TCP connection's own
// latency, and the derivation simulates the permission round trip.
//
// With copy_bandwidth, nexar-sim derives the eager threshold too (realnet's
// eager TCP path, [transport] eager_threshold): an eager message saves the
// rendezvous round trip, but one that arrives before its receive is posted
// is buffered and copied out, at copy_bandwidth, once it is; the threshold
// is where that copy costs more than the round trip. The eager connection
// is a TCP connection like the bulk one: bulk_latency and bulk_bandwidth.
type Transport struct {
	// QUICLatency and QUICBandwidth are the one-way latency and the rate
	// of a message on its own QUIC stream.
	QUICLatency   sim.Time `json:"quic_latency_ps"`
	QUICBandwidth float64  `json:"quic_bandwidth_bytes_per_s"`
	// BulkLatency and BulkBandwidth are those of the bulk TCP connection,
	// already open, without the permission round trip.
	BulkLatency   sim.Time `json:"bulk_latency_ps"`
	BulkBandwidth float64  `json:"bulk_bandwidth_bytes_per_s"`
	// CopyBandwidth is the rate at which a receiver copies a buffered
	// eager message into its receive's buffer; 0 when not given (no eager
	// threshold is derived then).
	CopyBandwidth float64 `json:"copy_bandwidth_bytes_per_s,omitempty"`
	// Line is the line of the [network.transport] header.
	Line int `json:"-"`
}

// QUIC returns the QUIC path as an alpha-beta model.
func (t *Transport) QUIC() sim.AlphaBeta {
	return sim.AlphaBeta{Latency: t.QUICLatency, Bandwidth: t.QUICBandwidth}
}

// Bulk returns the bulk TCP connection as an alpha-beta model.
func (t *Transport) Bulk() sim.AlphaBeta {
	return sim.AlphaBeta{Latency: t.BulkLatency, Bandwidth: t.BulkBandwidth}
}

var transportKeys = []KeyInfo{
	{"quic_latency", true, `alpha of a message on its QUIC stream, one way: "30us"`},
	{"quic_bandwidth", true, `QUIC's rate on one connection: "1.65Gbit/s"`},
	{"bulk_latency", true, `alpha of the open bulk TCP connection, one way; the permission round trip that precedes each bulk payload (a request on QUIC, the answer on TCP) is simulated, not included here: "10us"`},
	{"bulk_bandwidth", true, `the bulk TCP connection's rate (with TLS unless the network is trusted): "1.09GB/s"`},
	{"copy_bandwidth", false, `a receiver's memory copy rate, for the eager threshold (an eager message that arrives before its receive is copied out of a buffer); without it no eager_threshold is derived: "10GB/s"`},
}

// TransportKeys describes the keys of [network.transport], for listings
// and help.
func TransportKeys() []KeyInfo { return transportKeys }

// transport reads the optional [network.transport] table of net; nil if it
// is absent or bad (reporting why).
func (c *checker) transport(net *table) *Transport {
	t := net.subtable("transport", false, "[network.transport]",
		"a table describing realnet's two paths: [network.transport] with quic_latency, quic_bandwidth, bulk_latency, bulk_bandwidth")
	if t == nil {
		return nil
	}
	tr := &Transport{Line: lineOf(c.lines, t.path)}
	var ok [4]bool
	tr.QUICLatency, ok[0] = t.duration("quic_latency", true)
	tr.QUICBandwidth, ok[1] = t.bandwidth("quic_bandwidth", true, 0)
	tr.BulkLatency, ok[2] = t.duration("bulk_latency", true)
	tr.BulkBandwidth, ok[3] = t.bandwidth("bulk_bandwidth", true, 0)
	copyOK := true
	if tr.CopyBandwidth, copyOK = t.bandwidth("copy_bandwidth", false, 0); copyOK && math.IsInf(tr.CopyBandwidth, 1) {
		t.errorf(joinPath(t.path, "copy_bandwidth"), "a copy's bandwidth must be finite")
		copyOK = false
	}
	for i, key := range []string{"quic_bandwidth", "bulk_bandwidth"} {
		bw := []float64{tr.QUICBandwidth, tr.BulkBandwidth}[i]
		if ok[2*i+1] && math.IsInf(bw, 1) {
			// A free path would win at every size above 0, and the
			// figures go into JSON, which has no infinity.
			t.errorf(joinPath(t.path, key), "a path's bandwidth must be finite")
			ok[2*i+1] = false
		}
	}
	t.finish()
	if ok != [4]bool{true, true, true, true} || !copyOK {
		return nil
	}
	return tr
}
