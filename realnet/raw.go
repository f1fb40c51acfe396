package realnet

import (
	"crypto/tls"

	"github.com/quic-go/quic-go"
)

// RawQUIC returns the TLS and QUIC configurations of a link's mesh
// connections, for the side that dials (server false) or accepts: so that
// a benchmark of raw quic-go (nexar-live ladder) runs with the settings
// realnet runs with, and the difference between the two is what realnet
// adds. The TLS configurations authenticate against c's cluster CA. Unlike
// a link, raw quic-go returns a peer's stream credit as soon as a stream
// is read to its end (RequireStreamCreditRelease is off).
func RawQUIC(c *Credentials, server bool) (*tls.Config, *quic.Config, error) {
	cfg, err := Config{Credentials: c}.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	qc := quicConfig(cfg)
	qc.RequireStreamCreditRelease = false
	if server {
		return c.serverTLS(alpnMesh), qc, nil
	}
	return c.clientTLS(alpnMesh), qc, nil
}
