package derive

import (
	"context"
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// Transport is the bulk threshold derived from a description of realnet's
// two paths between a pair of ranks (scenario.Transport): the message size
// from which a message reaches its receiver sooner on the bulk TCP path,
// permission round trip (on TCP) included, than on its QUIC stream.
type Transport struct {
	// Points are the simulated one-way times of a message on each path,
	// at each swept size.
	Points []TransportPoint `json:"points"`
	// Threshold is the bulk threshold for the tuning table: the
	// interpolated crossover rounded up (kept within (Lo, Hi]), so that
	// at every swept size the threshold picks the path that was faster
	// there; the smallest swept size if the bulk path was faster at every
	// one; algos.BulkNever if it was not faster at the largest.
	Threshold int `json:"bulk_threshold"`
	// Bytes is the crossover interpolated on the log scale, as the
	// crossovers of the collectives, between the swept sizes Lo and Hi;
	// all 0 when the paths do not cross within the sweep.
	Bytes float64 `json:"bytes"`
	Lo    int     `json:"lo"`
	Hi    int     `json:"hi"`

	// EagerThreshold is the eager threshold for the tuning table, derived
	// when the scenario gives copy_bandwidth (else 0): the first size at
	// which an eager message that arrives before its receive (and so is
	// copied out of a buffer once it is posted) reaches its receive later
	// than by rendezvous on TCP (the interpolated crossover rounded up,
	// as Threshold); the largest swept size + 1 if eager was never later.
	EagerThreshold int `json:"eager_threshold,omitempty"`
}

// TransportPoint is the one-way time of a message of Bytes bytes on each
// path, in seconds; Eager (an unexpected eager message, copied out of its
// buffer) and Rendezvous (request and clear-to-send on TCP, payload on the
// bulk connection) when the eager threshold is derived. Since realnet's
// wire version 2 the default path's bulk message is that same rendezvous,
// so Rendezvous equals Bulk; it stays for the eager threshold's readers.
type TransportPoint struct {
	Bytes      int     `json:"bytes"`
	QUIC       float64 `json:"quic_s"`
	Bulk       float64 `json:"bulk_s"`
	Eager      float64 `json:"eager_s,omitempty"`
	Rendezvous float64 `json:"rendezvous_s,omitempty"`
}

// TransportSizes are the message sizes DeriveTransport sweeps by default:
// 1 byte to 1 TiB, doubling, the steps of the sweeps in scenarios/.
func TransportSizes() []int {
	sizes := make([]int, 0, 41)
	for b := 1; b <= 1<<40; b *= 2 {
		sizes = append(sizes, b)
	}
	return sizes
}

// maxTransfer bounds the simulated transfers: a size whose payload would
// take longer than this on either path ends the sweep (a crossover there
// means nothing, and sim.Time would overflow not far above).
const maxTransfer = 24 * 3600 * sim.Second

// Tags of the simulated protocol; the model sends tagBulk on the bulk
// path, the eager connection's frames on the eager path, everything else
// on QUIC.
const (
	tagData  algos.Tag = iota + 1 // a message on its QUIC stream
	tagRTS                        // request to send, on the eager TCP connection
	tagCTS                        // clear to send, on the eager TCP connection
	tagBulk                       // the payload on the bulk TCP connection
	tagEager                      // an eager message, on the eager TCP connection
)

// DeriveTransport simulates one message of each size (ascending, above 0;
// TransportSizes if nil) on each of tr's paths, between two ranks, and
// finds the bulk threshold.
//
// On the QUIC path the message is one transfer on the QUIC link. On the
// bulk path it is realnet's protocol: the sender announces the message on
// the eager TCP connection (a request to send), the receiver, its receive
// posted, answers there (clear to send), and only then does the payload
// go on the bulk link. So the bulk path costs 3 bulk_latency +
// m/bulk_bandwidth against quic_latency + m/quic_bandwidth, and the two
// cross at (3 bulk_latency - quic_latency) / (1/quic_bandwidth -
// 1/bulk_bandwidth) if the bulk link is the faster per byte (at the
// smallest size if that is negative). The headers realnet puts in front
// of each message, a few dozen bytes, are left out: at QUIC's rate they
// cost a fraction of a microsecond, beside latencies of tens.
func DeriveTransport(tr *scenario.Transport, sizes []int) (*Transport, error) {
	if sizes == nil {
		sizes = TransportSizes()
	}
	for i, s := range sizes {
		if s <= 0 || (i > 0 && s <= sizes[i-1]) {
			return nil, fmt.Errorf("derive: transport sizes must be positive and ascending (%d at %d)", s, i)
		}
	}
	quic, bulk := tr.QUIC(), tr.Bulk()
	for _, m := range []sim.AlphaBeta{quic, bulk} {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("derive: transport: %w", err)
		}
	}
	model := twoPaths{quic: quic, bulk: bulk, copyBandwidth: tr.CopyBandwidth}
	eager := tr.CopyBandwidth > 0
	out := &Transport{Threshold: algos.BulkNever}
	for _, s := range sizes {
		if sim.TransferTime(s, quic.Bandwidth) > maxTransfer || sim.TransferTime(s, bulk.Bandwidth) > maxTransfer ||
			eager && sim.TransferTime(s, tr.CopyBandwidth) > maxTransfer {
			break
		}
		tq, err := oneWay(model, s, sendQUIC, recvQUIC)
		if err != nil {
			return nil, err
		}
		tb, err := oneWay(model, s, sendBulk, recvBulk)
		if err != nil {
			return nil, err
		}
		pt := TransportPoint{Bytes: s, QUIC: tq.Seconds(), Bulk: tb.Seconds()}
		if eager {
			te, err := oneWay(model, s, sendEager, recvEager)
			if err != nil {
				return nil, err
			}
			// Eager mode's rendezvous is the bulk path's protocol.
			pt.Eager, pt.Rendezvous = te.Seconds(), pt.Bulk
		}
		out.Points = append(out.Points, pt)
	}
	if len(out.Points) == 0 {
		return nil, fmt.Errorf("derive: transport: no size to simulate")
	}
	// The last size at which the bulk path is not faster (a tie goes to
	// QUIC, which needs no rendezvous).
	bulkWins := func(p TransportPoint) bool { return p.Bulk < p.QUIC*(1-TieTolerance) }
	last := -1
	for i, p := range out.Points {
		if !bulkWins(p) {
			last = i
		}
	}
	switch {
	case last == len(out.Points)-1:
		// QUIC is as fast at the largest size: never bulk.
	case last < 0:
		out.Threshold = out.Points[0].Bytes
	default:
		p, q := out.Points[last], out.Points[last+1]
		f1, f2 := math.Log(p.QUIC/p.Bulk), math.Log(q.QUIC/q.Bulk)
		out.Lo, out.Hi, out.Bytes = p.Bytes, q.Bytes, float64(p.Bytes)
		if f1 < 0 {
			out.Bytes = crossing(p.Bytes, q.Bytes, f1, f2)
		}
		out.Threshold = min(max(int(math.Ceil(out.Bytes)), p.Bytes+1), q.Bytes)
	}
	if eager {
		out.EagerThreshold = eagerThreshold(out.Points)
	}
	return out, nil
}

