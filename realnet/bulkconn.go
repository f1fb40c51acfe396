package realnet

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// bulkConn is one bulk TCP connection, sealed or plaintext.
//
// Sealed, it is authenticated by a TLS 1.3 handshake with mutual
// certificates, like every other connection, but its records are not
// crypto/tls's: Go's TLS copies every byte into a record buffer before
// encrypting it in place, and out of one after decrypting it, which at
// bulk rates costs more CPU than the cipher itself. So once the handshake
// is done both ends derive one AES-128-GCM key and IV per direction from
// secrets exported from the handshake (RFC 8446, section 7.5) (128 rather
// than 256 bits: a tenth faster here, as TLS 1.3 itself prefers), and
// frame the stream themselves: every record is sealed with its sequence
// number XORed into the IV as nonce, so that nothing can be changed,
// dropped, replayed or reordered unnoticed (see direction for the key
// updates), and a
// payload is sealed from the sender's buffer into a scratch record and
// opened from the record straight into the receiver's buffer: the cipher
// does the copy. Records hold at most bulkChunk bytes of payload.
//
// What sealing costs is then the cipher's time and little else: a ring
// allreduce of n bytes seals and opens 2(p-1)/p n on every rank. At 64 MiB
// on 4 ranks, with AES-128-GCM sealing about 2.6 GB/s and opening 3.5
// GB/s a core (AES-NI without VAES), that is 0.27 core-seconds over the
// ranks, as much again as all the rest of the plaintext allreduce (0.26
// to 0.31, nearly all of it the kernel's loopback copies). Measured in
// one process (4 ranks, pipelined_ring, issue 30): 0.54 core-seconds
// sealed against 0.26 plaintext, so where the ranks are bound by their
// CPU the sealed path takes about twice the plaintext path's time.
//
// At 1 MiB the cipher alone is 4.2 core-milliseconds over the 4 ranks:
// on 2 cores 2.1 ms of wall time, as long as Open MPI's whole plaintext
// allreduce of 1 MiB (2.09 ms, issue 30), so no record layer brings the
// sealed path near it on such a machine. Measured (4 rank processes,
// run --profile's rank-N.cpu, load 9 to 10): 10.2 to 10.7 ms of CPU per
// allreduce over the ranks sealed against 4.5 to 4.7 plaintext, the
// difference nearly all user time in gcmAesEnc and gcmAesDec, and the
// cores no less busy than on the plaintext path (its times' ratio follows
// its CPU's): no idle time to win back. Two variants made no difference
// measurable at that load: opening records in place in the receiver's
// buffer, and records of 64 KiB for payloads below 1 MiB (so that seal,
// copy and open overlap within a message, and a rank's rendezvous
// goroutine waits less behind a seal or an open, assembly that the
// scheduler cannot preempt: about 100 µs a record of bulkChunk; in an
// execution trace the scheduling latency halved).
//
// Plaintext (Config.TrustedNetwork), headers and payloads go on the wire as
// they are. Either way the connection is bound to its QUIC connection by
// proofs, each way, of the token the acceptor issued over QUIC (proof).
type bulkConn struct {
	c net.Conn
	// rd is what records are read from: c, or for the eager connection,
	// whose frames are small, a buffer over c.
	rd io.Reader

	wmu  sync.Mutex // one writer at a time (the writer goroutine; tests)
	send direction
	wbuf []byte

	recv direction
	rbuf []byte
	// hdr is where the reader reads a header into (a local array would
	// escape through rd: an allocation per frame).
	hdr [max(msgHeaderLen, bulkHeaderLen)]byte

	// binder is what the proofs of the token are computed over: a value
	// exported from this connection's TLS handshake, which a relay in the
	// middle cannot make equal on its two legs; on a plaintext connection,
	// a random challenge the acceptor sends first, so that a hello
	// captured on one connection is refused on another.
	binder []byte
	// peer is the identity the peer's certificate names (sealed only).
	peer Identity
}

