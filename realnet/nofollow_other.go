//go:build !unix

package realnet

// oNoFollow: no such flag here; O_EXCL alone refuses an existing link.
const oNoFollow = 0
