package device

import "testing"

// FuzzReduceHost compares the kernels with the reference on fuzzer-chosen
// bytes. The first half of data is dst, the second src, both trimmed to a
// whole number of elements and placed off bytes into fresh buffers, so that
// misaligned operands are covered too.
func FuzzReduceHost(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(F32), uint8(Sum), uint8(0))
	f.Add([]byte{0x00, 0x7c, 0x01, 0x7c, 0xff, 0x7b, 0x00, 0x4c}, uint8(F16), uint8(Sum), uint8(1))
	f.Add([]byte{0x80, 0x3f, 0x80, 0x3b, 0x00, 0x80, 0x00, 0x00}, uint8(BF16), uint8(Min), uint8(0))
	f.Add(make([]byte, 200), uint8(I64), uint8(Prod), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, dt, op, off uint8) {
		d, o := DType(dt%uint8(numDTypes)), Op(op%uint8(numOps))
		n := len(data) / 2 / d.Size() * d.Size()
		shift := int(off % 8)
		dst := make([]byte, n+shift)[shift:]
		src := make([]byte, n+7)[7-shift/2:][:n]
		copy(dst, data[:n])
		copy(src, data[len(data)/2:][:n])
		checkReduce(t, dst, src, d, o)
	})
}
