package realnet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// ALPN protocol names. One UDP port serves both the join protocol (when
// the endpoint hosts the seed) and the mesh; the name a client asks for
// says which.
const (
	alpnMesh = "nexar-mesh/1"
	alpnJoin = "nexar-join/1"
	alpnBulk = "nexar-bulk/1"
)

// Credentials are what a rank proves itself with and what it trusts: a
// certificate issued by the cluster CA, and that CA. Every connection,
// QUIC or bulk TCP, is TLS 1.3 with mutual authentication: each side must
// present a certificate that chains to the CA, or the handshake fails
// before a single byte of the application protocol is read. Host names are
// not checked: membership of the cluster is what the CA vouches for, and
// ranks are assigned by the join protocol, not by certificate.
type Credentials struct {
	// CA is the pool of cluster CA certificates peers must chain to.
	CA *x509.CertPool
	// Cert is this process's certificate and key.
	Cert tls.Certificate
}

// LoadCredentials reads PEM files: the cluster CA certificate(s), this
// process's certificate chain, and its private key.
func LoadCredentials(caFile, certFile, keyFile string) (*Credentials, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("realnet: cluster CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("realnet: cluster CA %s: no PEM certificate found", caFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("realnet: certificate: %w", err)
	}
	return &Credentials{CA: pool, Cert: cert}, nil
}

// verify checks a peer's certificate chain against the cluster CA, for
// either role.
func (c *Credentials) verify(cs tls.ConnectionState, usage x509.ExtKeyUsage) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("realnet: peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, ic := range cs.PeerCertificates[1:] {
		inter.AddCert(ic)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         c.CA,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{usage},
	})
	if err != nil {
		return fmt.Errorf("realnet: peer certificate not issued by the cluster CA: %w", err)
	}
	return nil
}

// serverTLS is the configuration of the side that accepts, offering alpn.
func (c *Credentials) serverTLS(alpn ...string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{c.Cert},
		ClientAuth:   tls.RequireAnyClientCert,
		NextProtos:   alpn,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return c.verify(cs, x509.ExtKeyUsageClientAuth)
		},
	}
}

// clientTLS is the configuration of the side that dials.
func (c *Credentials) clientTLS(alpn string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{c.Cert},
		NextProtos:   []string{alpn},
		// The chain is verified against the cluster CA below; host names
		// are not part of cluster membership.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return c.verify(cs, x509.ExtKeyUsageServerAuth)
		},
	}
}

// CA is a certificate authority that lives in memory: what a launcher
// generates for a run on one machine (or a short-lived cluster job) and
// issues every rank's certificate from.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

// caValidity is how long an ephemeral CA and its certificates are valid.
// Validity starts an hour in the past so that clocks a little behind the
// launcher's still accept them.
const caValidity = 7 * 24 * time.Hour

// NewCA generates a fresh ephemeral CA with an ECDSA P-256 key.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "nexar ephemeral CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, der: der}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic("realnet: crypto/rand failed: " + err.Error())
	}
	return n
}

// Pool returns a pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// CertPEM returns the CA certificate in PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der})
}

// Issue returns a certificate and key for name, valid for both ends of a
// connection, as PEM.
func (ca *CA) Issue(name string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(caValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// Credentials issues a certificate for name and returns it with this CA
// as the trusted root.
func (ca *CA) Credentials(name string) (*Credentials, error) {
	certPEM, keyPEM, err := ca.Issue(name)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &Credentials{CA: ca.Pool(), Cert: cert}, nil
}

// WriteFiles writes the CA certificate and a certificate and key issued
// for name into dir, as ca.pem, <name>.pem and <name>-key.pem (the key
// readable by the owner only), and returns their paths: what a launcher
// hands to the processes it starts (NEXAR_CA, NEXAR_CERT, NEXAR_KEY).
func (ca *CA) WriteFiles(dir, name string) (caFile, certFile, keyFile string, err error) {
	certPEM, keyPEM, err := ca.Issue(name)
	if err != nil {
		return "", "", "", err
	}
	caFile = filepath.Join(dir, "ca.pem")
	certFile = filepath.Join(dir, name+".pem")
	keyFile = filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		return "", "", "", err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return "", "", "", err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", "", err
	}
	return caFile, certFile, keyFile, nil
}
