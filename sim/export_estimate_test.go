package sim

// FlowWork runs cfg with its flow model counting the work of its max-min
// passes, and FlowWorkPerMessage is the estimate's figure of that work
// per message (see flowSeconds).
var (
	FlowWork           = flowWork
	FlowWorkPerMessage = flowWorkPerMessage
	FlowCounted        = func(cfg Config, body Body) (*Result, int64, int64, error) {
		res, c, err := flowCounted(cfg, body)
		return res, c.work, c.searches, err
	}
)
