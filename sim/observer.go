package sim

// SpanKind says what a rank was doing during a span of time.
type SpanKind uint8

// Kinds of span.
const (
	// SpanWait is time blocked in Link.Wait.
	SpanWait SpanKind = iota
	// SpanReduce is time spent in Link.Reduce.
	SpanReduce
	// SpanOverhead is CPU time spent sending or receiving a message, on
	// networks that charge it (see Overheads).
	SpanOverhead
	// SpanDelay is time a process was held by algos.Delayer's Delay:
	// work of the hardware that the model charges (a GPU's per-step
	// costs). It holds neither compute nor ports, so it may overlap the
	// rank's other spans.
	SpanDelay
)

func (k SpanKind) String() string {
	switch k {
	case SpanWait:
		return "wait"
	case SpanReduce:
		return "reduce"
	case SpanOverhead:
		return "overhead"
	case SpanDelay:
		return "delay"
	}
	return "span"
}

// Observer is told what happens during a run, in the order it happens
// in virtual time. It is how timelines and accounting see a run without the
// engine knowing about either. A message is valid only during the calls
// about it (the engine reuses it once delivered): keep what it says, not
// the pointer.
type Observer interface {
	// MessageStarted: m began to move at time at.
	MessageStarted(m *Message, at Time)
	// MessageDelivered: m arrived at its destination at time at.
	MessageDelivered(m *Message, at Time)
	// Span: rank spent [start, end) doing kind over bytes.
	Span(rank int, kind SpanKind, bytes int, start, end Time)
}