// direction is the record protection of one direction of a sealed
// connection: AES-128-GCM under a key and an IV derived from a secret
// exported from the TLS handshake (one per direction), the nonce being the
// IV XORed with the record's sequence number, as in TLS 1.3 (RFC 8446,
// section 5.3). After keyUpdateBytes of plaintext both ends move to the
// next secret, key and IV, each counting the bytes it sealed or opened, so
// that no key protects more than AES-GCM's usage limits allow (about
// 2^38 bytes for TLS 1.3's margins) and no message is needed to agree on
// when.
type direction struct {
	aead   cipher.AEAD
	secret []byte
	iv     [12]byte
	nonceB [12]byte // the nonce nonce returns, here so that it costs no allocation
	seq    uint64
	bytes  int64 // plaintext under the current key
	gen    int   // key updates so far
}

// bulkChunk is the largest payload of one sealed record.
const bulkChunk = 256 << 10

const gcmTag = 16

// Exporter labels of the two directions' keys.
const (
	labelDialerToAcceptor = "EXPORTER-nexar-bulk dialer to acceptor"
	labelAcceptorToDialer = "EXPORTER-nexar-bulk acceptor to dialer"
)

func newPlainBulk(c net.Conn) *bulkConn { return &bulkConn{c: c, rd: c} }

// keyUpdateBytes is the plaintext one key protects before both ends move
// to the next (a variable for the tests).
var keyUpdateBytes int64 = 1 << 34

// Exporter label of the value the token's proofs are computed over.
const labelBinder = "EXPORTER-nexar-bulk binder"

// newSealedBulk derives the secrets of a connection whose TLS handshake tc
// has completed; dialer says which end this is. Records then go on the
// raw connection under tc.
func newSealedBulk(raw net.Conn, tc *tls.Conn, dialer bool) (*bulkConn, error) {
	cs := tc.ConnectionState()
	d2a, err := cs.ExportKeyingMaterial(labelDialerToAcceptor, nil, 32)
	if err != nil {
		return nil, err
	}
	a2d, err := cs.ExportKeyingMaterial(labelAcceptorToDialer, nil, 32)
	if err != nil {
		return nil, err
	}
	binder, err := cs.ExportKeyingMaterial(labelBinder, nil, 32)
	if err != nil {
		return nil, err
	}
	peer, err := peerIdentity(cs.PeerCertificates)
	if err != nil {
		return nil, err
	}
	b := &bulkConn{c: raw, rd: raw, wbuf: make([]byte, bulkChunk+gcmTag), rbuf: make([]byte, bulkChunk+gcmTag), binder: binder, peer: peer}
	if !dialer {
		d2a, a2d = a2d, d2a
	}
	if err := b.send.init(d2a); err != nil {
		return nil, err
	}
	if err := b.recv.init(a2d); err != nil {
		return nil, err
	}
	return b, nil
}

// init sets d to its first secret.
func (d *direction) init(secret []byte) error {
	d.secret = secret
	return d.rekey()
}

// rekey derives the key and IV of d's current secret.
func (d *direction) rekey() error {
	b, err := aes.NewCipher(expand(d.secret, "key")[:16])
	if err != nil {
		return err
	}
	if d.aead, err = cipher.NewGCM(b); err != nil {
		return err
	}
	copy(d.iv[:], expand(d.secret, "iv"))
	d.seq, d.bytes = 0, 0
	return nil
}

// expand derives a value from secret for purpose (HMAC-SHA256, as HKDF's
// expand step does for one block).
func expand(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("nexar bulk " + purpose))
	return m.Sum(nil)
}

// nonce returns the nonce of d's next record, valid until the next call.
func (d *direction) nonce() []byte {
	n := &d.nonceB
	copy(n[:4], d.iv[:4])
	binary.BigEndian.PutUint64(n[4:], binary.BigEndian.Uint64(d.iv[4:])^d.seq)
	return n[:]
}

// advance counts a record of n bytes of plaintext, and moves to the next
// secret once the current key has protected keyUpdateBytes.
func (d *direction) advance(n int) {
	d.seq++
	d.bytes += int64(n)
	if d.bytes >= keyUpdateBytes {
		d.secret = expand(d.secret, "update")
		d.gen++
		if err := d.rekey(); err != nil {
			panic("realnet: AES key of the right size refused: " + err.Error())
		}
	}
}

