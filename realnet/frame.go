package realnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/algos"
)

// Wire formats. Everything realnet puts on the wire is one of four things,
// each with every length bounded before anything is allocated for it:
//
//   - a message header, the first bytes of each unidirectional QUIC stream
//     (one stream per message): fixed size, see msgHeader;
//   - a control frame on the long-lived bidirectional control stream of a
//     connection, and the frames of the join protocol: a type byte, a
//     uvarint body length no larger than the type allows, and the body;
//   - the hello that opens a bulk TCP connection: fixed size;
//   - the header of each payload on a bulk TCP connection: fixed size.
//
// Integers are big-endian.

// wireVersion 2: a data header's ID counts the requests to send that went
// before it on TCP (tcprts.go), which a rank of version 1 would read as a
// message id: ranks of the two versions refuse each other's headers and
// hellos with a protocol error naming both versions.
const wireVersion = 2

// Message kinds carried in a message header.
const (
	// kindData: the payload follows the header on the same stream.
	kindData byte = 1
	// kindRTS (request to send): the payload will travel on the bulk TCP
	// connection once the receiver has answered with a cts control frame
	// naming the header's id.
	kindRTS byte = 2
	// The frames only the eager connection carries (see eager.go), in the
	// header's layout: kindCTS clears bulk transfer ID to be sent (the
	// answer to an rts that came on the eager connection); kindCredit
	// grants Len more bytes of eager messages; kindAsk asks for credit,
	// from a rank that will send on the eager connection (Len 0: a full
	// window, for eager messages; else at most Len bytes, for requests to
	// send); kindAfter says that the requests to send after it follow the
	// sender's first Len message streams (tcprts.go).
	kindCTS    byte = 3
	kindCredit byte = 4
	kindAsk    byte = 5
	kindAfter  byte = 6
)

// kindRelayRTS marks an inbound message that is a relayed message's
// request to send (relay.go); it never travels in a header.
const kindRelayRTS byte = 0x80

// msgHeaderLen is the size of an encoded msgHeader.
const msgHeaderLen = 2 + 8 + 8 + 8

// msgHeader opens every message stream.
type msgHeader struct {
	Kind byte
	Tag  algos.Tag
	Len  uint64 // payload bytes
	// ID is the bulk transfer id of kindRTS. On a kindData stream it is
	// the number of requests to send the sender queued on the eager
	// connection before it (tcprts.go), which the message follows.
	ID uint64
}

func (h msgHeader) append(b []byte) []byte {
	b = append(b, wireVersion, h.Kind)
	b = binary.BigEndian.AppendUint64(b, uint64(h.Tag))
	b = binary.BigEndian.AppendUint64(b, h.Len)
	return binary.BigEndian.AppendUint64(b, h.ID)
}

// decodeMsgHeader parses a message header and rejects a payload longer than
// maxLen.
func decodeMsgHeader(b []byte, maxLen uint64) (msgHeader, error) {
	if len(b) != msgHeaderLen {
		return msgHeader{}, fmt.Errorf("message header of %d bytes, want %d", len(b), msgHeaderLen)
	}
	if b[0] != wireVersion {
		return msgHeader{}, fmt.Errorf("message header version %d, want %d", b[0], wireVersion)
	}
	h := msgHeader{
		Kind: b[1],
		Tag:  algos.Tag(binary.BigEndian.Uint64(b[2:])),
		Len:  binary.BigEndian.Uint64(b[10:]),
		ID:   binary.BigEndian.Uint64(b[18:]),
	}
	switch {
	case h.Kind != kindData && h.Kind != kindRTS:
		return msgHeader{}, fmt.Errorf("unknown message kind %d", h.Kind)
	case h.Len > maxLen:
		return msgHeader{}, fmt.Errorf("message of %d bytes exceeds the limit of %d", h.Len, maxLen)
	}
	return h, nil
}

