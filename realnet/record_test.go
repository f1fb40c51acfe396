package realnet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
)

// recordTap stands for a sealed bulk connection's socket on the sender's
// side: it keeps each record written, so that a test can change the
// stream before the receiver reads it.
type recordTap struct {
	net.Conn
	records [][]byte
}

func (r *recordTap) Write(p []byte) (int, error) {
	r.records = append(r.records, slices.Clone(p))
	return len(p), nil
}

// sealedRecords returns the records of one bulk message of payload, its
// header first, and the receiving end of the connection they were sealed
// for.
func sealedRecords(t *testing.T, payload []byte) ([][]byte, *bulkConn) {
	t.Helper()
	d, a, dErr, aErr := bulkPair(t, rankCreds(t, "job", 1), rankCreds(t, "job", 0), [16]byte{9}, nil)
	if dErr != nil || aErr != nil {
		t.Fatal(dErr, aErr)
	}
	t.Cleanup(func() { d.Close(); a.Close() })
	tap := &recordTap{Conn: d.c}
	d.c = tap
	if err := d.writeMessage(bulkHeader{ID: 1, Len: uint64(len(payload))}, payload); err != nil {
		t.Fatal(err)
	}
	return tap.records, a
}

// receive reads one message from stream on a into a buffer with guard
// bytes after the payload, and checks that the guard stayed as it was.
func receive(t *testing.T, a *bulkConn, stream []byte, n int) ([]byte, error) {
	t.Helper()
	a.rd = bytes.NewReader(stream)
	buf := bytes.Repeat([]byte{0xa5}, n+2*gcmTag)
	dst, guard := buf[:n], buf[n:]
	h, err := a.readHeader(1 << 30)
	if err == nil {
		if h.Len != uint64(n) {
			t.Fatalf("header says %d bytes, sent %d", h.Len, n)
		}
		err = a.readPayload(dst, int64(n), 0)
	}
	if !bytes.Equal(guard, bytes.Repeat([]byte{0xa5}, len(guard))) {
		t.Fatalf("bytes past the payload written: %x", guard)
	}
	return dst, err
}

// TestBulkRecordShapes: a payload goes in records of bulkChunk, the last
// maybe shorter; the receiver gets every payload intact and writes
// nothing past it.
func TestBulkRecordShapes(t *testing.T) {
	for _, n := range []int{1, gcmTag, bulkChunk - 1, bulkChunk, bulkChunk + 1, 3*bulkChunk + 100} {
		payload := pattern(n, n)
		records, a := sealedRecords(t, payload)
		if want := (n + bulkChunk - 1) / bulkChunk; len(records) != 1+want {
			t.Fatalf("%d bytes: %d records after the header, want %d", n, len(records)-1, want)
		}
		for i, r := range records[1 : len(records)-1] {
			if len(r) != bulkChunk+gcmTag {
				t.Fatalf("%d bytes: record %d of %d bytes, want %d", n, i+1, len(r), bulkChunk+gcmTag)
			}
		}
		got, err := receive(t, a, bytes.Join(records, nil), n)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("%d bytes: payload changed", n)
		}
	}
}

// TestBulkRecordsTampered: a payload of several records, one of which is changed, dropped, replayed or moved on
// the way, fails as a bad record, never as a payload that differs from
// the one sent; a stream cut short fails as one; and a record that does
// not open leaves no plaintext where it was opened.
func TestBulkRecordsTampered(t *testing.T) {
	flip := func(i, at int) func([][]byte) [][]byte {
		return func(r [][]byte) [][]byte {
			if i < 0 {
				i += len(r)
			}
			if at < 0 {
				at += len(r[i])
			}
			r[i][at] ^= 0x40
			return r
		}
	}
	for _, n := range []int{3*bulkChunk + 100, 4 * bulkChunk} {
		rec := bulkChunk
		for _, c := range []struct {
			name   string
			change func([][]byte) [][]byte
			want   error
			zeroed int // payload record (from 1) whose bytes must read zero, or 0
		}{
			{"byte of a record", flip(2, 100), errBadRecord, 2},
			{"tag of a record", flip(1, -1), errBadRecord, 1},
			{"byte of the last record", flip(-1, 3), errBadRecord, -1},
			{"byte of the header", flip(0, 2), errBadRecord, 0},
			{"record dropped", func(r [][]byte) [][]byte { return slices.Delete(r, 2, 3) }, errBadRecord, 0},
			{"record replayed", func(r [][]byte) [][]byte { return slices.Insert(r, 2, r[1]) }, errBadRecord, 0},
			{"header replayed", func(r [][]byte) [][]byte { return slices.Insert(r, 1, r[0]) }, errBadRecord, 0},
			{"records swapped", func(r [][]byte) [][]byte { r[2], r[3] = r[3], r[2]; return r }, errBadRecord, 0},
			{"last record cut short", func(r [][]byte) [][]byte { r[len(r)-1] = r[len(r)-1][:50]; return r }, io.ErrUnexpectedEOF, 0},
		} {
			t.Run(fmt.Sprintf("%d bytes/%s", n, c.name), func(t *testing.T) {
				payload := pattern(n, 5)
				records, a := sealedRecords(t, payload)
				z := c.zeroed
				if z < 0 {
					z += len(records)
				}
				got, err := receive(t, a, bytes.Join(c.change(records), nil), n)
				if !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
				if bytes.Equal(got, payload) {
					t.Fatal("the changed stream delivered the payload")
				}
				if z > 0 {
					r := got[(z-1)*rec : min(z*rec, n)]
					if !bytes.Equal(r, make([]byte, len(r))) {
						t.Fatalf("record %d, which failed to open, left bytes in the buffer", z)
					}
				}
			})
		}
	}
}
