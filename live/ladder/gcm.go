package ladder

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// The cipher's floor (rung tcp-gcm-bw): raw TCP whose bytes go in records
// sealed and opened with AES-128-GCM as realnet's bulk path seals them
// (realnet/bulkconn.go): at most gcmRecord bytes of payload a record,
// sealed from the sender's buffer into a scratch record and opened from
// the record straight into the receiver's buffer, the nonce a count. No
// realnet, no TLS handshake (the key comes with the command): what is
// left of the bulk path's time beside it is the cipher's and the
// kernel's, so that realnet-bulk-bw against tcp-gcm-bw is what realnet
// adds to them, and tcp-gcm-bw against tcp-bw what sealing alone costs.

// gcmRecord is the largest payload of one record: realnet's bulkChunk.
const gcmRecord = 256 << 10

// gcmHeader is a record's length prefix, as realnet's bulk header
// carries it.
const gcmHeader = 4

// gcmStream seals what it writes to c and opens what it reads from it.
type gcmStream struct {
	c          net.Conn
	aead       cipher.AEAD
	wseq, rseq uint64
	wbuf, rbuf []byte
	// left is the opened payload of a record that a Read could not take
	// whole, from its first byte not yet read.
	left []byte
	lbuf []byte
}

func newGCMStream(c net.Conn, key []byte) (*gcmStream, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &gcmStream{c: c, aead: aead}, nil
}

func nonce(seq uint64) []byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[4:], seq)
	return n[:]
}

func (s *gcmStream) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		k := min(len(p), gcmRecord)
		if need := gcmHeader + k + s.aead.Overhead(); cap(s.wbuf) < need {
			s.wbuf = make([]byte, need)
		}
		rec := s.aead.Seal(s.wbuf[:gcmHeader], nonce(s.wseq), p[:k], nil)
		s.wseq++
		binary.BigEndian.PutUint32(rec, uint32(len(rec)-gcmHeader))
		if _, err := s.c.Write(rec); err != nil {
			return done, err
		}
		p, done = p[k:], done+k
	}
	return done, nil
}

func (s *gcmStream) Read(p []byte) (int, error) {
	if len(s.left) > 0 {
		n := copy(p, s.left)
		s.left = s.left[n:]
		return n, nil
	}
	var hdr [gcmHeader]byte
	if _, err := io.ReadFull(s.c, hdr[:]); err != nil {
		return 0, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n < s.aead.Overhead() || n > gcmRecord+s.aead.Overhead() {
		return 0, fmt.Errorf("tcp-gcm: a record of %d bytes", n)
	}
	if cap(s.rbuf) < n {
		s.rbuf = make([]byte, n)
	}
	rec := s.rbuf[:n]
	if _, err := io.ReadFull(s.c, rec); err != nil {
		return 0, err
	}
	payload := n - s.aead.Overhead()
	dst := p
	if len(p) < payload { // stage it: the caller takes it in pieces
		if cap(s.lbuf) < payload {
			s.lbuf = make([]byte, payload)
		}
		dst = s.lbuf
	}
	out, err := s.aead.Open(dst[:0], nonce(s.rseq), rec, nil)
	if err != nil {
		return 0, errors.New("tcp-gcm: a record that does not open")
	}
	s.rseq++
	if len(p) < payload {
		k := copy(p, out)
		s.left = out[k:]
		return k, nil
	}
	return len(out), nil
}