// decodeEagerHeader parses the header of a frame of the eager connection:
// a message (data of at most maxData bytes, or an rts of at most maxLen)
// or one of its control frames.
func decodeEagerHeader(b []byte, maxData, maxLen uint64) (msgHeader, error) {
	if len(b) != msgHeaderLen || b[0] != wireVersion {
		return msgHeader{}, fmt.Errorf("eager frame header %x", b)
	}
	h := msgHeader{
		Kind: b[1],
		Tag:  algos.Tag(binary.BigEndian.Uint64(b[2:])),
		Len:  binary.BigEndian.Uint64(b[10:]),
		ID:   binary.BigEndian.Uint64(b[18:]),
	}
	ok := false
	switch h.Kind {
	case kindData:
		ok = h.Len <= maxData && h.ID == 0
	case kindRTS:
		ok = h.Len <= maxLen
	case kindCTS:
		ok = h.Tag == 0 && h.Len == 0
	case kindCredit, kindAsk, kindAfter:
		ok = h.Tag == 0 && h.ID == 0
	}
	if !ok {
		return msgHeader{}, fmt.Errorf("eager frame of kind %d, tag %#x, %d bytes, id %d", h.Kind, h.Tag, h.Len, h.ID)
	}
	return h, nil
}

// Frame types of the control stream and of the join protocol.
const (
	frameHello   byte = 1 // mesh: who I am (control stream, first frame each way)
	frameCTS     byte = 2 // mesh: clear to send bulk transfer id
	frameBye     byte = 3 // mesh: I am closing; count of message streams I opened to you
	frameJoin    byte = 16
	frameWelcome byte = 17
	frameReject  byte = 18
)

// Bounds of frame bodies.
const (
	maxAddrLen    = 255
	maxReasonLen  = 1024
	maxWorld      = 1 << 14
	helloLen      = 1 + 4 + 4 + 16 + 16
	maxJoinLen    = 1 + 4 + 4 + 1 + maxAddrLen + 2 + 2
	maxWelcomeLen = 4 + 4 + 16 + maxWorld*(1+maxAddrLen+2+2)
)

// maxFrameBody returns the largest body a frame of type t may have, or -1
// for an unknown type.
func maxFrameBody(t byte) int {
	switch t {
	case frameHello:
		return helloLen
	case frameCTS, frameBye:
		return 8
	case frameJoin:
		return maxJoinLen
	case frameWelcome:
		return maxWelcomeLen
	case frameReject:
		return 2 + maxReasonLen
	}
	return -1
}

