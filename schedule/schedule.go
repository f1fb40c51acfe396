package schedule

import "fmt"

// Schedule is one MSCCL algorithm file: the <algo> element and the
// programs of its GPUs. Its fields are the file's attributes, named as
// msccl-tools writes them and the MSCCL executor reads them.
type Schedule struct {
	// File names the schedule in messages (the path it was read from).
	File string
	// Name is <algo name>; Proto is Simple, LL or LL128 (read and written
	// back, not modelled: the Link's network models its own costs).
	Name  string
	Proto string
	// NChannels is <algo nchannels>: every threadblock's chan is below it.
	NChannels int
	// NChunksPerLoop is how many chunks one loop of the buffer holds: the
	// collective's whole buffer (count times the size multiplier, ngpus
	// for allgather, reducescatter and alltoall) is cut into as many.
	NChunksPerLoop int
	NGPUs          int
	// Coll is the collective as MSCCL names it (allreduce, allgather,
	// reducescatter, alltoall).
	Coll       string
	InPlace    bool
	OutOfPlace bool
	// MinBytes and MaxBytes bound the buffer sizes the schedule is used
	// for; MaxBytes 0 is no bound.
	MinBytes, MaxBytes int64
	GPUs               []GPU
	line               int
	// pairs are the sends and receives that match, found by the dry run.
	pairs []pair
}

// GPU is the program of one rank: its buffers' sizes in chunks and its
// threadblocks.
type GPU struct {
	ID                        int
	IChunks, OChunks, SChunks int
	TBs                       []TB
	line                      int
}

// TB is one threadblock: a sequence of steps run in order, sending to
// Send and receiving from Recv (-1: none) on channel Chan.
type TB struct {
	ID, Send, Recv, Chan int
	Steps                []Step
	line                 int
}

// Step is one instruction of a threadblock.
type Step struct {
	S    int
	Type Op
	// SrcBuf and DstBuf are 'i' (input), 'o' (output) or 's' (scratch);
	// the offsets and Cnt are in chunks.
	SrcBuf, DstBuf byte
	SrcOff, DstOff int
	Cnt            int
	// DepID and Deps name the step (threadblock DepID, step Deps) this
	// one waits for, DepID -1 for none; HasDep marks a step that others
	// wait for.
	DepID, Deps int
	HasDep      bool
	line        int
}

// Op is a step's type.
type Op string

// The step types of the MSCCL executor.
const (
	Send             Op = "s"    // send src
	Recv             Op = "r"    // receive into dst
	RecvCopySend     Op = "rcs"  // receive into dst, and send it on
	RecvReduceSend   Op = "rrs"  // receive, reduce with src, send the result (kept nowhere)
	RecvReduceCopy   Op = "rrc"  // receive, dst = src op received
	RecvReduceCopySd Op = "rrcs" // receive, dst = src op received, and send dst
	Copy             Op = "cpy"  // dst = src
	Reduce           Op = "re"   // dst = dst op src
	Nop              Op = "nop"  // wait for the dependency only
)

// recvs, sends and local say what a step does.
func (o Op) recvs() bool {
	switch o {
	case Recv, RecvCopySend, RecvReduceSend, RecvReduceCopy, RecvReduceCopySd:
		return true
	}
	return false
}

func (o Op) sends() bool {
	switch o {
	case Send, RecvCopySend, RecvReduceSend, RecvReduceCopySd:
		return true
	}
	return false
}

func (o Op) reads() bool {
	switch o {
	case Send, RecvReduceSend, RecvReduceCopy, RecvReduceCopySd, Copy, Reduce:
		return true
	}
	return false
}

func (o Op) writes() bool {
	switch o {
	case Recv, RecvCopySend, RecvReduceCopy, RecvReduceCopySd, Copy, Reduce:
		return true
	}
	return false
}

func validOp(o Op) bool {
	switch o {
	case Send, Recv, RecvCopySend, RecvReduceSend, RecvReduceCopy, RecvReduceCopySd, Copy, Reduce, Nop:
		return true
	}
	return false
}

// Collective returns the catalogue's name of the schedule's collective
// (reducescatter is reduce_scatter), or an error for one the interpreter
// does not run.
func (s *Schedule) Collective() (string, error) {
	switch s.Coll {
	case "allreduce", "allgather", "alltoall":
		return s.Coll, nil
	case "reducescatter":
		return "reduce_scatter", nil
	}
	return "", fmt.Errorf("%s:%d: <algo coll=%q>: the interpreter runs allreduce, allgather, reducescatter and alltoall", s.File, s.line, s.Coll)
}

