package ladder

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
)

var testKey = bytes.Repeat([]byte{7}, 16)

// TestGCMStream sends payloads of awkward sizes (one byte, a record and
// one, several records) through the tcp-gcm rung's records and reads
// them back in pieces smaller and larger than a record; a flipped byte
// is refused.
func TestGCMStream(t *testing.T) {
	for _, n := range []int{1, gcmRecord - 1, gcmRecord, gcmRecord + 1, 3*gcmRecord + 17} {
		for _, piece := range []int{1000, gcmRecord, 4 * gcmRecord} {
			a, b := net.Pipe()
			w, err := newGCMStream(a, testKey)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := newGCMStream(b, testKey)
			want := make([]byte, n)
			for i := range want {
				want[i] = byte(i * 31)
			}
			go func() {
				w.Write(want)
				a.Close()
			}()
			got, err := readPieces(r, n, piece)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d bytes read %d at a time: %d back, %v", n, piece, len(got), err)
			}
		}
	}
	var wire bytes.Buffer
	w, _ := newGCMStream(&pipeConn{Writer: &wire}, testKey)
	w.Write([]byte("a payload"))
	raw := wire.Bytes()
	raw[len(raw)-1] ^= 1
	r, _ := newGCMStream(&pipeConn{Reader: bytes.NewReader(raw)}, testKey)
	if _, err := r.Read(make([]byte, 64)); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Errorf("a tampered record read with %v", err)
	}
}

func readPieces(r io.Reader, n, piece int) ([]byte, error) {
	var got []byte
	buf := make([]byte, piece)
	for len(got) < n {
		k, err := r.Read(buf[:min(piece, n-len(got))])
		got = append(got, buf[:k]...)
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// pipeConn is a net.Conn over a reader or a writer.
type pipeConn struct {
	net.Conn
	io.Reader
	io.Writer
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.Reader.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) { return p.Writer.Write(b) }

// FuzzGCMStream feeds the tcp-gcm rung's reader arbitrary bytes: it
// refuses them without panicking, and takes what it sealed itself.
func FuzzGCMStream(f *testing.F) {
	var wire bytes.Buffer
	w, _ := newGCMStream(&pipeConn{Writer: &wire}, testKey)
	w.Write([]byte("seed"))
	f.Add(wire.Bytes())
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _ := newGCMStream(&pipeConn{Reader: bytes.NewReader(data)}, testKey)
		buf := make([]byte, 16)
		for range 8 {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	})
}
