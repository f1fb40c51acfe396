package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nexar-go/nexar-go/mesh"
)

// Relayed is a network whose ranks are joined as a sparse mesh (package
// mesh: a hypercube, a k-regular graph; key "mesh" of [network]): a
// message between ranks that are joined goes straight over Model, and one
// between ranks that are not is relayed along the mesh's route, store and
// forward: it travels to the route's first rank as a message of its own on
// Model, which, once it has arrived there whole, sends it on to the next,
// and so on to its destination. Each hop costs what a message between
// neighbours costs on Model, ports, links, protocol and all (a hop through
// a rendezvous protocol makes its own handshake, its receive counting as
// posted: the relay takes what arrives), and it queues behind the relay's
// own traffic on the relay's ports. Relaying costs the relay no compute.
//
// On alpha-beta a message of n bytes over h hops takes h(α + nβ) alone;
// the sender's send completes once the first relay holds the message, and
// the receive once the last hop has arrived.
//
// The mesh is built for each run's world (mesh.New), which must suit it (a
// k-regular mesh of odd degree needs an even world), so a world rebuilt
// after a failure (RunShrink) is joined as the same mesh of its own size.
// A rank may fail (as a fault of an outer Faulty, or through RunShrink):
// messages from or to it are lost or fail as on any network, and one only
// passing through it is lost, its receive failing with a *PathCutError.
// Faults inside a relayed model (a Faulty under it) are refused. Switch
// operations (SwitchNetwork) are not relayed: Model carries them.
type Relayed struct {
	Model Model
	Mesh  mesh.Spec
}

// String describes the network for reports.
func (r Relayed) String() string { return fmt.Sprintf("%s over a %s mesh", modelName(r.Model), r.Mesh) }

// Unwrap implements Unwrapper: it returns the model it decorates.
func (r Relayed) Unwrap() Model { return r.Model }

// Rewrap implements Rewrapper: a copy of r that decorates inner.
func (r Relayed) Rewrap(inner Model) Model {
	r.Model = inner
	return r
}

// NewNetwork implements Model; it panics where NewNetworkChecked fails.
func (r Relayed) NewNetwork(e *Engine) Network {
	n, err := r.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (r Relayed) NewNetworkChecked(e *Engine) (Network, error) {
	if r.Model == nil {
		return nil, errors.New("a mesh on no model")
	}
	m, err := mesh.New(r.Mesh, e.World())
	if err != nil {
		return nil, err
	}
	if modelMayFail(r.Model) {
		return nil, fmt.Errorf("mesh %s: failing ranks or links are not modelled on a relayed network", r.Mesh)
	}
	inner, err := newInner(r.Model, e)
	if err != nil {
		return nil, err
	}
	if !replayable(inner) {
		return nil, fmt.Errorf("mesh %s: failing ranks or links are not modelled on a relayed network", r.Mesh)
	}
	if m.Diameter() <= 1 {
		return inner, nil // every pair is joined: nothing to relay
	}
	return &relayNet{wrapped: wrapped{inner}, e: e, mesh: m}, nil
}

// relayNet is the state of a Relayed network for one run.
type relayNet struct {
	wrapped
	e    *Engine
	mesh *mesh.Mesh
}

// relay is a message on its way through relays: the engine hands each of
// its hops back to it (Engine.Deliver, Engine.Drop).
type relay struct {
	n    *relayNet
	orig *Message
}

func (n *relayNet) Post(m *Message) {
	if n.mesh.Joined(m.Src, m.Dst) {
		n.inner.Post(m)
		return
	}
	n.hop(&relay{n: n, orig: m}, m.Src)
}

// hop sends r's message from rank from to the next rank of its route, as a
// message of its own.
func (n *relayNet) hop(r *relay, from int) {
	o := r.orig
	h := &Message{Src: from, Dst: n.mesh.NextHop(from, o.Dst), Tag: o.Tag, Bytes: o.Bytes, ID: o.ID, Posted: n.e.Now(),
		wire: o.wire, latFac: o.latFac, bwFac: o.bwFac, mseq: msgMatched, extra: &msgExtra{relay: r}}
	n.inner.Post(h)
}

// delivered takes hop h of r, which has arrived: the first relay frees the
// sender's send, the last hop delivers the message, any other is sent on.
// A relay that has failed (FailRank) sends nothing on, and what it sent
// before is lost: the message's receive fails with a *PathCutError.
func (r *relay) delivered(h *Message) {
	e := r.n.e
	if h.Src != r.orig.Src && e.ranks.at(h.Src).crashed {
		r.cut(h, h.Src) // sent by a relay that failed since: lost, as any message of a failed rank
		return
	}
	if h.Dst == r.orig.Dst {
		e.Deliver(r.orig)
		return
	}
	if e.ranks.at(h.Dst).crashed {
		r.cut(h, h.Dst)
		return
	}
	if h.Src == r.orig.Src {
		e.Release(r.orig)
	}
	r.n.hop(r, h.Dst)
}

// cut gives up r's message, whose hop h met the failed relay rank.
func (r *relay) cut(h *Message, failed int) {
	e := r.n.e
	e.Drop(r.orig, &PathCutError{Src: r.orig.Src, Dst: r.orig.Dst, Link: fmt.Sprintf("%d->%d (relay rank %d failed)", h.Src, h.Dst, failed), At: e.Now()})
}

// DropRank implements RankDropper for a rank that fails: of the hops the
// inner network drops, those of messages from or to the rank give back
// their message, which the engine loses or fails; those of messages that
// only pass through it are cut (see delivered). Other hops of messages
// from or to it go on, and the engine deals with the message when it is
// delivered.
func (n *relayNet) DropRank(rank int) []*Message {
	var out []*Message
	var seen []*relay
	for _, m := range n.wrapped.DropRank(rank) {
		r := m.relayOf()
		switch {
		case r == nil:
			out = append(out, m)
		case slices.Contains(seen, r):
		case r.orig.Src == rank || r.orig.Dst == rank:
			seen = append(seen, r)
			out = append(out, r.orig)
		default:
			seen = append(seen, r)
			r.cut(m, rank)
		}
	}
	slices.SortFunc(out, func(a, b *Message) int { return cmpInt64(a.ID, b.ID) })
	return out
}

// ControlTime implements ControlTimer: a control message relayed along
// the route, each hop a control message of the inner network.
func (n *relayNet) ControlTime(m *Message) Time {
	var t Time
	for from := m.Src; from != m.Dst; {
		to := n.mesh.NextHop(from, m.Dst)
		h := *m
		h.Src, h.Dst = from, to
		t += n.wrapped.ControlTime(&h)
		from = to
	}
	return t
}
