package sim

import (
	"errors"
	"fmt"
	"math"
)

// TwoPaths is realnet's transport as a network model (model = "realnet",
// read from [network.transport] and bulk_threshold): every rank reaches
// every other by two paths, QUIC and a bulk TCP connection, each an
// alpha-beta network with ports of its own (the bulk connection is a
// connection beside the QUIC one, so the two paths' messages do not queue
// behind each other). A message goes by its payload size:
//
//   - Below BulkThreshold bytes, on QUIC, eagerly: its send completes as
//     soon as it is posted (the stream buffers it) and it moves at once,
//     to wait at the receiver for its receive.
//   - From BulkThreshold on, on the bulk path, by rendezvous: a request to
//     send goes on QUIC when the send is posted; once it has arrived and
//     the receive is posted, a clear to send comes back on QUIC; then the
//     payload goes on the bulk path, and the send completes on delivery.
//     Each control message takes QUIC's latency (it carries no payload).
//
// So a live run on realnet can be predicted path by path, with each
// path's own latency and bandwidth. BulkThreshold < 0 keeps every message
// on QUIC (the tuning table's bulk_threshold = "never"). Reductions take
// bytes/ReduceBandwidth of the rank's compute.
type TwoPaths struct {
	// QUIC and Bulk are the paths (keys quic_latency, quic_bandwidth,
	// bulk_latency, bulk_bandwidth of [network.transport]).
	QUIC, Bulk AlphaBeta
	// BulkThreshold is the payload size from which messages take the bulk
	// path (key "bulk_threshold"); negative: never.
	BulkThreshold int
	// ReduceBandwidth is 1/gamma (key "reduce_bandwidth"); 0 or +Inf
	// makes reductions free.
	ReduceBandwidth float64
}

// NewNetwork implements Model; it panics where NewNetworkChecked fails.
func (tp TwoPaths) NewNetwork(e *Engine) Network {
	n, err := tp.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (tp TwoPaths) NewNetworkChecked(e *Engine) (Network, error) {
	for _, p := range []struct {
		name string
		m    AlphaBeta
	}{{"QUIC", tp.QUIC}, {"bulk", tp.Bulk}} {
		if err := p.m.Validate(); err != nil {
			return nil, fmt.Errorf("realnet's %s path: %w", p.name, err)
		}
	}
	if tp.ReduceBandwidth < 0 || math.IsNaN(tp.ReduceBandwidth) {
		return nil, errors.New("realnet: reduce bandwidth must be positive")
	}
	paths := &twoPathNet{
		quic:      tp.QUIC.NewNetwork(e).(*alphaBetaNet),
		bulk:      tp.Bulk.NewNetwork(e).(*alphaBetaNet),
		threshold: tp.BulkThreshold,
		reduceBW:  tp.ReduceBandwidth,
	}
	limit := tp.BulkThreshold
	if limit < 0 {
		limit = math.MaxInt
	}
	p := Protocol{Model: nil, EagerLimit: limit, EagerAtOnce: true, Handshake: Handshake{RTSCTS: true}}
	return &protocolNet{wrapped: wrapped{paths}, p: p, e: e, ctl: paths, held: map[*Message]*rendezvous{}}, nil
}

// twoPathNet sends each message on the path its size chooses.
type twoPathNet struct {
	quic, bulk *alphaBetaNet
	threshold  int
	reduceBW   float64
}

func (n *twoPathNet) onBulk(m *Message) bool { return n.threshold >= 0 && m.Bytes >= n.threshold }

func (n *twoPathNet) Post(m *Message) {
	if n.onBulk(m) {
		n.bulk.Post(m)
		return
	}
	n.quic.Post(m)
}

func (n *twoPathNet) Settle() {
	n.quic.Settle()
	n.bulk.Settle()
}

// ControlTime implements ControlTimer: control messages go on QUIC.
func (n *twoPathNet) ControlTime(m *Message) Time { return n.quic.ControlTime(m) }

func (n *twoPathNet) ReduceTime(_, bytes int) Time {
	if n.reduceBW == 0 {
		return 0
	}
	return TransferTime(bytes, n.reduceBW)
}
