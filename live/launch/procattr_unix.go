//go:build unix

package launch

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the worker in a process group of its own, so that
// killGroup reaches whatever it starts, and (on Linux) has the kernel kill
// it when the launcher dies.
func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the worker's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		cmd.Process.Kill()
	}
}

// interruptGroup asks the worker's process group to stop as Ctrl-C would
// (SIGINT): a worker then leaves the world and writes what it measured.
func interruptGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		cmd.Process.Signal(syscall.SIGINT)
	}
}
