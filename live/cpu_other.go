//go:build !unix

package live

// processCPU: not counted where getrusage is missing.
func processCPU() (cpuUsage, bool) { return cpuUsage{}, false }
