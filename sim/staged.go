package sim

import (
	"errors"
	"fmt"
	"math"
)

// Staged adds to another model the copies of ranks whose buffers are on
// devices and whose messages a staging link moves through host memory
// (package staging): device -> pinned host memory -> network -> pinned
// host memory -> device, chunk by chunk, the copy of each chunk overlapping
// the network transfer of its neighbours. Alone on the network, a message
// of n bytes in chunks of c then takes
//
//	α + n/min(B, H) + 2·min(n, c)/H
//
// where α + n/B is its time on the inner model and H is HostBandwidth: the
// copy of the first chunk before the message reaches the network, the copy
// of the last after it arrives, and the transfer at the slower of the
// network and the copies. Staged charges the first copy, and the n/H - n/B
// by which copies slower than the network (H < B = Bandwidth) hold the
// transfer back, as send overhead, and the last copy as receive overhead
// (see Overheads): on the rank's compute, so that one rank's copies queue
// behind each other and behind its reductions, as they do on the staging
// link's streams (its copies wait for earlier compute work). The inner
// model's timing is otherwise unchanged.
type Staged struct {
	Model Model
	// HostBandwidth is H, the device <-> host copy bandwidth in bytes per
	// second (a topology's Topology.HostBandwidth, or a measured pinned
	// copy rate).
	HostBandwidth float64
	// Chunk is the staging chunk c in bytes.
	Chunk int
	// Bandwidth is B, the rate at which the inner model moves one
	// message; 0 if unknown, which leaves the n/H - n/B term out.
	Bandwidth float64
}

// Validate reports parameters the model cannot run with.
func (s Staged) Validate() error {
	switch {
	case s.Model == nil:
		return errors.New("staged: no inner model")
	case !(s.HostBandwidth > 0) || math.IsInf(s.HostBandwidth, 1):
		return fmt.Errorf("staged: host bandwidth %g B/s must be positive and finite", s.HostBandwidth)
	case s.Chunk <= 0:
		return fmt.Errorf("staged: chunk of %d bytes must be positive", s.Chunk)
	case s.Bandwidth < 0 || math.IsNaN(s.Bandwidth):
		return fmt.Errorf("staged: network bandwidth %g B/s must not be negative", s.Bandwidth)
	}
	return nil
}

// Unwrap implements Unwrapper: it returns the model it decorates.
func (s Staged) Unwrap() Model { return s.Model }

// Rewrap implements Rewrapper: a copy of s that decorates inner.
func (s Staged) Rewrap(inner Model) Model {
	s.Model = inner
	return s
}

// NewNetwork implements Model; it panics if the parameters are invalid.
func (s Staged) NewNetwork(e *Engine) Network {
	n, err := s.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (s Staged) NewNetworkChecked(e *Engine) (Network, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	inner, err := newInner(s.Model, e)
	if err != nil {
		return nil, err
	}
	return &stagedNet{wrapped: wrapped{inner}, s: s}, nil
}

type stagedNet struct {
	wrapped
	s Staged
}

// copyTime is the time of the copy of one chunk of a message of n bytes.
func (n *stagedNet) copyTime(bytes int) Time {
	return TransferTime(min(bytes, n.s.Chunk), n.s.HostBandwidth)
}

func (n *stagedNet) SendOverhead(rank, bytes int) Time {
	t := n.copyTime(bytes) + n.wrapped.SendOverhead(rank, bytes)
	if b := n.s.Bandwidth; b > n.s.HostBandwidth {
		t += TransferTime(bytes, n.s.HostBandwidth) - TransferTime(bytes, b)
	}
	return t
}

func (n *stagedNet) RecvOverhead(rank, bytes int) Time {
	return n.copyTime(bytes) + n.wrapped.RecvOverhead(rank, bytes)
}

// HostBandwidthOf returns the device <-> host bandwidth of m's topology for
// a world of world ranks (Topology.HostBandwidth, the hierarchical
// topology's host_bandwidth), looking through the models that wrap
// another (see beneath); 0 if m has no topology or its
// topology does not model it.
func HostBandwidthOf(m Model, world int) (float64, error) {
	if f, ok := m.(Flow); ok {
		if f.Topology == nil {
			return 0, nil
		}
		t, err := f.Topology.Build(world)
		if err != nil {
			return 0, err
		}
		return t.HostBandwidth, nil
	}
	if inner, ok := beneath(m); ok {
		return HostBandwidthOf(inner, world)
	}
	return 0, nil
}
