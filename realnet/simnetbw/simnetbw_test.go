package simnetbw

import (
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// TestSerialisation: 1000 packets of 1000 bytes from one node to another
// take the latency plus their serialisation, and two senders into one
// receiver share its downlink.
func TestSerialisation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &Network{Latency: 10 * time.Millisecond, Bandwidth: 1e6}
		a := n.NewEndpoint(&net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1})
		b := n.NewEndpoint(&net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 1})
		c := n.NewEndpoint(&net.UDPAddr{IP: net.IPv4(10, 0, 0, 3), Port: 1})
		defer n.Close()
		defer a.Close()
		defer b.Close()
		defer c.Close()
		const packets, size = 1000, 1000
		pkt := make([]byte, size)
		wire := float64(size+28) / 1e6 // seconds per packet on a port

		start := time.Now()
		go func() {
			for range packets {
				a.WriteTo(pkt, b.LocalAddr())
			}
		}()
		buf := make([]byte, 2000)
		for range packets {
			if _, _, err := b.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
		}
		got := time.Since(start).Seconds()
		want := 0.010 + packets*wire + wire // uplink, latency, last packet's downlink
		if got < want*0.999 || got > want*1.001 {
			t.Errorf("one sender: %.6f s, want %.6f s", got, want)
		}

		// Two senders at once into b: b's downlink is the bottleneck.
		start = time.Now()
		for _, s := range []net.PacketConn{a, c} {
			go func() {
				for range packets {
					s.WriteTo(pkt, b.LocalAddr())
				}
			}()
		}
		for range 2 * packets {
			if _, _, err := b.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
		}
		got = time.Since(start).Seconds()
		want = wire + 0.010 + 2*packets*wire
		if got < want*0.999 || got > want*1.001 {
			t.Errorf("two senders: %.6f s, want %.6f s", got, want)
		}
	})
}
