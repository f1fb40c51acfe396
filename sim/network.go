package sim

import "github.com/nexar-go/nexar-go/algos"

// Model describes a network: its parameters, free of the state of any run.
// A Model is safe to use from several runs at once.
type Model interface {
	// NewNetwork returns the state of the network for one run on e.
	NewNetwork(e *Engine) Network
}

// Network decides when messages between ranks move and how long local
// reductions take, for one run. The engine calls it from one goroutine.
type Network interface {
	// Post hands the network a message that its sender has just posted,
	// at e.Now(). The network must eventually call e.Deliver(m).
	// Messages from a rank to itself never reach the network.
	Post(m *Message)
	// Settle is called once all events of the current instant have run,
	// and again whenever it schedules events at the current instant. A
	// network that arbitrates between messages asking for the same
	// resource at the same instant does it here, so that the outcome does
	// not depend on the order in which ranks ran.
	Settle()
	// ReduceTime is the compute time of rank for reducing bytes (the size
	// of one operand).
	ReduceTime(rank, bytes int) Time
}

// Message is one point-to-point message in flight.
type Message struct {
	Src, Dst int
	Tag      algos.Tag
	Bytes    int
	// ID numbers messages in the order they were posted, from 0.
	ID int64
	// Posted is when the sender posted the message.
	Posted Time

	payload []byte // a private copy of host data; nil for phantom data
	send    *request
}
