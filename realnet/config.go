package realnet

import (
	"errors"
	"fmt"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/mesh"
)

// Config tunes a rank's transport. The zero value of every field but
// Credentials means its default.
type Config struct {
	// Credentials authenticate this rank and its peers. Required.
	Credentials *Credentials

	// Timeout bounds every Wait: a Wait that has not completed after
	// Timeout returns a *TimeoutError naming the peers it waited for,
	// whatever its context says. Default 2 minutes.
	Timeout time.Duration
	// PeerTimeout is how long a peer may stay silent before it is
	// declared lost. Connections send keep-alives at a third of it, so a
	// live peer is never silent that long, however long a collective
	// waits; a killed process is detected by every rank within
	// PeerTimeout. Keep it below Timeout so that a lost peer is named
	// rather than timed out on. Default 10 seconds.
	PeerTimeout time.Duration
	// HandshakeTimeout bounds each QUIC or TLS handshake. Default 10 s.
	HandshakeTimeout time.Duration

	// Thresholds say which path a message takes by its payload size:
	// from Thresholds.Bulk bytes on, the bulk TCP connection instead of
	// its QUIC stream, when both ranks have one (BulkNever: never); with
	// Thresholds.Eager positive, every message to a peer this rank has a
	// bulk connection with goes over TCP, as MPI's eager and rendezvous
	// protocols do (see eager.go): a message of fewer than Eager bytes
	// eagerly, header and payload at once, on a second TCP connection of
	// the pair that carries nothing large; a larger one by rendezvous on
	// the bulk connection, whose request and clear-to-send travel on TCP
	// too, so that Bulk then does not apply. Eager is at most
	// MaxEagerThreshold; 0, the default, keeps realnet's QUIC path for
	// small messages. The receiver bounds what it buffers by the credit it
	// grants (within MaxUnexpected).
	//
	// Bulk 0 means the default, algos.DefaultBulkThreshold; 1 sends
	// every message that has a payload on the bulk path (what a threshold
	// of 0 means in a tuning table). Config.Used gives the thresholds a
	// rank so configured uses.
	Thresholds algos.Thresholds
	// NoBulk disables the bulk path of this endpoint: it neither listens
	// for nor dials bulk connections (nor eager ones).
	NoBulk bool
	// TrustedNetwork sends bulk payloads over plaintext TCP. Only for
	// networks where nobody can read or inject traffic; the bulk
	// connection is still bound to its authenticated QUIC connection by a
	// token exchanged over QUIC. QUIC itself is always encrypted.
	TrustedNetwork bool
	// NoLocalSockets connects ranks on one host over TCP, as ranks on
	// different hosts, instead of over a Unix socket whose bytes stay in
	// the kernel and are sent in plaintext whatever TrustedNetwork says
	// (localsock.go): to measure the network path on one machine, or
	// where policy wants every byte sealed.
	NoLocalSockets bool
	// SpinRead is how long the eager connection's reader keeps asking
	// its socket for the next frame, yielding to the rank's other
	// goroutines in between, before it waits for the kernel to wake it
	// (0: it waits at once). A wake-up costs the eager path half its
	// latency on loopback (an 8 B Send/Recv one way, 13-14 µs waiting,
	// 6.7 µs spinning 50 µs), which is why MPI libraries poll; but a
	// spinning rank takes a CPU from the others, so spin only where each
	// rank has a CPU of its own (nexar-live's launcher sets
	// NEXAR_SPIN_READ so when the ranks are no more than the CPUs).
	SpinRead time.Duration

	// MaxUnexpected bounds the bytes of messages that arrived before their
	// receive was posted and that this rank buffers, over all peers, each
	// charged its payload and 2 KiB. Beyond it a message waits in its
	// sender's flow-control window until its receive is posted, so a send
	// larger than the window then completes only when the receiver is
	// ready (as MPI's rendezvous protocol does). A QUIC stream's initial
	// window is MaxUnexpected/256 (16 KiB to 256 KiB). Default 64 MiB.
	MaxUnexpected int64
	// MaxMessage is the largest message accepted from a peer; a header
	// announcing more closes the connection. Default 1 TiB.
	MaxMessage int64

	// Mesh says which ranks hold direct connections: the full mesh (the
	// zero value), a hypercube or a k-regular graph, whose other pairs
	// exchange their messages through relays (relay.go).
	Mesh mesh.Spec
}

// ApplyTuning takes the bulk threshold from t's [transport] table, where
// nexar-sim writes the crossover it derives for a site: bulk_threshold =
// "never" keeps every message on QUIC, 0 sends every message with a
// payload on the bulk path (as 1 does: here 0 means the default). An
// eager_threshold there turns the eager path on with that threshold. A nil
// table, or one without [transport], leaves c as it is, so that the
// default, or what the caller set, applies.
func (c *Config) ApplyTuning(t *algos.Tuning) {
	if t == nil || t.Transport == nil {
		return
	}
	if n := t.Transport.Eager; n > 0 {
		c.Thresholds.Eager = min(n, MaxEagerThreshold)
	}
	switch n := t.Transport.Bulk; {
	case n == algos.BulkNever:
		c.Thresholds.Bulk = algos.BulkNever
	case n == 0:
		c.Thresholds.Bulk = 1
	default:
		c.Thresholds.Bulk = n
	}
}

// Used returns the thresholds a rank configured with c uses: Bulk
// algos.DefaultBulkThreshold where c leaves it 0, and with NoBulk the bulk
// path never (nor the eager one, which needs it). It is what nexar-live's
// results.csv records of a run.
func (c Config) Used() algos.Thresholds {
	t := c.Thresholds
	switch {
	case c.NoBulk:
		return algos.Thresholds{Bulk: algos.BulkNever}
	case t.Bulk < 0:
		t.Bulk = algos.BulkNever
	case t.Bulk == 0:
		t.Bulk = algos.DefaultBulkThreshold
	}
	return t
}

func (c Config) withDefaults() (Config, error) {
	if c.Credentials == nil {
		return c, errors.New("realnet: Config.Credentials is required")
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.PeerTimeout <= 0 {
		c.PeerTimeout = 10 * time.Second
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.Thresholds.Bulk == 0 {
		c.Thresholds.Bulk = algos.DefaultBulkThreshold
	}
	if e := c.Thresholds.Eager; e < 0 || e > MaxEagerThreshold {
		return c, fmt.Errorf("realnet: Config.Thresholds.Eager %d: want 0 (off) to %d bytes", e, MaxEagerThreshold)
	}
	if c.SpinRead < 0 {
		return c, fmt.Errorf("realnet: Config.SpinRead %v: want 0 (off) or more", c.SpinRead)
	}
	if c.MaxUnexpected <= 0 {
		c.MaxUnexpected = 64 << 20
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = 1 << 40
	}
	return c, nil
}
