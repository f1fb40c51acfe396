// Command nexar-live is nexar-go's nexar-live with this module's
// algorithms: it measures the chain allreduce on real ranks over QUIC (the
// ranks it starts are this executable, so each has the algorithm).
//
//	go run ./cmd/nexar-live run --np 4 -b 8 -e 1M -f 8 --algorithms ring,chain --out live-out/
package main

import (
	_ "example.com/custom-algorithm/chain" // registers "chain"

	"github.com/nexar-go/nexar-go/nexarlive"
)

func main() { nexarlive.Main() }
