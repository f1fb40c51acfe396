// Package nexarlive is the nexar-live command as a library: Main runs it.
// cmd/nexar-live is nothing but a call of Main; a user's module that adds
// its own algorithms (algos.RegisterAlgorithm) calls Main from its own
// main package to get a nexar-live that measures them on real ranks (its
// run starts the ranks as the same executable, so each has them):
//
//	func main() {
//		algos.MustRegisterAlgorithm("allreduce", myAllreduce)
//		nexarlive.Main()
//	}
//
// See docs/adding-an-algorithm.md and examples/custom-algorithm. The
// command itself is documented by 'nexar-live help' and cmd/nexar-live.
package nexarlive
