package realnet

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestMsgHeaderRoundTrip(t *testing.T) {
	for _, h := range []msgHeader{
		{Kind: kindData, Tag: 0, Len: 0},
		{Kind: kindData, Tag: 1<<64 - 1, Len: 1 << 30},
		{Kind: kindRTS, Tag: 0x1234_5678_9abc, Len: 64 << 20, ID: 42},
	} {
		b := h.append(nil)
		if len(b) != msgHeaderLen {
			t.Fatalf("%+v: encoded in %d bytes, want %d", h, len(b), msgHeaderLen)
		}
		got, err := decodeMsgHeader(b, 1<<40)
		if err != nil || got != h {
			t.Errorf("%+v: decoded %+v, %v", h, got, err)
		}
	}
}

func TestMsgHeaderRejects(t *testing.T) {
	good := msgHeader{Kind: kindData, Tag: 3, Len: 100}.append(nil)
	mutate := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		max  uint64
		want string
	}{
		{"short", good[:msgHeaderLen-1], 1 << 40, "header of"},
		{"version", mutate(func(b []byte) { b[0] = 9 }), 1 << 40, "version"},
		{"kind", mutate(func(b []byte) { b[1] = 7 }), 1 << 40, "kind"},
		{"too long", good, 99, "exceeds the limit"},
	} {
		if _, err := decodeMsgHeader(c.b, c.max); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestDataHeaderCountsRTS: a data message's ID is the number of requests to
// send its sender queued on TCP before it (tcprts.go), carried as it is.
func TestDataHeaderCountsRTS(t *testing.T) {
	h := msgHeader{Kind: kindData, Tag: 7, Len: 3, ID: 1<<40 + 5}
	got, err := decodeMsgHeader(h.append(nil), 1<<40)
	if err != nil || got != h {
		t.Fatalf("decode: %+v, %v; want %+v", got, err, h)
	}
}

func TestReadFrameBounds(t *testing.T) {
	// A cts frame announcing a body of 2^40 bytes must fail on its length,
	// before allocating anything.
	b := appendFrame(nil, frameCTS, nil)
	b = append(b[:1], 0x80, 0x80, 0x80, 0x80, 0x80, 0x40)
	_, _, err := readFrame(bufio.NewReader(bytes.NewReader(b)), frameCTS)
	if !errors.Is(err, errFrameTooLong) {
		t.Fatalf("oversized frame: %v, want errFrameTooLong", err)
	}
	// A frame of a type the reader does not expect.
	b = appendFrame(nil, frameJoin, []byte{1})
	if _, _, err := readFrame(bufio.NewReader(bytes.NewReader(b)), frameCTS, frameBye); err == nil {
		t.Fatal("join frame accepted on a control stream")
	}
	// A truncated body.
	b = appendFrame(nil, frameCTS, u64Body(5))
	if _, _, err := readFrame(bufio.NewReader(bytes.NewReader(b[:len(b)-1])), frameCTS); err == nil {
		t.Fatal("truncated frame accepted")
	}
}

func TestJoinFramesRoundTrip(t *testing.T) {
	req := joinRequest{World: 8, Rank: anyRank, Addr: joinAddr{Host: "node-01.cluster", UDPPort: 29500, BulkPort: 40001}}
	got, err := decodeJoinRequest(req.body())
	if err != nil || got != req {
		t.Fatalf("join: %+v, %v", got, err)
	}
	w := welcome{Rank: 2, Session: Session{1, 2, 3}, Peers: []joinAddr{{"10.0.0.1", 1, 2}, {"::1", 3, 0}, {"h", 5, 6}}}
	gw, err := decodeWelcome(w.body())
	if err != nil || gw.Rank != w.Rank || gw.Session != w.Session || len(gw.Peers) != 3 || gw.Peers[1] != w.Peers[1] {
		t.Fatalf("welcome: %+v, %v", gw, err)
	}
	if r, err := decodeReject(rejectBody("rank 3 is taken")); err != nil || r != "rank 3 is taken" {
		t.Fatalf("reject: %q, %v", r, err)
	}
	if _, err := decodeJoinRequest(joinRequest{World: 4, Rank: 4}.body()); err == nil {
		t.Fatal("join for rank 4 of 4 accepted")
	}
}

func TestHelloRoundTrip(t *testing.T) {
	h := hello{Rank: 5, World: 9, Session: Session{9}, Token: [16]byte{7}}
	got, err := decodeHello(h.body())
	if err != nil || got != h {
		t.Fatalf("%+v, %v", got, err)
	}
	bh := bulkHello{Rank: 5, Session: Session{9}, Token: [16]byte{7}}
	gb, err := decodeBulkHello(bh.encode())
	if err != nil || gb != bh {
		t.Fatalf("%+v, %v", gb, err)
	}
}

// FuzzMsgHeader: decoding never panics, never accepts a payload over the
// limit, and whatever it accepts encodes back to the same bytes.
func FuzzMsgHeader(f *testing.F) {
	f.Add(msgHeader{Kind: kindData, Tag: 1, Len: 10}.append(nil), uint64(1<<40))
	f.Add(msgHeader{Kind: kindRTS, Tag: 2, Len: 1 << 20, ID: 3}.append(nil), uint64(1<<20))
	f.Add([]byte{1, 1, 0}, uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, max uint64) {
		h, err := decodeMsgHeader(b, max)
		if err != nil {
			return
		}
		if h.Len > max {
			t.Fatalf("accepted %d bytes over a limit of %d", h.Len, max)
		}
		if !bytes.Equal(h.append(nil), b) {
			t.Fatalf("%x decodes to %+v, which encodes differently", b, h)
		}
	})
}

