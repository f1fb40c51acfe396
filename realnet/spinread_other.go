//go:build !unix

package realnet

import (
	"io"
	"net"
	"time"
)

// spinReader returns c: spinning reads system calls on file descriptors
// (spinread_unix.go).
func spinReader(c net.Conn, _ time.Duration) io.Reader { return c }