func (b *bulkConn) sealed() bool { return b.send.aead != nil }

func (b *bulkConn) Close() error { return b.c.Close() }

// errBadRecord is the cause of a protocol error for a sealed record that
// does not open: corrupted, forged, replayed, reordered or truncated.
var errBadRecord = errors.New("bulk record failed authentication")

// writeRecordLocked writes p as one record.
func (b *bulkConn) writeRecordLocked(p []byte) error {
	if !b.sealed() {
		_, err := b.c.Write(p)
		return err
	}
	rec := b.send.aead.Seal(b.wbuf[:0], b.send.nonce(), p, nil)
	b.send.advance(len(p))
	_, err := b.c.Write(rec)
	return err
}

// writeRecord writes p, at most bulkChunk bytes, as one record.
func (b *bulkConn) writeRecord(p []byte) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.writeRecordLocked(p)
}

// readRecord reads one record of exactly len(p) bytes of plaintext into p.
func (b *bulkConn) readRecord(p []byte) error {
	if !b.sealed() {
		_, err := io.ReadFull(b.rd, p)
		return err
	}
	rec := b.rbuf[:len(p)+gcmTag]
	if _, err := io.ReadFull(b.rd, rec); err != nil {
		return err
	}
	if _, err := b.recv.aead.Open(p[:0], b.recv.nonce(), rec, nil); err != nil {
		return &ProtocolError{What: "bulk record", Err: errBadRecord}
	}
	b.recv.advance(len(p))
	return nil
}

// writeMessage writes a payload with its header.
func (b *bulkConn) writeMessage(h bulkHeader, payload []byte) error {
	var hb [bulkHeaderLen]byte
	h.encode(&hb)
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if !b.sealed() {
		bufs := net.Buffers{hb[:], payload}
		_, err := bufs.WriteTo(b.c)
		return err
	}
	if err := b.writeRecordLocked(hb[:]); err != nil {
		return err
	}
	for len(payload) > 0 {
		n := min(len(payload), bulkChunk)
		if err := b.writeRecordLocked(payload[:n]); err != nil {
			return err
		}
		payload = payload[n:]
	}
	return nil
}

// readHeader reads the header of the next payload.
func (b *bulkConn) readHeader(maxLen uint64) (bulkHeader, error) {
	hb := b.hdr[:bulkHeaderLen]
	if err := b.readRecord(hb); err != nil {
		return bulkHeader{}, err
	}
	h, err := decodeBulkHeader(hb, maxLen)
	if err != nil {
		return bulkHeader{}, &ProtocolError{What: "bulk header", Err: err}
	}
	return h, nil
}

// readPayload reads a payload of n bytes into dst (len n), or discards it
// if dst is nil. With a timeout, each chunk must come within it of the one
// before: the read fails with os.ErrDeadlineExceeded once the sender has
// sent nothing for that long (the caller restores the deadline it wants
// afterwards).
func (b *bulkConn) readPayload(dst []byte, n int64, timeout time.Duration) error {
	for n > 0 {
		k := int(min(n, bulkChunk))
		if timeout > 0 {
			b.c.SetReadDeadline(time.Now().Add(timeout))
		}
		var p []byte
		if dst == nil {
			if len(b.rbuf) < k { // plaintext: no record buffer yet
				b.rbuf = make([]byte, bulkChunk)
			}
			p = b.rbuf[:k] // opened in place (sealed), or read, then dropped
		} else {
			p, dst = dst[:k], dst[k:]
		}
		if err := b.readRecord(p); err != nil {
			return err
		}
		n -= int64(k)
	}
	return nil
}

// eagerReadBuffer is the read buffer of an eager connection: its frames
// are small, and one system call reads many.
const eagerReadBuffer = 64 << 10

// buffered returns how many bytes of payload the read buffer holds
// already, in a whole record.
func (b *bulkConn) buffered() int64 {
	br, ok := b.rd.(*bufio.Reader)
	if !ok {
		return 0
	}
	n := int64(br.Buffered())
	if b.sealed() {
		n -= gcmTag // a payload of an eager frame is one record
	}
	return n
}