// eagerThreshold is the first size from which the rendezvous is faster
// than an unexpected eager message (a tie goes to eager, which needs no
// round trip), interpolated between the swept sizes as the bulk threshold.
func eagerThreshold(pts []TransportPoint) int {
	for i, q := range pts {
		if q.Rendezvous >= q.Eager*(1-TieTolerance) {
			continue
		}
		if i == 0 {
			return q.Bytes
		}
		p := pts[i-1]
		f1, f2 := math.Log(p.Eager/p.Rendezvous), math.Log(q.Eager/q.Rendezvous)
		x := float64(p.Bytes)
		if f1 < 0 {
			x = crossing(p.Bytes, q.Bytes, f1, f2)
		}
		return min(max(int(math.Ceil(x)), p.Bytes+1), q.Bytes)
	}
	return pts[len(pts)-1].Bytes + 1
}

// oneWay runs send on rank 0 and recv on rank 1 with a message of n bytes
// and returns when rank 1 has it.
func oneWay(model sim.Model, n int, send, recv func(context.Context, algos.Link, int) error) (sim.Time, error) {
	res, err := sim.Run(sim.Config{World: 2, Model: model}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return send(ctx, l, n)
		}
		return recv(ctx, l, n)
	})
	if err != nil {
		return 0, fmt.Errorf("derive: simulating a message of %d bytes: %w", n, err)
	}
	return res.Finish[1], nil
}

