//go:build !amd64

package device

// clearUpperAVX does nothing on machines without AVX registers.
func clearUpperAVX() {}