// multiplier is the executor's size multiplier: the schedule's whole
// buffer in units of the count the collective is called with.
func (s *Schedule) multiplier() int {
	switch s.Coll {
	case "allgather", "reducescatter", "alltoall":
		return s.NGPUs
	}
	return 1
}

// runsInPlace reports whether Run runs the schedule in place: an
// allreduce whenever its file says inplace="1" (the output is then the
// input), the other collectives only where theirs says outofplace="0"
// (alltoall's output is its input; allgather's input is the rank's block
// of its output, reducescatter's output the rank's block of its input,
// as NCCL's in-place calls lay them out). In place the letters i and o
// name the same memory, in whole or in part: the interpreter and the
// readers compare the memory runs of chunks are, never their letters.
func (s *Schedule) runsInPlace() bool {
	if s.Coll == "allreduce" {
		return s.InPlace
	}
	return !s.OutOfPlace
}

// inPlaceHome says where buffer buf lives when the schedule runs in place
// (runsInPlace): in buffer home, as the whole of it (allreduce's and
// alltoall's o is i) or as the rank's block of it (allgather's i of o,
// reducescatter's o of i); ok is false where buf is memory of its own.
func (s *Schedule) inPlaceHome(buf byte) (home byte, rankBlock, ok bool) {
	if !s.runsInPlace() {
		return 0, false, false
	}
	switch {
	case buf == 'o' && (s.Coll == "allreduce" || s.Coll == "alltoall"):
		return 'i', false, true
	case buf == 'i' && s.Coll == "allgather":
		return 'o', true, true
	case buf == 'o' && s.Coll == "reducescatter":
		return 'i', true, true
	}
	return 0, false, false
}

// memOverlap says how two runs of chunks share memory.
type memOverlap int

const (
	noMem   memOverlap = iota // apart
	partMem                   // in part
	sameMem                   // the same memory
)

// chunkOverlap says how cnt chunks of gpu g's buffer a at aoff and as
// many of its buffer b at boff share memory when the schedule runs (see
// runsInPlace). It counts in NGPUs-ths of a chunk: in place, allgather's
// input is the rank's block of its output and reducescatter's output the
// rank's block of its input, which start at rank*nchunksperloop/ngpus
// chunks, not always a whole chunk.
func (s *Schedule) chunkOverlap(g int, a byte, aoff int, b byte, boff, cnt int) memOverlap {
	n := s.NGPUs
	at := func(buf byte, off int) (byte, int) {
		home, rankBlock, ok := s.inPlaceHome(buf)
		switch {
		case !ok:
			return buf, off * n
		case rankBlock:
			return home, g*s.NChunksPerLoop + off*n
		}
		return home, off * n
	}
	x, xo := at(a, aoff)
	y, yo := at(b, boff)
	switch {
	case x != y || xo >= yo+cnt*n || yo >= xo+cnt*n:
		return noMem
	case xo == yo:
		return sameMem
	}
	return partMem
}

func (s *Schedule) where(line int) string { return fmt.Sprintf("%s:%d", s.File, line) }

// Fits reports whether a call with send and recv elements per rank (the
// collective's algos.Collective.Layout of a swept size) of es bytes each
// runs this schedule: its whole buffer within minBytes and maxBytes, and
// cut into nchunksperloop chunks where the collective needs it. The
// scenario asks it for every swept size at validate, so that a sweep the
// schedule cannot run is refused, naming why, before any point runs; Run
// checks the same at run time.
func (s *Schedule) Fits(send, recv, es int) error {
	total := recv
	if s.Coll == "reducescatter" {
		total = send
	}
	if total == 0 {
		return nil
	}
	if nb := int64(total * es); nb < s.MinBytes || (s.MaxBytes > 0 && nb > s.MaxBytes) {
		return fmt.Errorf("%s: a buffer of %d bytes, outside the schedule's minBytes %d to maxBytes %d", s.File, nb, s.MinBytes, s.MaxBytes)
	}
	if total%s.NChunksPerLoop == 0 {
		return nil
	}
	if s.multiplier() != 1 {
		return fmt.Errorf("%s: %d elements do not cut into nchunksperloop %d chunks: %s runs at counts that divide evenly", s.File, total, s.NChunksPerLoop, s.Coll)
	}
	return s.checkSizes(layout{total, s.NChunksPerLoop})
}