// drained reports whether the read buffer is empty: the next read is a
// system call.
func (b *bulkConn) drained() bool {
	br, ok := b.rd.(*bufio.Reader)
	return ok && br.Buffered() == 0
}

// bufferReads makes the connection read through a buffer, once its setup
// (whose reads must not take more than their record) is done; the buffer
// fills by spinning up to spin first (Config.SpinRead).
func (b *bulkConn) bufferReads(spin time.Duration) {
	b.rd = bufio.NewReaderSize(spinReader(b.c, spin), eagerReadBuffer)
}

// writeFrames writes frames of the eager connection in one write: each a
// message header and, for data, the payload that follows it; sealed, one
// record for each header and one for each payload.
func (b *bulkConn) writeFrames(raw []byte) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if !b.sealed() {
		_, err := b.c.Write(raw)
		return err
	}
	out := b.wbuf[:0]
	for len(raw) > 0 {
		h := raw[:msgHeaderLen]
		n := 0
		if h[1] == kindData {
			n = int(binary.BigEndian.Uint64(h[10:]))
		}
		out = b.send.aead.Seal(out, b.send.nonce(), h, nil)
		b.send.advance(len(h))
		if n > 0 {
			out = b.send.aead.Seal(out, b.send.nonce(), raw[msgHeaderLen:msgHeaderLen+n], nil)
			b.send.advance(n)
		}
		raw = raw[msgHeaderLen+n:]
	}
	b.wbuf = out[:0]
	_, err := b.c.Write(out)
	return err
}

// readEagerHeader reads the header of the next frame of the eager
// connection.
// The connection may stay idle for as long as the peer has nothing to
// send, but once a frame has begun, the rest of its header must come
// within timeout (0: no bound), or the read fails with
// os.ErrDeadlineExceeded.
func (b *bulkConn) readEagerHeader(maxData, maxLen uint64, timeout time.Duration) (msgHeader, error) {
	if br, ok := b.rd.(*bufio.Reader); ok && timeout > 0 {
		if _, err := br.Peek(1); err != nil {
			return msgHeader{}, err
		}
		need := msgHeaderLen
		if b.sealed() {
			need += gcmTag
		}
		if br.Buffered() < need { // rarely: a frame comes whole
			b.c.SetReadDeadline(time.Now().Add(timeout))
			defer b.c.SetReadDeadline(time.Time{})
		}
	}
	hb := b.hdr[:msgHeaderLen]
	if err := b.readRecord(hb); err != nil {
		return msgHeader{}, err
	}
	h, err := decodeEagerHeader(hb, maxData, maxLen)
	if err != nil {
		return msgHeader{}, &ProtocolError{What: "eager frame", Err: err}
	}
	return h, nil
}

// challengeLen is the size of the challenge the acceptor of a plaintext
// bulk connection sends first.
const challengeLen = 16

// bulkGo is what the acceptor of a sealed bulk connection sends first,
// sealed: the dialer must not send on the raw connection before the
// acceptor's TLS handshake has returned, or the handshake could read
// those bytes into its own buffer.
var bulkGo = []byte("NXGO")

// Roles in the proofs of a bulk connection's token.
const (
	proveDialer   = "dialer"
	proveAcceptor = "acceptor"
)

// proof proves, for role, knowledge of the token the acceptor issued over
// the authenticated QUIC connection, bound to hello and to this
// connection's binder: the dialer sends its proof in its hello, the
// acceptor answers with its own. A holder of a certificate of the CA in
// the middle of the connection knows neither the token nor how to make
// the binders of its two legs agree.
func (b *bulkConn) proof(token [16]byte, role string, h bulkHello) [16]byte {
	h.Token = [16]byte{}
	m := hmac.New(sha256.New, token[:])
	m.Write([]byte(role))
	m.Write(b.binder)
	m.Write(h.encode())
	var out [16]byte
	copy(out[:], m.Sum(nil))
	return out
}

// errWrongPeer marks an error that retrying cannot mend: the process at a
// rank's address is not that rank.
type errWrongPeer struct{ err error }

func (e *errWrongPeer) Error() string { return e.err.Error() }
func (e *errWrongPeer) Unwrap() error { return e.err }

