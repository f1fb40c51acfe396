package realnet

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// bulkConn is one bulk TCP connection, sealed or plaintext.
//
// Sealed, it is authenticated by a TLS 1.3 handshake with mutual
// certificates, like every other connection, but its records are not
// crypto/tls's: Go's TLS copies every byte into a record buffer before
// encrypting it in place, and out of one after decrypting it, which at
// bulk rates costs more CPU than the cipher itself. So once the handshake
// is done both ends derive one AES-128-GCM key per direction with the TLS
// exporter (RFC 8446, section 7.5) (128 rather than 256 bits: a tenth
// faster here, as TLS 1.3 itself prefers), and frame the stream themselves:
// every record is sealed with its sequence number as nonce, so that
// nothing can be changed, dropped, replayed or reordered unnoticed, and a
// payload is sealed from the sender's buffer into a scratch record and
// opened from the record straight into the receiver's buffer: the cipher
// does the copy. Records hold at most bulkChunk bytes of payload.
//
// Plaintext (Config.TrustedNetwork), headers and payloads go on the wire as
// they are, and the connection is bound to its QUIC connection by the
// token of its hello.
type bulkConn struct {
	c net.Conn
	// rd is what records are read from: c, or for the eager connection,
	// whose frames are small, a buffer over c.
	rd io.Reader

	wmu     sync.Mutex // one writer at a time (the writer goroutine; tests)
	seal    cipher.AEAD
	sendSeq uint64
	wbuf    []byte

	open    cipher.AEAD
	recvSeq uint64
	rbuf    []byte
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

// newSealedBulk derives the keys of a connection whose TLS handshake tc
// has completed; dialer says which end this is. Records then go on the
// raw connection under tc.
func newSealedBulk(raw net.Conn, tc *tls.Conn, dialer bool) (*bulkConn, error) {
	cs := tc.ConnectionState()
	key := func(label string) (cipher.AEAD, error) {
		k, err := cs.ExportKeyingMaterial(label, nil, 16)
		if err != nil {
			return nil, err
		}
		b, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	}
	d2a, err := key(labelDialerToAcceptor)
	if err != nil {
		return nil, err
	}
	a2d, err := key(labelAcceptorToDialer)
	if err != nil {
		return nil, err
	}
	b := &bulkConn{c: raw, rd: raw, wbuf: make([]byte, bulkChunk+gcmTag), rbuf: make([]byte, bulkChunk+gcmTag)}
	if dialer {
		b.seal, b.open = d2a, a2d
	} else {
		b.seal, b.open = a2d, d2a
	}
	return b, nil
}

func (b *bulkConn) sealed() bool { return b.seal != nil }

func (b *bulkConn) Close() error { return b.c.Close() }

func nonce(seq uint64) []byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[4:], seq)
	return n[:]
}

// errBadRecord is the cause of a protocol error for a sealed record that
// does not open: corrupted, forged, replayed, reordered or truncated.
var errBadRecord = errors.New("bulk record failed authentication")

// writeRecordLocked writes p as one record.
func (b *bulkConn) writeRecordLocked(p []byte) error {
	if !b.sealed() {
		_, err := b.c.Write(p)
		return err
	}
	rec := b.seal.Seal(b.wbuf[:0], nonce(b.sendSeq), p, nil)
	b.sendSeq++
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
	if _, err := b.open.Open(p[:0], nonce(b.recvSeq), rec, nil); err != nil {
		return &ProtocolError{What: "bulk record", Err: errBadRecord}
	}
	b.recvSeq++
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
	var hb [bulkHeaderLen]byte
	if err := b.readRecord(hb[:]); err != nil {
		return bulkHeader{}, err
	}
	h, err := decodeBulkHeader(hb[:], maxLen)
	if err != nil {
		return bulkHeader{}, &ProtocolError{What: "bulk header", Err: err}
	}
	return h, nil
}

// readPayload reads a payload of n bytes into dst (len n), or discards it
// if dst is nil.
func (b *bulkConn) readPayload(dst []byte, n int64) error {
	if !b.sealed() {
		if dst == nil {
			_, err := io.CopyN(io.Discard, b.rd, n)
			return err
		}
		_, err := io.ReadFull(b.rd, dst)
		return err
	}
	for n > 0 {
		k := int(min(n, bulkChunk))
		var p []byte
		if dst == nil {
			p = b.rbuf[:k] // opened in place, then dropped
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

// bufferReads makes the connection read through a buffer, once its setup
// (whose reads must not take more than their record) is done.
func (b *bulkConn) bufferReads() { b.rd = bufio.NewReaderSize(b.c, eagerReadBuffer) }

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
		out = b.seal.Seal(out, nonce(b.sendSeq), h, nil)
		b.sendSeq++
		if n > 0 {
			out = b.seal.Seal(out, nonce(b.sendSeq), raw[msgHeaderLen:msgHeaderLen+n], nil)
			b.sendSeq++
		}
		raw = raw[msgHeaderLen+n:]
	}
	b.wbuf = out[:0]
	_, err := b.c.Write(out)
	return err
}

// readEagerHeader reads the header of the next frame of the eager
// connection.
func (b *bulkConn) readEagerHeader(maxData, maxLen uint64) (msgHeader, error) {
	var hb [msgHeaderLen]byte
	if err := b.readRecord(hb[:]); err != nil {
		return msgHeader{}, err
	}
	h, err := decodeEagerHeader(hb[:], maxData, maxLen)
	if err != nil {
		return msgHeader{}, &ProtocolError{What: "eager frame", Err: err}
	}
	return h, nil
}

// bulkGo is what the acceptor of a sealed bulk connection sends first,
// sealed: the dialer must not send on the raw connection before the
// acceptor's TLS handshake has returned, or the handshake could read
// those bytes into its own buffer.
var bulkGo = []byte("NXGO")

// dialBulkConn runs the dialer's side of a bulk connection's setup on c.
func dialBulkConn(c net.Conn, creds *Credentials, trusted bool, h bulkHello) (*bulkConn, error) {
	if trusted {
		b := newPlainBulk(c)
		return b, b.writeRecord(h.encode())
	}
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
	return b, b.writeRecord(h.encode())
}

// acceptBulkConn runs the acceptor's side of a bulk connection's setup on
// c and returns the dialer's hello.
func acceptBulkConn(c net.Conn, creds *Credentials, trusted bool) (*bulkConn, bulkHello, error) {
	var b *bulkConn
	if trusted {
		b = newPlainBulk(c)
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
	return b, h, err
}
