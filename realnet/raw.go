package realnet

import (
	"crypto/tls"

	"github.com/quic-go/quic-go"
)

// RawQUIC returns the TLS and QUIC configurations of a link's mesh
// connections, for the side that dials (server false) or accepts: so that
// a benchmark of raw quic-go (nexar-live ladder) runs with the settings
// realnet runs with, and the difference between the two is what realnet
// adds. The TLS configurations authenticate against c's cluster CA.
func RawQUIC(c *Credentials, server bool) (*tls.Config, *quic.Config, error) {
	cfg, err := Config{Credentials: c}.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if server {
		return c.serverTLS(alpnMesh), quicConfig(cfg), nil
	}
	return c.clientTLS(alpnMesh), quicConfig(cfg), nil
}
