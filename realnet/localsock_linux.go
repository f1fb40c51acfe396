//go:build linux

package realnet

import "net"

// listenUnix opens the local socket named name. The name is in Linux's
// abstract namespace: there is no file to leave behind or to guard with
// permissions, it lives as long as the listener, and it is reachable
// only from the same network namespace, which is where a peer whose
// bulk address is one of this host's runs.
func listenUnix(name string) (net.Listener, error) { return net.Listen("unix", name) }