// appendFrame appends a frame of type t with body to b.
func appendFrame(b []byte, t byte, body []byte) []byte {
	b = append(b, t)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// errFrameTooLong is wrapped by readFrame for a body over its type's bound.
var errFrameTooLong = errors.New("frame body too long")

// byteReader is what readFrame needs: io.ByteReader to read the length
// without reading past the frame, io.Reader for the body.
type byteReader interface {
	io.Reader
	io.ByteReader
}

// readFrame reads one frame whose type is in allowed. It allocates the body
// only after checking its length against the type's bound.
func readFrame(r byteReader, allowed ...byte) (byte, []byte, error) {
	t, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == t
	}
	if !ok {
		return 0, nil, fmt.Errorf("unexpected frame type %d", t)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, nil, fmt.Errorf("frame type %d: length: %w", t, noEOF(err))
	}
	if max := maxFrameBody(t); n > uint64(max) {
		return 0, nil, fmt.Errorf("frame type %d: %w: %d bytes, at most %d", t, errFrameTooLong, n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, fmt.Errorf("frame type %d: body: %w", t, noEOF(err))
	}
	return t, body, nil
}

// noEOF turns an EOF inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Session identifies one assembled world; connections carrying another
// session's hello are refused, so that two jobs on one cluster cannot mix.
type Session [16]byte

// hello is the first frame each side writes on a connection's control
// stream.
type hello struct {
	Rank, World int
	Session     Session
	// Token is what the dialer must present when it opens the bulk TCP
	// connection; the acceptor issues it, the dialer sends zeros.
	Token [16]byte
}

func (h hello) body() []byte {
	b := make([]byte, 0, helloLen)
	b = append(b, wireVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(h.Rank))
	b = binary.BigEndian.AppendUint32(b, uint32(h.World))
	b = append(b, h.Session[:]...)
	return append(b, h.Token[:]...)
}

func decodeHello(b []byte) (hello, error) {
	if len(b) != helloLen {
		return hello{}, fmt.Errorf("hello of %d bytes, want %d", len(b), helloLen)
	}
	if b[0] != wireVersion {
		return hello{}, fmt.Errorf("hello version %d, want %d", b[0], wireVersion)
	}
	rank, world := binary.BigEndian.Uint32(b[1:]), binary.BigEndian.Uint32(b[5:])
	if world < 1 || world > maxWorld || rank >= world {
		return hello{}, fmt.Errorf("hello from rank %d of %d", rank, world)
	}
	h := hello{Rank: int(rank), World: int(world)}
	copy(h.Session[:], b[9:25])
	copy(h.Token[:], b[25:41])
	return h, nil
}

// decodeU64 decodes the body of a cts or bye frame.
func decodeU64(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("frame body of %d bytes, want 8", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func u64Body(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// Bulk TCP connection: a hello, then in each direction a sequence of
// (bulkHeader, payload).
const (
	bulkMagic     = "NXB1"
	eagerMagic    = "NXE1" // the eager connection's hello (see eager.go)
	bulkHelloLen  = 4 + 4 + 16 + 16
	bulkHeaderLen = 16
)

// bulkHello opens a bulk TCP connection, or the eager one beside it, from
// the rank that dialed it.
type bulkHello struct {
	Rank    int
	Session Session
	Token   [16]byte
	Eager   bool
}

func (h bulkHello) encode() []byte {
	b := make([]byte, 0, bulkHelloLen)
	if h.Eager {
		b = append(b, eagerMagic...)
	} else {
		b = append(b, bulkMagic...)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(h.Rank))
	b = append(b, h.Session[:]...)
	return append(b, h.Token[:]...)
}

func decodeBulkHello(b []byte) (bulkHello, error) {
	if len(b) != bulkHelloLen {
		return bulkHello{}, fmt.Errorf("bulk hello of %d bytes, want %d", len(b), bulkHelloLen)
	}
	if m := string(b[:4]); m != bulkMagic && m != eagerMagic {
		return bulkHello{}, fmt.Errorf("bulk hello: bad magic %q", b[:4])
	}
	rank := binary.BigEndian.Uint32(b[4:])
	if rank >= maxWorld {
		return bulkHello{}, fmt.Errorf("bulk hello from rank %d", rank)
	}
	h := bulkHello{Rank: int(rank), Eager: string(b[:4]) == eagerMagic}
	copy(h.Session[:], b[8:24])
	copy(h.Token[:], b[24:40])
	return h, nil
}

// bulkHeader precedes each payload on a bulk connection.
type bulkHeader struct {
	ID, Len uint64
}

func (h bulkHeader) encode(b *[bulkHeaderLen]byte) {
	binary.BigEndian.PutUint64(b[:8], h.ID)
	binary.BigEndian.PutUint64(b[8:], h.Len)
}

func decodeBulkHeader(b []byte, maxLen uint64) (bulkHeader, error) {
	if len(b) != bulkHeaderLen {
		return bulkHeader{}, fmt.Errorf("bulk header of %d bytes, want %d", len(b), bulkHeaderLen)
	}
	h := bulkHeader{ID: binary.BigEndian.Uint64(b), Len: binary.BigEndian.Uint64(b[8:])}
	if h.Len > maxLen {
		return bulkHeader{}, fmt.Errorf("bulk payload of %d bytes exceeds the limit of %d", h.Len, maxLen)
	}
	return h, nil
}
