package nccl

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// switchOp is one in-network reduction among group (ascending ranks):
// every member contributes and receives (an allreduce, owner -1), every
// member contributes and owner receives (ld_reduce), or owner contributes
// and the others receive (multicast). Every member knows the roles, as
// NCCL's kernels do; they are kept as a kind and an owner rather than as
// lists, which a group of 72 would make costly to build for every shard.
type switchOp struct {
	group []int
	kind  switchKind
	owner int
}

type switchKind uint8

const (
	opAllreduce switchKind = iota
	opLdReduce
	opMulticast
)

// contributes and receives say what rank r does in op.
func (op switchOp) contributes(r int) bool { return op.kind != opMulticast || r == op.owner }
func (op switchOp) receives(r int) bool {
	switch op.kind {
	case opLdReduce:
		return r == op.owner
	case opMulticast:
		return r != op.owner
	}
	return true
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
	if op.kind != opAllreduce {
		reducer = op.owner
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
	for _, c := range op.group {
		if !op.contributes(c) {
			continue
		}
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
	for _, r := range op.group {
		if !op.receives(r) {
			continue
		}
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
	return switchOp{group: group, kind: opLdReduce, owner: owner}
}

// multicast is NVLS's multimem.st: owner's data to every other member.
func multicast(group []int, owner int) switchOp {
	return switchOp{group: group, kind: opMulticast, owner: owner}
}

// allreduceOp is SHARP's allreduce: every member contributes and
// receives.
func allreduceOp(group []int) switchOp {
	return switchOp{group: group, kind: opAllreduce, owner: -1}
}
