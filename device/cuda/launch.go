package cuda

import (
	_ "embed"
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// kernelsPTX is the PTX module of the reduction kernels (see ptxgen.go).
//
//go:embed kernels.ptx
var kernelsPTX string

// blockThreads is the number of threads per block of every kernel launch:
// 256 threads, eight warps, lets eight blocks share an SM of 2048 threads.
const blockThreads = 256

// launch is one kernel launch of a reduction: its arguments and its grid.
type launch struct {
	dst, src        uint64 // device addresses
	head, nvec, n   uint64 // kernel parameters (see ptxgen.go)
	blocks, threads int    // grid and block size
}

// planReduce plans the reduction of n elements of size bytes at device
// addresses dst and src on a GPU that runs at most maxBlocks resident
// blocks of blockThreads (SMs times blocks per SM): the elements before
// dst's first 16-byte boundary are scalar, then whole 16-byte vectors, then
// a scalar tail. If dst and src are not equally aligned modulo 16 no vector
// loads are possible and every element is scalar. The grid is as large as
// the work needs, up to maxBlocks: the kernels' grid-stride loops cover the
// rest with no second wave of blocks.
func planReduce(dst, src uint64, n, size, maxBlocks int) (launch, error) {
	if dst%uint64(size) != 0 || src%uint64(size) != 0 {
		return launch{}, fmt.Errorf("cuda: reduce of %d-byte elements at misaligned addresses %#x and %#x", size, dst, src)
	}
	l := launch{dst: dst, src: src, n: uint64(n), threads: blockThreads}
	lanes := uint64(16 / size)
	if dst%16 == src%16 {
		l.head = min((16-dst%16)%16/uint64(size), l.n)
		l.nvec = (l.n - l.head) / lanes
	}
	work := max(l.nvec, l.n-l.nvec*lanes) // threads with something to do
	blocks := (work + blockThreads - 1) / blockThreads
	l.blocks = int(max(1, min(blocks, uint64(max(1, maxBlocks)))))
	return l, nil
}

// checkReduce validates the operands of a reduction of byte length n.
func checkReduce(dstLen, srcLen int, dt device.DType, op device.Op) error {
	if int(dt) >= len(device.DTypes()) || int(op) >= len(device.Ops()) {
		return fmt.Errorf("cuda: reduce with invalid dtype %v or op %v", dt, op)
	}
	if dstLen != srcLen {
		return fmt.Errorf("cuda: reduce of %d bytes into a buffer of %d", srcLen, dstLen)
	}
	if dstLen%dt.Size() != 0 {
		return fmt.Errorf("cuda: reduce of %d bytes is not a whole number of %s elements", dstLen, dt)
	}
	return nil
}