// FuzzControlStream feeds arbitrary bytes to the reader of a control
// stream and of the join protocol, decoding every frame's body as its
// type says: nothing panics, no body exceeds its bound, and what decodes
// re-encodes to the same body.
func FuzzControlStream(f *testing.F) {
	var seed []byte
	seed = appendFrame(seed, frameHello, hello{Rank: 1, World: 2}.body())
	seed = appendFrame(seed, frameCTS, u64Body(7))
	seed = appendFrame(seed, frameBye, u64Body(3))
	f.Add(seed)
	f.Add(appendFrame(nil, frameJoin, joinRequest{World: 3, Rank: 1, Addr: joinAddr{Host: "a", UDPPort: 1}}.body()))
	f.Add(appendFrame(nil, frameWelcome, welcome{Rank: 0, Peers: []joinAddr{{"x", 1, 2}}}.body()))
	f.Add(appendFrame(nil, frameReject, rejectBody("no")))
	f.Add([]byte{frameWelcome, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			typ, body, err := readFrame(r, frameHello, frameCTS, frameBye, frameJoin, frameWelcome, frameReject)
			if err != nil {
				return
			}
			if len(body) > maxFrameBody(typ) {
				t.Fatalf("frame type %d: body of %d bytes over its bound", typ, len(body))
			}
			switch typ {
			case frameHello:
				if h, err := decodeHello(body); err == nil && !bytes.Equal(h.body(), body) {
					t.Fatalf("hello %x re-encodes differently", body)
				}
			case frameCTS, frameBye:
				if v, err := decodeU64(body); err == nil && !bytes.Equal(u64Body(v), body) {
					t.Fatalf("u64 %x re-encodes differently", body)
				}
			case frameJoin:
				if j, err := decodeJoinRequest(body); err == nil && !bytes.Equal(j.body(), body) {
					t.Fatalf("join %x re-encodes differently", body)
				}
			case frameWelcome:
				if w, err := decodeWelcome(body); err == nil && !bytes.Equal(w.body(), body) {
					t.Fatalf("welcome %x re-encodes differently", body)
				}
			case frameReject:
				if s, err := decodeReject(body); err == nil && !bytes.Equal(rejectBody(s), body) {
					t.Fatalf("reject %x re-encodes differently", body)
				}
			}
		}
	})
}

// FuzzBulk decodes arbitrary bulk hellos and payload headers.
func FuzzBulk(f *testing.F) {
	f.Add(bulkHello{Rank: 3, Token: [16]byte{1}}.encode(), uint64(1<<40))
	var hb [bulkHeaderLen]byte
	bulkHeader{ID: 1, Len: 1 << 20}.encode(&hb)
	f.Add(hb[:], uint64(1<<20))
	f.Fuzz(func(t *testing.T, b []byte, max uint64) {
		if h, err := decodeBulkHello(b); err == nil && !bytes.Equal(h.encode(), b) {
			t.Fatalf("bulk hello %x re-encodes differently", b)
		}
		if h, err := decodeBulkHeader(b, max); err == nil {
			if h.Len > max {
				t.Fatalf("accepted %d bytes over a limit of %d", h.Len, max)
			}
			var e [bulkHeaderLen]byte
			h.encode(&e)
			if !bytes.Equal(e[:], b) {
				t.Fatalf("bulk header %x re-encodes differently", b)
			}
		}
	})
}
