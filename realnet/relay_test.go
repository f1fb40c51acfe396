package realnet

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/mesh"
)

func mustMesh(t testing.TB, s string) mesh.Spec {
	t.Helper()
	spec, err := mesh.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestCatalogueMesh runs the whole catalogue on 8 ranks connected as a
// hypercube and as a 3-regular graph, where most pairs exchange their
// messages through relays: on the QUIC path, and with the eager TCP path.
// Counts straddle the bulk threshold, so relayed hops take all three
// paths.
func TestCatalogueMesh(t *testing.T) {
	checkGoroutines(t)
	counts := []int{1, 4099, 100003}
	if testing.Short() {
		counts = []int{1, 4099}
	}
	for _, spec := range []string{"hypercube", "kregular:3"} {
		for _, eager := range []int{0, 4096} {
			t.Run(fmt.Sprintf("%s/eager=%d", spec, eager), func(t *testing.T) {
				links := newWorld(t, 8, Config{Mesh: mustMesh(t, spec), Thresholds: algos.Thresholds{Eager: eager}})
				m, _ := mesh.New(mustMesh(t, spec), 8)
				for _, l := range links {
					for r, p := range l.peers {
						if (p != nil) != m.Joined(l.rank, r) {
							t.Fatalf("rank %d: connection to rank %d is %v, the mesh joins them: %v", l.rank, r, p != nil, m.Joined(l.rank, r))
						}
					}
				}
				runCatalogue(t, links, counts, map[string]bool{})
				closeWorld(t, links)
			})
		}
	}
}

// TestRelayOrder: rank 0 sends rank 7 (three hops away on a hypercube of
// 8) a train of messages of one tag, small and bulk mixed, before rank 7
// posts any receive; they arrive first in first out, and messages of
// another tag do not overtake or block them.
func TestRelayOrder(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 8, Config{Mesh: mustMesh(t, "hypercube"), Thresholds: algos.Thresholds{Bulk: 4096}})
	defer closeWorld(t, links)
	const n = 40
	size := func(i int) int { return []int{8, 5000, 100, 70000}[i%4] }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reqs []algos.Request
	for i := range n {
		b := make(device.Host, size(i))
		binary.LittleEndian.PutUint64(b, uint64(i))
		reqs = append(reqs, links[0].Isend(7, 5, b), links[0].Isend(7, 6, device.Host{byte(i)}))
	}
	if err := links[0].Wait(ctx, reqs...); err != nil {
		t.Fatal(err)
	}
	// Tag 6 first, all of it, then tag 5.
	for i := range n {
		b := make(device.Host, 1)
		if err := algos.Recv(ctx, links[7], 0, 6, b); err != nil || b[0] != byte(i) {
			t.Fatalf("tag 6 message %d: %v, got %d", i, err, b[0])
		}
	}
	for i := range n {
		b := make(device.Host, 70000)
		if err := algos.Recv(ctx, links[7], 0, 5, b); err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint64(b); got != uint64(i) {
			t.Fatalf("tag 5 message %d arrived as number %d", i, got)
		}
	}
}

func FuzzRelayHeader(f *testing.F) {
	f.Add(relayHdr{kind: relayEager, origin: 0, dest: 7, tag: 5, n: 10}.encode(), 1)
	f.Add(relayHdr{kind: relayRTS, origin: 0, dest: 7, tag: 5, n: 1 << 20, id: 3}.encode(), 1)
	f.Add(relayHdr{kind: relayCTS, origin: 7, dest: 0, id: 3}.encode(), 3)
	f.Add(relayHdr{kind: relayData, origin: 0, dest: 7, n: 1 << 20, id: 3, off: relaySegment}.encode(), 1)
	f.Add(relayHdr{kind: relayMarker, origin: 3, dest: 4}.encode(), 7)
	m, err := mesh.New(mesh.Spec{Kind: mesh.Hypercube}, 8)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, from int) {
		if from < 0 || from >= 8 {
			return
		}
		const maxLen = 1 << 30
		h, err := decodeRelayHdr(b, m, 1, from, maxLen)
		if err != nil {
			return
		}
		if m.Joined(h.origin, h.dest) || h.n > maxLen || routePrev(m, h.origin, h.dest, 1) != from {
			t.Fatalf("accepted %+v from %d", h, from)
		}
		// What a relay allocates for the payload is bounded whatever the
		// header says.
		if k := h.payload(); k > relaySegment || (h.kind == relayEager || h.kind == relayData) != (k >= 0) {
			t.Fatalf("accepted %+v: payload of %d bytes", h, k)
		}
		if got := h.encode(); string(got) != string(b) {
			t.Fatalf("%+v encodes as %x, decoded from %x", h, got, b)
		}
	})
}
