//go:build !linux

package realnet

import (
	"errors"
	"net"
)

// listenUnix is not offered here: the Unix socket names that need no
// file are Linux's (localsock_linux.go), so ranks on one host connect
// over TCP as ranks on different hosts do.
func listenUnix(string) (net.Listener, error) { return nil, errors.ErrUnsupported }
