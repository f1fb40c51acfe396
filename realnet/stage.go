package realnet

import (
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// The staging point: the only place where realnet turns a device.Buffer
// into memory the network reads from or writes into. Sockets reach host
// memory only, so a device whose memory they cannot reach (a CUDA device)
// stages through host memory here and nowhere else: stageSend copies the
// device buffer into host memory before the send starts, stageRecv hands
// out host memory and its commit copies it into the device buffer once the
// receive has completed.

// stageSend returns the bytes a send of buf transmits. They must stay
// unchanged until the send completes.
func stageSend(buf device.Buffer) ([]byte, error) {
	switch b := buf.(type) {
	case device.Host:
		return b, nil
	}
	return nil, fmt.Errorf("realnet: cannot send a %T buffer: realnet moves host memory", buf)
}

// stageRecv returns the bytes a receive into buf writes, and a commit to
// call once they are complete (nil when buf is host memory already).
func stageRecv(buf device.Buffer) (b []byte, commit func() error, err error) {
	switch b := buf.(type) {
	case device.Host:
		return b, nil, nil
	}
	return nil, nil, fmt.Errorf("realnet: cannot receive into a %T buffer: realnet moves host memory", buf)
}
