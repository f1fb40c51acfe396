// Package simnetbw adds link bandwidth to quic-go's emulated network
// (testutils/simnet), which has latency and MTU but moves every packet at
// once. A Network is a switch with one port per node: a packet leaves its
// sender's uplink after the packets queued before it, at Bandwidth bytes
// per second, crosses the switch in Latency, and is serialised again on the
// receiver's downlink, which serves packets in the order they reach the
// switch. It is the packet-level counterpart of the simulator's alpha-beta
// model (one egress and one ingress port per rank): a lone message of m
// bytes arrives after Latency + m/Bandwidth plus one packet's time.
//
// Run it inside testing/synctest: time is then virtual, so latencies of
// milliseconds cost no wall time, and durations measured with time.Now are
// the network's, not the machine's.
package simnetbw

import (
	"container/heap"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go/testutils/simnet"
)

// Network is an emulated switched network. Set its fields before the
// first NewEndpoint.
type Network struct {
	// Latency is the one-way delay through the switch.
	Latency time.Duration
	// Bandwidth is the rate of every port, each direction, in bytes per
	// second; 0 means unlimited.
	Bandwidth float64
	// MTU is the largest packet carried; larger ones are dropped. 0 means
	// 1500.
	MTU int
	// Overhead is added to every packet's size when it is serialised:
	// the IP and UDP headers, 28 bytes, unless set.
	Overhead int
	// MaxQueue drops a packet that would wait longer than this in its
	// sender's uplink queue, as a switch buffer of MaxQueue x Bandwidth
	// bytes does; 0 means no loss.
	MaxQueue time.Duration

	mu    sync.Mutex
	ports map[string]*port
	done  chan struct{}
	wg    sync.WaitGroup

	// Sent, Dropped count packets.
	Sent, Dropped int64
}

// port is one node's connection to the switch.
type port struct {
	n    *Network
	recv simnet.PacketReceiver

	mu       sync.Mutex
	upFree   time.Time // when the uplink has sent what is queued on it
	queue    packetHeap
	seq      uint64
	wake     chan struct{}
	downFree time.Time
}

// NewEndpoint returns a packet connection at addr on the network. It
// blocks rather than drops when its reader is slow, as a socket buffer
// large enough never to overflow would.
func (n *Network) NewEndpoint(addr *net.UDPAddr) *simnet.SimConn {
	return simnet.NewBlockingSimConn(addr, n)
}

// AddNode implements simnet.Router; NewEndpoint calls it.
func (n *Network) AddNode(addr net.Addr, r simnet.PacketReceiver) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ports == nil {
		n.ports = map[string]*port{}
		n.done = make(chan struct{})
	}
	p := &port{n: n, recv: r, wake: make(chan struct{}, 1)}
	n.ports[addr.String()] = p
	n.wg.Go(p.downlink)
}

func (n *Network) serialise(bytes int) time.Duration {
	if n.Bandwidth <= 0 {
		return 0
	}
	return time.Duration(float64(bytes) / n.Bandwidth * 1e9)
}

// SendPacket implements simnet.Router.
func (n *Network) SendPacket(pk simnet.Packet) error {
	n.mu.Lock()
	src, dst := n.ports[pk.From.String()], n.ports[pk.To.String()]
	mtu, over := n.MTU, n.Overhead
	if mtu == 0 {
		mtu = 1500
	}
	if over == 0 {
		over = 28
	}
	if src == nil || dst == nil || len(pk.Data)+over > mtu {
		n.Dropped++
		n.mu.Unlock()
		return nil
	}
	n.Sent++
	n.mu.Unlock()

	now := time.Now()
	size := len(pk.Data) + over
	src.mu.Lock()
	start := src.upFree
	if start.Before(now) {
		start = now
	}
	if n.MaxQueue > 0 && start.Sub(now) > n.MaxQueue {
		src.mu.Unlock()
		n.mu.Lock()
		n.Sent--
		n.Dropped++
		n.mu.Unlock()
		return nil
	}
	src.upFree = start.Add(n.serialise(size))
	arrive := src.upFree.Add(n.Latency)
	src.mu.Unlock()

	dst.mu.Lock()
	dst.seq++
	heap.Push(&dst.queue, queued{pk: pk, size: size, at: arrive, seq: dst.seq})
	dst.mu.Unlock()
	select {
	case dst.wake <- struct{}{}:
	default:
	}
	return nil
}

// downlink delivers the packets that reach the switch for this port, in
// the order they reach it, each after its serialisation on the port.
func (p *port) downlink() {
	n := p.n
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		var next *queued
		if len(p.queue) > 0 {
			next = &p.queue[0]
		}
		var wait time.Duration
		if next != nil {
			wait = time.Until(next.at)
		}
		if next != nil && wait <= 0 {
			q := heap.Pop(&p.queue).(queued)
			start := q.at
			if start.Before(p.downFree) {
				start = p.downFree
			}
			p.downFree = start.Add(n.serialise(q.size))
			deliver := p.downFree
			p.mu.Unlock()
			if d := time.Until(deliver); d > 0 {
				timer.Reset(d)
				select {
				case <-timer.C:
				case <-n.done:
					return
				}
			}
			p.recv.RecvPacket(q.pk)
			continue
		}
		p.mu.Unlock()
		var tc <-chan time.Time
		if next != nil {
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case <-p.wake:
			timer.Stop() // Go 1.23 timers: nothing stale is left to drain
		case <-tc:
		case <-n.done:
			return
		}
	}
}

// Close stops the network's goroutines. Close the endpoints first: a
// delivery blocked on an endpoint's full receive queue ends when the
// endpoint closes.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.done != nil {
		select {
		case <-n.done:
		default:
			close(n.done)
		}
	}
	n.mu.Unlock()
	n.wg.Wait()
	return nil
}

type queued struct {
	pk   simnet.Packet
	size int
	at   time.Time
	seq  uint64
}

type packetHeap []queued

func (h packetHeap) Len() int { return len(h) }
func (h packetHeap) Less(i, j int) bool {
	return h[i].at.Before(h[j].at) || h[i].at.Equal(h[j].at) && h[i].seq < h[j].seq
}
func (h packetHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *packetHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *packetHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
