package harness

import (
	"os"
	"strings"
)

// bootID identifies this boot of this machine: processes whose boot ids
// are equal read one CLOCK_MONOTONIC, hence one clock (unless a time
// namespace shifts it, which container runtimes do not by default).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(b))
	if len(id) > bootIDLen {
		id = id[:bootIDLen]
	}
	return id
}
