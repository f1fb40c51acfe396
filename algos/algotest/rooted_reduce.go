package algotest

import (
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// CheckRootedReduce checks rank's buffer after a reduce with op to root
// of Input over world ranks: on the root it must equal Reduced; elsewhere
// the buffer is unspecified (algorithms may leave partial results there)
// and is not checked.
func CheckRootedReduce(got []byte, dt device.DType, op device.Op, rank, root, world int, seed uint64) error {
	if rank != root {
		return nil
	}
	want := Reduced(len(got)/dt.Size(), dt, op, world, seed)
	if err := Compare(got, want, dt); err != nil {
		return fmt.Errorf("root %d: %w", root, err)
	}
	return nil
}
