//go:build !unix

package launch

import "os/exec"

func setProcAttr(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// interruptGroup cannot ask a worker to stop here: it kills it.
func interruptGroup(cmd *exec.Cmd) { killGroup(cmd) }
