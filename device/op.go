package device

import "fmt"

// Op is an element-wise reduction operator.
type Op uint8

// The reduction operators every device supports.
const (
	Sum Op = iota
	Prod
	Min
	Max
	numOps
)

var opNames = [numOps]string{"sum", "prod", "min", "max"}

// Ops lists every reduction operator in declaration order.
func Ops() []Op { return []Op{Sum, Prod, Min, Max} }

func (o Op) String() string {
	if o >= numOps {
		return fmt.Sprintf("op(%d)", uint8(o))
	}
	return opNames[o]
}

// ParseOp returns the operator named s ("sum", "prod", "min", "max").
func ParseOp(s string) (Op, error) {
	for i, n := range opNames {
		if n == s {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("unknown op %q (want one of sum, prod, min, max)", s)
}
