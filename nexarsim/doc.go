// Package nexarsim is the nexar-sim command as a library: Main runs it.
// cmd/nexar-sim is nothing but a call of Main; a user's module that adds
// its own algorithms (algos.RegisterAlgorithm) calls Main from its own
// main package to get a nexar-sim that lists, runs and plots them beside
// the catalogue's:
//
//	func main() {
//		algos.MustRegisterAlgorithm("allreduce", myAllreduce)
//		nexarsim.Main()
//	}
//
// See docs/adding-an-algorithm.md and examples/custom-algorithm. The
// command itself is documented by 'nexar-sim help' and cmd/nexar-sim.
package nexarsim
