package device_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/device"
)

func ExampleReduce() {
	f32s := func(v ...float32) device.Host {
		b := make(device.Host, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	dst := f32s(1, 2, 3, -0.5)
	src := f32s(10, 20, 30, 0.25)
	if err := device.Reduce(dst, src, device.F32, device.Sum); err != nil {
		fmt.Println(err)
	}
	var sum []float32
	for i := 0; i < len(dst); i += 4 {
		sum = append(sum, math.Float32frombits(binary.LittleEndian.Uint32(dst[i:])))
	}
	fmt.Println(sum)

	// A phantom buffer has a size but no bytes: the reduction is checked
	// and then costs nothing.
	fmt.Println(device.Reduce(device.Phantom(1<<30), device.Phantom(1<<30), device.BF16, device.Max))
	fmt.Println(device.Reduce(device.Phantom(6), device.Phantom(6), device.F32, device.Sum))
	// Output:
	// [11 22 33 -0.25]
	// <nil>
	// device: reduce of 6 bytes is not a whole number of f32 elements
}
