//go:build unix && !linux

package launch

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death
// signal: workers then rely on the launcher killing them on exit.
func setDeathSignal(*syscall.SysProcAttr) {}
