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
	"net/url"
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
// present a certificate that chains to the CA and names an identity of the
// same job (see Identity), or the handshake fails before a single byte of
// the application protocol is read. Host names are not checked: what a
// certificate vouches for is its job and, for a rank's certificate, its
// rank, which the join protocol, the mesh and the bulk connections check
// against the rank a peer claims.
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
	c := &Credentials{CA: pool, Cert: cert}
	if _, err := c.Identity(); err != nil {
		return nil, fmt.Errorf("realnet: certificate %s: %w", certFile, err)
	}
	return c, nil
}

// Identity returns the identity this process's certificate names.
func (c *Credentials) Identity() (Identity, error) {
	leaf := c.Cert.Leaf
	if leaf == nil {
		if len(c.Cert.Certificate) == 0 {
			return Identity{}, errors.New("no certificate")
		}
		var err error
		if leaf, err = x509.ParseCertificate(c.Cert.Certificate[0]); err != nil {
			return Identity{}, err
		}
	}
	return certIdentity(leaf)
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
	own, err := c.Identity()
	if err != nil {
		return fmt.Errorf("realnet: own certificate: %w", err)
	}
	id, err := certIdentity(cs.PeerCertificates[0])
	if err != nil {
		return fmt.Errorf("realnet: peer certificate: %w", err)
	}
	if id.Job != own.Job {
		return fmt.Errorf("realnet: peer certificate is for job %q, this process's for job %q", id.Job, own.Job)
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

// Issue returns a certificate and key for identity id, valid for both
// ends of a connection, as PEM. The identity is the certificate's URI
// subject alternative name (Identity.URI); it is also its common name.
func (ca *CA) Issue(id Identity) (certPEM, keyPEM []byte, err error) {
	if err := id.check(); err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: id.String()},
		URIs:         []*url.URL{id.URI()},
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

// Credentials issues a certificate good for any rank of job and returns
// it with this CA as the trusted root: what a process that is not one
// rank (a seed, a test that plays every rank) holds.
func (ca *CA) Credentials(job string) (*Credentials, error) {
	return ca.CredentialsFor(JobIdentity(job))
}

// RankCredentials issues a certificate for rank rank of job only.
func (ca *CA) RankCredentials(job string, rank int) (*Credentials, error) {
	return ca.CredentialsFor(RankIdentity(job, rank))
}

// CredentialsFor issues a certificate for id and returns it with this CA
// as the trusted root.
func (ca *CA) CredentialsFor(id Identity) (*Credentials, error) {
	certPEM, keyPEM, err := ca.Issue(id)
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
// for id into dir, as ca.pem, <base>.pem and <base>-key.pem (base is
// id.FileBase()), and returns their paths: what a launcher hands to the
// processes it starts (NEXAR_CA, NEXAR_CERT, NEXAR_KEY). Every file is
// created anew (O_EXCL) and never through a symbolic link (O_NOFOLLOW),
// the key readable by its owner only; an existing file is an error unless
// overwrite is set, which removes it (or the link) first.
func (ca *CA) WriteFiles(dir string, id Identity, overwrite bool) (caFile, certFile, keyFile string, err error) {
	if caFile, err = ca.WriteCA(dir, overwrite); err != nil {
		return "", "", "", err
	}
	if certFile, keyFile, err = ca.WriteCredentials(dir, id, overwrite); err != nil {
		return "", "", "", err
	}
	return caFile, certFile, keyFile, nil
}

// WriteCA writes the CA certificate alone into dir as ca.pem, as
// WriteFiles does.
func (ca *CA) WriteCA(dir string, overwrite bool) (string, error) {
	f := filepath.Join(dir, "ca.pem")
	return f, writeNew(f, ca.CertPEM(), 0o644, overwrite)
}

// WriteCredentials writes a certificate and key issued for id into dir, as
// WriteFiles does, without the CA certificate.
func (ca *CA) WriteCredentials(dir string, id Identity, overwrite bool) (certFile, keyFile string, err error) {
	certPEM, keyPEM, err := ca.Issue(id)
	if err != nil {
		return "", "", err
	}
	certFile = filepath.Join(dir, id.FileBase()+".pem")
	keyFile = filepath.Join(dir, id.FileBase()+"-key.pem")
	if err := writeNew(certFile, certPEM, 0o644, overwrite); err != nil {
		return "", "", err
	}
	if err := writeNew(keyFile, keyPEM, 0o600, overwrite); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}
