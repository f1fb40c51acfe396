package sim

import (
	"errors"
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/algos"
)

// TwoPaths is realnet's transport as a network model (model = "realnet",
// read from [network.transport], bulk_threshold and eager_threshold):
// every rank reaches every other by QUIC and by two TCP connections, the
// bulk connection and the eager one, each path an alpha-beta network with
// ports of its own (the connections are separate, so one path's messages
// do not queue behind another's). The TCP connections share the bulk
// path's figures (Bulk). A message goes by its payload size:
//
//   - By default (Thresholds.Eager 0), below Thresholds.Bulk bytes on
//     QUIC, eagerly: its send completes as soon as it is posted (the
//     stream buffers it) and it moves at once, to wait at the receiver for
//     its receive. From Thresholds.Bulk on, on the bulk connection by
//     rendezvous: a request to send goes on the eager TCP connection when
//     the send is posted (realnet keeps it in order with the sender's
//     QUIC messages); once it has arrived and the receive is posted, the
//     clear to send comes back on the eager connection; then the payload
//     goes on the bulk connection, and the send completes on delivery.
//   - With Thresholds.Eager > 0 (realnet's eager mode, the tuning table's
//     [transport] eager_threshold), every message goes on TCP: below
//     Thresholds.Eager eagerly on the eager connection, header and payload
//     at once; from it on by rendezvous whose request and clear to send
//     both travel on the eager connection and whose payload takes the bulk
//     one. Thresholds.Bulk then does not apply.
//
// Each control message takes its path's latency (it carries no payload)
// and holds no port. A one-way bulk message costs 3 bulk_latency +
// m/bulk_bandwidth in either mode (the handshake and the payload all on
// TCP), what derive weighs
// for the bulk threshold. So a live run on realnet can be predicted path
// by path, with each path's own latency and bandwidth. Thresholds.Bulk
// < 0 keeps every message on QUIC (the tuning table's bulk_threshold =
// "never"); 0 sends every message on the bulk path, empty ones too. Reductions take bytes/ReduceBandwidth of the rank's compute;
// no switch reduces in the network (CanSwitchReduce is false).
//
// Not modelled: the credit that bounds a receiver's unexpected eager
// bytes (MaxUnexpected/(2(p-1)) per peer, far above the largest eager
// threshold, so no message of a collective exceeds it), and the copy of an
// eager message that arrives before its receive.
type TwoPaths struct {
	// QUIC and Bulk are the paths (keys quic_latency, quic_bandwidth,
	// bulk_latency, bulk_bandwidth of [network.transport]).
	QUIC, Bulk AlphaBeta
	// Thresholds are realnet's (keys "bulk_threshold" and
	// "eager_threshold"): Bulk the payload size from which messages take
	// the bulk path (negative: never); Eager, when positive, sends every
	// message on TCP, eagerly below it and by rendezvous from it on (0:
	// off).
	Thresholds algos.Thresholds
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
	if tp.Thresholds.Eager < 0 {
		return nil, fmt.Errorf("realnet: eager threshold %d is negative", tp.Thresholds.Eager)
	}
	paths := &twoPathNet{
		quic:      tp.QUIC.NewNetwork(e).(*alphaBetaNet),
		bulk:      tp.Bulk.NewNetwork(e).(*alphaBetaNet),
		eager:     tp.Bulk.NewNetwork(e).(*alphaBetaNet),
		threshold: tp.Thresholds.Bulk,
		eagerMode: tp.Thresholds.Eager > 0,
		reduceBW:  tp.ReduceBandwidth,
	}
	limit := tp.Thresholds.Bulk
	switch {
	case paths.eagerMode:
		limit = tp.Thresholds.Eager
	case limit < 0:
		limit = math.MaxInt
	}
	paths.threshold = limit
	p := Protocol{Model: nil, EagerLimit: limit, EagerAtOnce: true, Handshake: Handshake{RTSCTS: true}}
	return &protocolNet{wrapped: wrapped{paths}, p: p, e: e, ctl: paths, held: map[*Message]*rendezvous{}}, nil
}

// twoPathNet sends each message on the path its size chooses: from
// threshold on the bulk connection, below it on the eager connection in
// eager mode, else on QUIC.
type twoPathNet struct {
	quic, bulk, eager *alphaBetaNet
	threshold         int
	eagerMode         bool
	reduceBW          float64
}

func (n *twoPathNet) path(m *Message) *alphaBetaNet {
	switch {
	case m.Bytes >= n.threshold:
		return n.bulk
	case n.eagerMode:
		return n.eager
	}
	return n.quic
}

func (n *twoPathNet) Post(m *Message) { n.path(m).Post(m) }

func (n *twoPathNet) Settle() {
	n.quic.Settle()
	n.bulk.Settle()
	n.eager.Settle()
}

// ControlTime implements ControlTimer: a control message on QUIC
// (HandshakeTime says which control message takes which path).
func (n *twoPathNet) ControlTime(m *Message) Time { return n.quic.ControlTime(m) }

// HandshakeTime implements handshakeTimer: the request to send and the
// clear to send both travel on the eager TCP connection, in either mode
// (realnet's wire version 2; the request went on QUIC before).
func (n *twoPathNet) HandshakeTime(m *Message) Time {
	return n.eager.ControlTime(m)
}

func (n *twoPathNet) ReduceTime(_, bytes int) Time {
	if n.reduceBW == 0 {
		return 0
	}
	return TransferTime(bytes, n.reduceBW)
}

// handshakeTimer is implemented by networks whose handshake (request to
// send and clear to send) takes another path than their other control
// messages (realnet's: TCP, where a relay's headers go on QUIC):
// Protocol's handshake asks it instead of ControlTimer.
type handshakeTimer interface {
	HandshakeTime(m *Message) Time
}
