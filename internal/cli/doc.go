// Package cli is what nexar-sim and nexar-live share of their command
// lines: dispatch to a command, help, usage errors, and flags that may
// stand before, between or after the positional arguments.
package cli
