package nccl

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// switchOp is one in-network reduction among group (ascending ranks):
// the contributions of contributors, reduced in a switch, delivered to
// receivers. Every member knows the roles, as NCCL's kernels do.
type switchOp struct {
	group, contributors, receivers []int
}

// switchNet carries the in-network operations of one channel: through the
// link's switch where the network has one (algos.SwitchReducer), and on
// links to real hardware that have none, by a rank standing in for the
// switch (the op's one receiver, else its one contributor, else the
// group's first rank): the others send it their contributions, it reduces
// them in rank order and sends the result to the receivers. A model whose
// network has no such switch fails the call: NVLS and CollNet do not run
// there.
type switchNet struct {
	k    *call
	ch   *channel
	sr   algos.SwitchReducer
	soft bool
}

// newSwitchNet checks that the network can reduce for every group.
func (k *call) newSwitchNet(ch *channel, groups [][]int, what string) (*switchNet, error) {
	sn := &switchNet{k: k, ch: ch}
	sr, ok := k.l.(algos.SwitchReducer)
	can := ok
	for _, g := range groups {
		if !can {
			break
		}
		can = sr.CanSwitchReduce(g)
	}
	switch {
	case can:
		sn.sr = sr
	case algos.IsModel(k.l):
		return nil, fmt.Errorf("nccl: %s needs a switch that reduces in the network for ranks %v, and this network has none (NVLS needs NVSwitches with NVLink SHARP, CollNet InfiniBand SHARP)", what, groups[0])
	default:
		sn.soft = true
	}
	return sn, nil
}

// post posts this rank's part of op and returns the requests to wait for.
// send and recv are nil where this rank does not contribute or receive.
// role sets the op's tag: operations of processes that run at once must
// use different roles.
func (sn *switchNet) post(role algos.Tag, op switchOp, send, recv device.Buffer) ([]algos.Request, error) {
	k := sn.k
	tag := tagOf(role, sn.ch.id, kindData)
	if !sn.soft {
		return []algos.Request{sn.sr.ISwitchReduce(op.group, tag, send, recv, k.dt, k.op)}, nil
	}
	return nil, sn.emulate(op, tag, send, recv)
}

// emulate runs op by a rank standing in for the switch (see switchNet).
func (sn *switchNet) emulate(op switchOp, tag algos.Tag, send, recv device.Buffer) error {
	k, l := sn.k, sn.k.l
	reducer := op.group[0]
	switch {
	case len(op.receivers) == 1:
		reducer = op.receivers[0]
	case len(op.contributors) == 1:
		reducer = op.contributors[0]
	}
	if k.me != reducer {
		if send != nil {
			if err := algos.Send(k.ctx, l, reducer, tag, send); err != nil {
				return err
			}
		}
		if recv != nil {
			return algos.Recv(k.ctx, l, reducer, tag|kindFlag, recv)
		}
		return nil
	}
	var n int
	switch {
	case send != nil:
		n = send.Len()
	case recv != nil:
		n = recv.Len()
	}
	acc := l.Alloc(n)
	tmp := l.Alloc(n)
	first := true
	for _, c := range op.contributors {
		var in device.Buffer
		if c == k.me {
			in = send
		} else {
			if err := algos.Recv(k.ctx, l, c, tag, tmp); err != nil {
				return err
			}
			in = tmp
		}
		var err error
		if first {
			err = l.Copy(acc, in)
		} else {
			err = l.Reduce(acc, in, k.dt, k.op)
		}
		if err != nil {
			return err
		}
		first = false
	}
	var reqs []algos.Request
	for _, r := range op.receivers {
		if r == k.me {
			if err := l.Copy(recv, acc); err != nil {
				return err
			}
			continue
		}
		reqs = append(reqs, l.Isend(r, tag|kindFlag, acc))
	}
	return l.Wait(k.ctx, reqs...)
}

// ldReduce is NVLS's multimem.ld_reduce of shard owner's part: every
// member contributes, owner receives.
func ldReduce(group []int, owner int) switchOp {
	return switchOp{group: group, contributors: group, receivers: []int{owner}}
}

// multicast is NVLS's multimem.st: owner's data to every other member.
func multicast(group []int, owner int) switchOp {
	var rs []int
	for _, r := range group {
		if r != owner {
			rs = append(rs, r)
		}
	}
	return switchOp{group: group, contributors: []int{owner}, receivers: rs}
}

// allreduceOp is SHARP's allreduce: every member contributes and
// receives.
func allreduceOp(group []int) switchOp {
	return switchOp{group: group, contributors: group, receivers: group}
}