func sendQUIC(ctx context.Context, l algos.Link, n int) error {
	return algos.Send(ctx, l, 1, tagData, device.Phantom(n))
}

func recvQUIC(ctx context.Context, l algos.Link, n int) error {
	return algos.Recv(ctx, l, 0, tagData, device.Phantom(n))
}

// sendBulk and recvBulk are realnet's bulk path, in either mode: a
// request to send and the clear-to-send on the eager TCP connection, then
// the payload on the bulk connection. (Until wire version 2 the default
// mode's request went on QUIC.)
func sendBulk(ctx context.Context, l algos.Link, n int) error {
	if err := algos.Send(ctx, l, 1, tagRTS, device.Phantom(0)); err != nil {
		return err
	}
	if err := algos.Recv(ctx, l, 1, tagCTS, device.Phantom(0)); err != nil {
		return err
	}
	return algos.Send(ctx, l, 1, tagBulk, device.Phantom(n))
}

// recvBulk is the receiver's side: realnet posts the payload's receive,
// then grants the request, so the receive is ready before the payload can
// arrive.
func recvBulk(ctx context.Context, l algos.Link, n int) error {
	payload := l.Irecv(0, tagBulk, device.Phantom(n))
	if err := algos.Recv(ctx, l, 0, tagRTS, device.Phantom(0)); err != nil {
		return err
	}
	if err := algos.Send(ctx, l, 0, tagCTS, device.Phantom(0)); err != nil {
		return err
	}
	return l.Wait(ctx, payload)
}

// sendEager and recvEager are an eager message that arrives before its
// receive is posted: realnet reads it into a buffer, and copies it into the
// receive's buffer once it is posted (the copy is charged as the model's
// compute, ReduceTime, at copyBandwidth).
func sendEager(ctx context.Context, l algos.Link, n int) error {
	return algos.Send(ctx, l, 1, tagEager, device.Phantom(n))
}

func recvEager(ctx context.Context, l algos.Link, n int) error {
	if err := algos.Recv(ctx, l, 0, tagEager, device.Phantom(n)); err != nil {
		return err
	}
	return l.Reduce(device.Phantom(n), device.Phantom(n), device.U8, device.Sum)
}

// twoPaths is a sim.Model of a pair of ranks joined by realnet's links: the
// bulk link carries the messages tagged tagBulk, the eager link (a TCP
// connection like the bulk one) the eager connection's frames, the QUIC
// link the others. Each is an alpha-beta network of its own, so the paths'
// messages do not queue behind each other (realnet's bulk and eager
// connections are separate TCP connections beside the QUIC one). Compute
// is the eager path's copy: ReduceTime of n bytes is n/copyBandwidth.
type twoPaths struct {
	quic, bulk    sim.AlphaBeta
	copyBandwidth float64
}

func (m twoPaths) NewNetwork(e *sim.Engine) sim.Network {
	return &twoPathNet{quic: m.quic.NewNetwork(e), bulk: m.bulk.NewNetwork(e), eager: m.bulk.NewNetwork(e), copyBandwidth: m.copyBandwidth}
}

type twoPathNet struct {
	quic, bulk, eager sim.Network
	copyBandwidth     float64
}

func (n *twoPathNet) Post(m *sim.Message) {
	switch m.Tag {
	case tagBulk:
		n.bulk.Post(m)
	case tagRTS, tagCTS, tagEager:
		n.eager.Post(m)
	default:
		n.quic.Post(m)
	}
}

func (n *twoPathNet) Settle() {
	n.quic.Settle()
	n.bulk.Settle()
	n.eager.Settle()
}

func (n *twoPathNet) ReduceTime(_, bytes int) sim.Time {
	if n.copyBandwidth <= 0 {
		return 0
	}
	return sim.TransferTime(bytes, n.copyBandwidth)
}
