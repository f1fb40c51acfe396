package calibrate

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/units"
)

// Sample is one measured time of one collective call, or of one
// point-to-point benchmark: what a model is calibrated against.
type Sample struct {
	// Collective is the catalogue's name of the collective
	// ("allreduce"), or PointToPoint.
	Collective string
	// Algorithm is the variant's name as results name it: "ring",
	// "pipelined_ring(segment=2MiB)"; for PointToPoint samples the
	// benchmark (PingPong, Stream, BiStream, Shift). Params are its
	// parameters.
	Algorithm string
	Params    map[string]int
	// Assumed is set when the measurement does not say which algorithm
	// ran (a benchmark log: the library chose): Algorithm is the one the
	// model simulates, and FitCandidates may try others.
	Assumed bool
	World   int
	// Nodes is the nodes the ranks ran on, where the log says (NCCL's
	// count, or the hosts of nccl-tests' rank lines); 0 if it does not.
	Nodes int
	// NCCL is what the run's lines say of NCCL (channels, NCCL's choice
	// at each size), shared by the run's samples; nil if nothing.
	NCCL *NCCLInfo
	// Bytes is the message size as nccl-tests counts it.
	Bytes int
	DType device.DType
	Op    device.Op
	Root  int
	// Time is the measured time in seconds: for PointToPoint samples the
	// time per message their benchmark reports (see PointToPoint).
	Time float64
	// Source says where the sample comes from: "file:line".
	Source string
	// Transport is the transport thresholds of the run that measured the
	// sample, when its file records them (the bulk_threshold and
	// eager_threshold columns of nexar-live's results.csv); nil when it
	// does not. Calibrate holds the model's settings at them (see
	// Options.Hold).
	Transport *algos.Thresholds
}

func (s Sample) String() string {
	return fmt.Sprintf("%s/%s p=%d %s", s.Collective, s.Algorithm, s.World, units.FormatBytes(float64(s.Bytes)))
}

// PointToPoint is the Collective of samples of point-to-point
// benchmarks between two ranks, the most direct measurements of latency
// and bandwidth there are. Their Algorithm names the benchmark:
//
//   - PingPong (osu_latency): rank 0 sends Bytes to rank 1, which sends
//     them back; Time is half the round trip.
//   - Stream (osu_bw): rank 0 sends a window of Params["window"]
//     messages of Bytes back to back (64 by default), then rank 1 sends
//     a 4-byte acknowledgement; Time is the whole over the window, so
//     that Bytes/Time is the bandwidth the benchmark reports. (Models
//     whose messages do not overlap their latency simulate the window as
//     one transfer: see ModelSpec.Overlaps.)
//   - BiStream (osu_bibw): both ranks send a window to each other at
//     once; Time is the whole over the window, so that 2 Bytes/Time is
//     the bidirectional bandwidth reported.
//   - Shift (nccl-tests' sendrecv_perf): every rank sends Bytes to the
//     next and receives from the previous, on World ranks.
const PointToPoint = "pt2pt"

// The point-to-point benchmarks, as the Algorithm of PointToPoint
// samples.
const (
	PingPong = "latency"
	Stream   = "bw"
	BiStream = "bibw"
	Shift    = "sendrecv"
)
