package device

import "fmt"

// DType is the element type of a buffer.
type DType uint8

// The element types every device supports.
const (
	F16 DType = iota
	BF16
	F32
	F64
	I8
	I16
	I32
	I64
	U8
	U16
	U32
	U64
	numDTypes
)

var dtypeNames = [numDTypes]string{"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
var dtypeSizes = [numDTypes]int{2, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8}

// DTypes lists every element type in declaration order.
func DTypes() []DType {
	out := make([]DType, numDTypes)
	for i := range out {
		out[i] = DType(i)
	}
	return out
}

// Size is the size of one element in bytes.
func (t DType) Size() int {
	if t >= numDTypes {
		panic(fmt.Sprintf("device: invalid dtype %d", t))
	}
	return dtypeSizes[t]
}

// IsFloat reports whether t is a floating-point type.
func (t DType) IsFloat() bool { return t <= F64 }

func (t DType) String() string {
	if t >= numDTypes {
		return fmt.Sprintf("dtype(%d)", uint8(t))
	}
	return dtypeNames[t]
}

// ParseDType returns the element type named s ("f32", "bf16", ...).
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q (want one of f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64)", s)
}
