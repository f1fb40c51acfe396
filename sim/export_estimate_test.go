package sim

// FlowWork runs cfg with its flow model counting the work of its max-min
// passes, and FlowWorkPerMessage is the estimate's figure of that work
// per message (see flowSeconds).
var (
	FlowWork           = flowWork
	FlowWorkPerMessage = flowWorkPerMessage
)
