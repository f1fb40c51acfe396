package realnet

import (
	"context"
	"net"
	"strconv"
	"sync"
)

// Ranks on one host connect their bulk and eager connections over a Unix
// socket instead of TCP, unless Config.NoLocalSockets. A Unix socket
// carries a stream between two processes at 1.5-2 times loopback TCP's
// rate (the ladder's unix-bw against tcp-bw: no segments, checksums or
// acknowledgements), though four ranks' 64 MiB allreduce on two cores
// gains only a few percent from it (live/README.md). What it saves there
// is the cipher, which on one host protects nothing.
//
// Such a connection is plaintext, as on a trusted network, and is as safe
// as a sealed one: its bytes pass only through the kernel, so whoever can
// read them (root, or the ranks' own user) can read the ranks' memory as
// well, and nobody can inject into an established Unix stream. It is
// bound to its QUIC connection as every bulk connection is, by the token
// proofs both ways, so a process of another job, or one squatting on the
// socket's name, cannot take either end's place.
//
// The socket's name follows from the bulk listener's TCP port
// (localName), so peers learn nothing new: a rank whose peer's bulk
// address is one of this host's addresses dials the name, and falls back
// to TCP if nothing answers there or the answer is not its peer (another
// listener on the same port of another address, or a squatter).

// localPrefix and the bulk listener's port name its local socket.
const localPrefix = "@nexar-bulk/"

// localName is the local socket's name beside the bulk listener at
// tcpAddr ("host:port").
func localName(tcpAddr string) string {
	_, port, err := net.SplitHostPort(tcpAddr)
	if err != nil {
		port = tcpAddr
	}
	return localPrefix + port
}

// listenLocal opens the endpoint's local socket beside its bulk listener.
// Where it cannot (another platform, or the name is taken), the endpoint
// has none and its peers on this host reach it over TCP.
func (ep *Endpoint) listenLocal() {
	ta, ok := ep.bulkLn.Addr().(*net.TCPAddr)
	if !ok {
		return
	}
	ln, err := listenUnix(localPrefix + strconv.Itoa(ta.Port))
	if err != nil {
		return
	}
	ep.localLn = ln
	ep.localAcc = newAcceptor(ln, maxHandshakes)
	ep.wg.Go(func() { ep.acceptBulk(ep.localAcc, true) })
}

// localHost says whether an address is one of this host's.
type localHost struct {
	once sync.Once
	ips  []net.IP
}

// holds reports whether addr's host ("host:port") is a loopback address
// or one of this host's interfaces' addresses; a name is looked up.
func (l *localHost) holds(ctx context.Context, addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		found, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
		if err != nil {
			return false
		}
		ips = found
	}
	l.once.Do(func() {
		as, _ := net.InterfaceAddrs()
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok {
				l.ips = append(l.ips, n.IP)
			}
		}
	})
	for _, ip := range ips {
		if ip.IsLoopback() {
			return true
		}
		for _, own := range l.ips {
			if own.Equal(ip) {
				return true
			}
		}
	}
	return false
}
