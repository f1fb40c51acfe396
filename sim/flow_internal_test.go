package sim

import (
	"testing"
	"unsafe"
)

// TestFlowEdgeLayout pins the edge record to two cache lines, the account
// in the first and the filling's fields in the second (see flowEdge), and
// a receiver's to one.
func TestFlowEdgeLayout(t *testing.T) {
	var e flowEdge
	if s := unsafe.Sizeof(e); s != 128 {
		t.Errorf("flowEdge is %d bytes; want 128", s)
	}
	if o := unsafe.Offsetof(e.capacity); o != 64 {
		t.Errorf("flowEdge.capacity at %d; want 64, the second line", o)
	}
	if s := unsafe.Sizeof(flowRecv{}); s != 64 {
		t.Errorf("flowRecv is %d bytes; want 64", s)
	}
}
