package mesh_test

import (
	"fmt"

	"github.com/nexar-go/nexar-go/mesh"
)

func Example() {
	spec, err := mesh.Parse("hypercube")
	if err != nil {
		panic(err)
	}
	m, err := mesh.New(spec, 6)
	if err != nil {
		panic(err)
	}
	fmt.Println("neighbours of 3:", m.Neighbours(3))
	fmt.Println("route 3 -> 4:", m.Route(3, 4), "hops:", m.Hops(3, 4))
	fmt.Println("diameter:", m.Diameter())
	// Output:
	// neighbours of 3: [1 2]
	// route 3 -> 4: [2 0 4] hops: 3
	// diameter: 3
}
