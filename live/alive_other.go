//go:build !unix

package live

// processAlive cannot tell here: every writer is taken to be alive, so
// that nothing a running rank writes is taken from it.
func processAlive(int) bool { return true }
