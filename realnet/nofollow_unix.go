//go:build unix

package realnet

import "syscall"

// oNoFollow makes opening a file at a symbolic link fail.
const oNoFollow = syscall.O_NOFOLLOW
