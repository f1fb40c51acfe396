package schedule_test

import (
	"fmt"
	"os"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/schedule"
)

// The catalogue's ring allreduce on two GPUs, as an MSCCL executor reads it.
func ExampleRingAllreduce() {
	if err := schedule.RingAllreduce(2).WriteXML(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <algo name="ring_allreduce_2" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1" outofplace="0" minBytes="0" maxBytes="0">
	//   <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="0">
	//     <tb id="0" send="1" recv="-1" chan="0">
	//       <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
	//       <step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="1" deps="0" hasdep="1"/>
	//     </tb>
	//     <tb id="1" send="-1" recv="1" chan="0">
	//       <step s="0" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="0" deps="0" hasdep="1"/>
	//       <step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="0" deps="1" hasdep="0"/>
	//     </tb>
	//   </gpu>
	//   <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
	//     <tb id="0" send="0" recv="-1" chan="0">
	//       <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
	//       <step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0" hasdep="1"/>
	//     </tb>
	//     <tb id="1" send="-1" recv="0" chan="0">
	//       <step s="0" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="0" deps="0" hasdep="1"/>
	//       <step s="1" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="0" deps="1" hasdep="0"/>
	//     </tb>
	//   </gpu>
	// </algo>
}

// A schedule file becomes an algorithm of its collective, which scenarios
// then name and every transport runs.
func ExampleRegister() {
	name, err := schedule.Register("testdata/allgather_direct_ll128_3gpu.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	coll, _ := algos.Lookup("allgather")
	a, _ := coll.Algorithm(name)
	fmt.Println(name)
	fmt.Println(a.Summary)
	// Output:
	// msccl_allgather_direct_ll128_3gpu
	// MSCCL schedule "direct_allgather" (allgather_direct_ll128_3gpu.xml, 3 GPUs, LL128, 1 channel(s))
}
