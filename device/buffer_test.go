package device

import (
	"bytes"
	"strings"
	"testing"
)

func TestDTypeNames(t *testing.T) {
	sizes := map[DType]int{F16: 2, BF16: 2, F32: 4, F64: 8, I8: 1, I16: 2, I32: 4, I64: 8, U8: 1, U16: 2, U32: 4, U64: 8}
	if len(DTypes()) != len(sizes) {
		t.Fatalf("DTypes() has %d types, want %d", len(DTypes()), len(sizes))
	}
	for i, dt := range DTypes() {
		if dt != DType(i) {
			t.Errorf("DTypes()[%d] = %v", i, dt)
		}
		got, err := ParseDType(dt.String())
		if err != nil || got != dt {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", dt.String(), got, err, dt)
		}
		if dt.Size() != sizes[dt] {
			t.Errorf("%v.Size() = %d, want %d", dt, dt.Size(), sizes[dt])
		}
		if want := dt <= F64; dt.IsFloat() != want {
			t.Errorf("%v.IsFloat() = %v", dt, dt.IsFloat())
		}
	}
	for _, s := range []string{"", "F32", "float32", "f8", "i128"} {
		if _, err := ParseDType(s); err == nil {
			t.Errorf("ParseDType(%q) succeeded", s)
		}
	}
	if s := DType(200).String(); s != "dtype(200)" {
		t.Errorf("DType(200).String() = %q", s)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("DType(200).Size() did not panic")
		}
	}()
	_ = DType(200).Size()
}

func TestOpNames(t *testing.T) {
	if len(Ops()) != 4 {
		t.Fatalf("Ops() = %v", Ops())
	}
	for i, op := range Ops() {
		if op != Op(i) {
			t.Errorf("Ops()[%d] = %v", i, op)
		}
		got, err := ParseOp(op.String())
		if err != nil || got != op {
			t.Errorf("ParseOp(%q) = %v, %v; want %v", op.String(), got, err, op)
		}
	}
	for _, s := range []string{"", "Sum", "avg", "add"} {
		if _, err := ParseOp(s); err == nil {
			t.Errorf("ParseOp(%q) succeeded", s)
		}
	}
	if s := Op(9).String(); s != "op(9)" {
		t.Errorf("Op(9).String() = %q", s)
	}
}

// other is a Buffer that is neither Host nor Phantom.
type other int

func (o other) Len() int                { return int(o) }
func (o other) Slice(off, n int) Buffer { return other(n) }

func TestCopy(t *testing.T) {
	dst, src := Host{0, 0, 0}, Host{1, 2, 3}
	if err := Copy(dst, src); err != nil || !bytes.Equal(dst, src) {
		t.Fatalf("Copy host: %v, dst %v", err, dst)
	}
	// Any copy involving a phantom buffer moves nothing and succeeds.
	for _, c := range [][2]Buffer{{Phantom(3), src}, {dst, Phantom(3)}, {Phantom(3), Phantom(3)}, {Phantom(3), other(3)}} {
		if err := Copy(c[0], c[1]); err != nil {
			t.Errorf("Copy(%T, %T): %v", c[0], c[1], err)
		}
	}
	for _, c := range [][2]Buffer{{Host{0}, src}, {Phantom(2), src}, {dst, Phantom(4)}} {
		if err := Copy(c[0], c[1]); err == nil || !strings.HasPrefix(err.Error(), "device: ") {
			t.Errorf("Copy of %d bytes into %d: err %v", c[1].Len(), c[0].Len(), err)
		}
	}
	if err := Copy(other(3), src); err == nil {
		t.Error("Copy into an unsupported buffer succeeded")
	}
}

func TestReduce(t *testing.T) {
	dst := Host{1, 2, 3, 4}
	if err := Reduce(dst, Host{10, 20, 30, 40}, U8, Sum); err != nil || !bytes.Equal(dst, Host{11, 22, 33, 44}) {
		t.Fatalf("Reduce host: %v, dst %v", err, dst)
	}
	// Reducing a slice reduces the bytes of the buffer it aliases.
	if err := Reduce(dst.Slice(2, 2), Host{1, 1}, U8, Max); err != nil || !bytes.Equal(dst, Host{11, 22, 33, 44}) {
		t.Fatalf("Reduce slice: %v, dst %v", err, dst)
	}
	if err := Reduce(dst.Slice(0, 2), Host{100, 1}, U8, Max); err != nil || !bytes.Equal(dst, Host{100, 22, 33, 44}) {
		t.Fatalf("Reduce slice: %v, dst %v", err, dst)
	}
	for _, c := range [][2]Buffer{{Phantom(4), dst}, {dst, Phantom(4)}, {Phantom(8), Phantom(8)}} {
		if err := Reduce(c[0], c[1], F32, Sum); err != nil {
			t.Errorf("Reduce(%T, %T): %v", c[0], c[1], err)
		}
	}
	bad := []struct {
		dst, src Buffer
		dt       DType
	}{
		{Host{0, 0}, Host{0, 0, 0, 0}, U8},
		{Phantom(4), Phantom(8), F32},
		{Host{0, 0, 0}, Host{0, 0, 0}, F16}, // not a whole number of elements
		{Phantom(6), Phantom(6), F32},
		{other(4), Host{0, 0, 0, 0}, F32},
	}
	for _, c := range bad {
		err := Reduce(c.dst, c.src, c.dt, Sum)
		if err == nil || !strings.HasPrefix(err.Error(), "device: ") {
			t.Errorf("Reduce(%T %d, %T %d, %v): err %v", c.dst, c.dst.Len(), c.src, c.src.Len(), c.dt, err)
		}
	}
}

func TestPhantomAndHost(t *testing.T) {
	p := Phantom(10)
	if p.Len() != 10 || p.Slice(2, 5).Len() != 5 || !IsPhantom(p.Slice(2, 5)) {
		t.Errorf("Phantom slicing: %v", p.Slice(2, 5))
	}
	if _, ok := HostBytes(p); ok {
		t.Error("HostBytes(Phantom) ok")
	}
	h := Host{1, 2, 3, 4}
	s := h.Slice(1, 2)
	b, ok := HostBytes(s)
	if !ok || !bytes.Equal(b, []byte{2, 3}) || cap(b) != 2 {
		t.Fatalf("HostBytes(h.Slice(1, 2)) = %v, %v (cap %d)", b, ok, cap(b))
	}
	b[0] = 9
	if h[1] != 9 {
		t.Error("a slice of a Host does not alias it")
	}
	for _, r := range [][2]int{{-1, 2}, {0, 11}, {5, -1}, {9, 2}} {
		func() {
			defer func() {
				if e := recover(); e == nil {
					t.Errorf("Phantom(10).Slice(%d, %d) did not panic", r[0], r[1])
				}
			}()
			p.Slice(r[0], r[1])
		}()
	}
}
