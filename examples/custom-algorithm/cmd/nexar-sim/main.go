// Command nexar-sim is nexar-go's nexar-sim with this module's algorithms
// in its catalogue: the chain allreduce lists, validates, runs and plots
// beside the catalogue's own.
//
//	go run ./cmd/nexar-sim list
//	go run ./cmd/nexar-sim run -b 8 -e 1M -f 8 --world 8 --algorithms ring,chain --out out/
package main

import (
	_ "example.com/custom-algorithm/chain" // registers "chain"

	"github.com/nexar-go/nexar-go/nexarsim"
)

func main() { nexarsim.Main() }
