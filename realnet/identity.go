package realnet

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Identity is what a certificate vouches for: a job, and either one
// member of it or any. Member N is rank N of the job's first world, and
// the rank the membership coordinator maps it to in a world it rebuilds
// (membership.go): the name stays with the process, whatever its rank.
// The cluster CA may serve many jobs; a peer whose certificate names
// another job is refused by the TLS handshake, and one whose certificate
// names another member than the one it claims (in its join request, its
// mesh hello, its bulk hello or its membership hello) is refused by the
// protocol. nexar-live issues one certificate per member of a job; a
// certificate for any member (AnyRank) is for processes that are not one
// rank, such as a launcher hosting the seed and the coordinator, and for
// runs on one machine.
type Identity struct {
	Job  string
	Rank int // the member (rank in the first world); AnyRank: any of the job
}

// AnyRank in an Identity: the certificate is good for any rank of its job.
const AnyRank = -1

// JobIdentity is the identity of a certificate good for any rank of job.
func JobIdentity(job string) Identity { return Identity{Job: job, Rank: AnyRank} }

// RankIdentity is the identity of rank rank of job.
func RankIdentity(job string, rank int) Identity { return Identity{Job: job, Rank: rank} }

// identityScheme is the scheme of the URI subject alternative name that
// carries an identity: nexar://JOB/rank/N or nexar://JOB/any.
const identityScheme = "nexar"

// maxJobLen bounds a job name.
const maxJobLen = 64

func (id Identity) check() error {
	if id.Job == "" || len(id.Job) > maxJobLen {
		return fmt.Errorf("realnet: job name %q: want 1 to %d characters", id.Job, maxJobLen)
	}
	for _, c := range id.Job {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("realnet: job name %q: want letters, digits, '-', '.' and '_'", id.Job)
		}
	}
	if id.Rank < AnyRank || id.Rank >= maxWorld {
		return fmt.Errorf("realnet: rank %d in an identity", id.Rank)
	}
	return nil
}

// URI is the subject alternative name that carries id.
func (id Identity) URI() *url.URL {
	path := "/any"
	if id.Rank != AnyRank {
		path = "/rank/" + strconv.Itoa(id.Rank)
	}
	return &url.URL{Scheme: identityScheme, Host: id.Job, Path: path}
}

func (id Identity) String() string { return id.URI().String() }

// FileBase is the base name of the files WriteFiles writes for id: the
// job, and "-rank" and the rank for a rank's certificate.
func (id Identity) FileBase() string {
	if id.Rank == AnyRank {
		return id.Job
	}
	return id.Job + "-rank" + strconv.Itoa(id.Rank)
}

// permits reports whether a certificate of identity id may act as rank.
func (id Identity) permits(rank int) bool { return id.Rank == AnyRank || id.Rank == rank }

// errNoIdentity: a certificate of the CA that names no nexar identity.
var errNoIdentity = errors.New("certificate names no nexar identity (a URI nexar://JOB/rank/N or nexar://JOB/any; issue it with 'nexar-live ca')")

// certIdentity reads the identity a certificate names: exactly one URI
// subject alternative name of the nexar scheme.
func certIdentity(c *x509.Certificate) (Identity, error) {
	var found []Identity
	for _, u := range c.URIs {
		if u.Scheme != identityScheme {
			continue
		}
		id, err := parseIdentity(u)
		if err != nil {
			return Identity{}, err
		}
		found = append(found, id)
	}
	switch len(found) {
	case 0:
		return Identity{}, errNoIdentity
	case 1:
		return found[0], nil
	}
	return Identity{}, fmt.Errorf("certificate names %d nexar identities, want one", len(found))
}

func parseIdentity(u *url.URL) (Identity, error) {
	id := Identity{Job: u.Host, Rank: AnyRank}
	bad := func() (Identity, error) {
		return Identity{}, fmt.Errorf("certificate identity %q: want nexar://JOB/rank/N or nexar://JOB/any", u)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return bad()
	}
	switch rest, ok := strings.CutPrefix(u.Path, "/rank/"); {
	case u.Path == "/any":
	case ok:
		r, err := strconv.Atoi(rest)
		if err != nil || strconv.Itoa(r) != rest {
			return bad()
		}
		id.Rank = r
	default:
		return bad()
	}
	if err := id.check(); err != nil || id.Rank == AnyRank && u.Path != "/any" {
		return bad()
	}
	return id, nil
}

// peerIdentity is the identity of the peer of a completed handshake,
// whose certificate verify has accepted.
func peerIdentity(certs []*x509.Certificate) (Identity, error) {
	if len(certs) == 0 {
		return Identity{}, errors.New("realnet: peer presented no certificate")
	}
	return certIdentity(certs[0])
}

// checkClaim returns an error unless a peer whose certificate names id may
// act as rank.
func checkClaim(id Identity, rank int) error {
	if !id.permits(rank) {
		return fmt.Errorf("certificate of rank %d claims rank %d", id.Rank, rank)
	}
	return nil
}

// writeNew writes data to a file created at path with mode perm: created
// anew, never through a symbolic link planted there, so that a key is
// never written into a file another user can read or into one it points
// to. An existing file (or link) is an error unless overwrite is set,
// which removes it first.
func writeNew(path string, data []byte, perm os.FileMode, overwrite bool) error {
	if overwrite {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("realnet: %s exists (ask to overwrite it)", path)
		}
		return err
	}
	if err := f.Chmod(perm); err != nil { // whatever the umask
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CheckJob returns an error unless job is a valid job name.
func CheckJob(job string) error { return JobIdentity(job).check() }
