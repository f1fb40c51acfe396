package nexarlive

import (
	"fmt"
	"runtime"

	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/units"
)

// This file is the guard on --np: ranks beyond the machine's cores are
// measured oversubscribed (a warning says what that does to the
// timings), and far beyond them, or beyond what its memory holds, a run
// is refused unless --oversubscribe is given, as mpirun refuses to
// oversubscribe unless told.

// machine is what the guard knows of the machine the ranks run on.
type machine struct {
	cores int
	// memAvail is the memory available, in bytes (0: unknown, and not
	// checked).
	memAvail int64
}

// thisMachine returns the machine the command runs on; tests replace it.
var thisMachine = func() machine {
	_, avail := cli.MachineMemory()
	return machine{cores: runtime.NumCPU(), memAvail: avail}
}

// oversubscribeFactor is how many ranks per core a run may have before it
// is refused without --oversubscribe.
const oversubscribeFactor = 4

// Estimated memory of one rank beside its buffers: a rank process (Go's
// runtime, QUIC and TLS, the bulk path's connections; about 30 MiB
// measured on 4 loopback ranks), or a rank of an emulated run, in the
// launcher's process (its endpoint and the emulated ports' queues).
const (
	rankProcessBytes  = 32 << 20
	emulatedRankBytes = 4 << 20
)

// rankBytes estimates the memory one rank of a run of points needs: its
// base, and twice the buffers of its largest point (the transport holds
// copies of what is in flight).
func rankBytes(job *live.Job, emulated bool) int64 {
	base := int64(rankProcessBytes)
	if emulated {
		base = emulatedRankBytes
	}
	var most int64
	for _, p := range job.Points {
		send, recv, used := p.Layout()
		sz := int64(p.DType.Size())
		most = max(most, (2*int64(send+recv)+int64(used))*sz)
	}
	return base + 2*most
}

// guardRanks checks np ranks, each needing perRank bytes, against m. It
// returns a warning to print (ranks share cores), or an error that refuses
// the run (far more ranks than cores, or more than the memory holds),
// which oversubscribe turns into a warning. cmd names the command in the
// messages.
func guardRanks(cmd string, np int, perRank int64, m machine, oversubscribe bool) (warning string, err error) {
	cores := max(m.cores, 1)
	var refuse string
	switch {
	case np > oversubscribeFactor*cores:
		refuse = fmt.Sprintf("--np %d is more than %d ranks per core on this machine's %d core(s): each rank would wait its turn on a core for most of every collective, so the times measured would be the scheduler's, not the network's",
			np, oversubscribeFactor, cores)
	case m.memAvail > 0 && int64(np)*perRank > m.memAvail:
		refuse = fmt.Sprintf("--np %d ranks need about %s (an estimated %s per rank, with its buffers), more than the %s this machine has available: ranks would be swapped out or killed",
			np, units.FormatBytesFixed(int64(np)*perRank), units.FormatBytesFixed(perRank), units.FormatBytesFixed(m.memAvail))
	}
	if refuse != "" && !oversubscribe {
		return "", fmt.Errorf("%s; give fewer ranks, or --oversubscribe (mpirun's flag) to run them anyway", refuse)
	}
	if refuse != "" {
		return fmt.Sprintf("nexar-live %s: warning: --oversubscribe: %s", cmd, refuse), nil
	}
	if np > cores {
		return fmt.Sprintf("nexar-live %s: warning: %d ranks on %d core(s): the ranks share cores, so a latency measured includes the time a rank waits to be scheduled, and a bandwidth is shared with the other ranks on its core; the times describe this machine oversubscribed more than the network (the model calibrated on them too)",
			cmd, np, cores), nil
	}
	return "", nil
}
