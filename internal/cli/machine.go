package cli

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// MachineMemory reads this machine's total and available memory, in
// bytes, from /proc/meminfo; zeros where it cannot (another system).
func MachineMemory() (total, avail int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	return ParseMeminfo(f)
}

// ParseMeminfo reads MemTotal and MemAvailable (in kB) from r, as Linux's
// /proc/meminfo writes them; zero for a line that is not there.
func ParseMeminfo(r io.Reader) (total, avail int64) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			continue
		}
		switch name {
		case "MemTotal":
			total = kb << 10
		case "MemAvailable":
			avail = kb << 10
		}
	}
	return total, avail
}
