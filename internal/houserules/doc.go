// Package houserules holds the rules that keep the project's layers apart,
// as tests that run with go test ./...: which package may import which (the
// algorithms know no transport, the simulator and realnet never meet,
// live keeps the real run and imports neither the simulator nor what fits
// or draws, leaves stay leaves, nothing imports the commands), and how long a
// function may grow. docs/architecture.md draws the layers these rules
// protect; a change that needs a new arrow changes the rule and the
// drawing together, in one commit that says why.
//
// The package has no code: importing it gives nothing.
package houserules