// dialBulkConn runs the dialer's side of a bulk connection's setup on c,
// to the rank whose certificate names member to, with the token its QUIC
// hello issued.
func dialBulkConn(c net.Conn, creds *Credentials, trusted bool, to int, h bulkHello, token [16]byte) (*bulkConn, error) {
	var b *bulkConn
	if trusted {
		b = newPlainBulk(c)
		// The acceptor's challenge, which the proofs cover in place of a
		// handshake's exported value: a hello is good on this
		// connection only.
		b.binder = make([]byte, challengeLen)
		if _, err := io.ReadFull(c, b.binder); err != nil {
			return nil, fmt.Errorf("bulk connection: the acceptor's challenge: %w", err)
		}
	} else {
		var err error
		if b, err = dialBulkSetup(c, creds); err != nil {
			return nil, err
		}
		if err := checkClaim(b.peer, to); err != nil {
			return nil, &errWrongPeer{fmt.Errorf("bulk connection to rank %d: %w", to, err)}
		}
	}
	h.Token = b.proof(token, proveDialer, h)
	if err := b.writeRecord(h.encode()); err != nil {
		return nil, err
	}
	var got [16]byte
	if err := b.readRecord(got[:]); err != nil {
		return nil, fmt.Errorf("bulk connection: the acceptor's proof: %w", err)
	}
	if want := b.proof(token, proveAcceptor, h); !hmac.Equal(got[:], want[:]) {
		return nil, &errWrongPeer{errors.New("bulk connection: the acceptor does not know the token its QUIC connection issued")}
	}
	return b, nil
}

// dialBulkSetup runs the dialer's TLS handshake on c and waits for the
// acceptor's go.
func dialBulkSetup(c net.Conn, creds *Credentials) (*bulkConn, error) {
	tc := tls.Client(c, creds.clientTLS(alpnBulk))
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	b, err := newSealedBulk(c, tc, true)
	if err != nil {
		return nil, err
	}
	var g [4]byte
	if err := b.readRecord(g[:]); err != nil {
		return nil, err
	}
	if string(g[:]) != string(bulkGo) {
		return nil, fmt.Errorf("bulk connection: unexpected %q", g[:])
	}
	return b, nil
}

// acceptBulkConn runs the acceptor's side of a bulk connection's setup on
// c and returns the dialer's hello; the caller checks the rank it claims
// against its certificate (b.peer) and its proof, and answers with its
// own (answerBulk).
func acceptBulkConn(c net.Conn, creds *Credentials, trusted bool) (*bulkConn, bulkHello, error) {
	var b *bulkConn
	if trusted {
		b = newPlainBulk(c)
		b.binder = make([]byte, challengeLen)
		rand.Read(b.binder)
		if _, err := c.Write(b.binder); err != nil {
			return nil, bulkHello{}, err
		}
	} else {
		cfg := creds.serverTLS(alpnBulk)
		// No session tickets: nothing may follow the handshake on the
		// raw connection but sealed records.
		cfg.SessionTicketsDisabled = true
		tc := tls.Server(c, cfg)
		if err := tc.Handshake(); err != nil {
			return nil, bulkHello{}, err
		}
		var err error
		if b, err = newSealedBulk(c, tc, false); err != nil {
			return nil, bulkHello{}, err
		}
		if err := b.writeRecord(bulkGo); err != nil {
			return nil, bulkHello{}, err
		}
	}
	var hb [bulkHelloLen]byte
	if err := b.readRecord(hb[:]); err != nil {
		return nil, bulkHello{}, err
	}
	h, err := decodeBulkHello(hb[:])
	if err != nil {
		return nil, bulkHello{}, err
	}
	return b, h, nil
}

// answerBulk checks the dialer's proof in h against token, and if it
// holds answers with the acceptor's.
func (b *bulkConn) answerBulk(h bulkHello, token [16]byte) error {
	want := b.proof(token, proveDialer, h)
	if !hmac.Equal(h.Token[:], want[:]) {
		return errors.New("bulk hello without the token's proof")
	}
	answer := b.proof(token, proveAcceptor, h)
	return b.writeRecord(answer[:])
}
