package algos

import "fmt"

// PeerLostError reports an operation that failed because a peer rank was
// lost: it crashed, returned, closed its link, or its connection broke,
// so what the operation needed from it will never come. Both transports
// report it, each through error types of its own whose messages say more
// (the simulator's *sim.RankFailedError, *sim.PeerExitedError and
// *sim.NoReceiveError, realnet's *realnet.PeerError): errors.As finds a
// *PeerLostError in an error of either, naming the rank, so code above
// the transports (nexar-live's workers and launcher, a program that
// recovers from a failure) reads one error whichever ran. It lives in
// algos, the package both transports build on, because neither may
// import the other.
type PeerLostError struct {
	// Rank is the lost peer, numbered as the link that reports it numbers
	// its ranks.
	Rank int
	// Err is the transport's error that reported the loss, whose message
	// is this error's; nil if there is none.
	Err error
}

func (e *PeerLostError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("algos: peer rank %d lost", e.Rank)
}

// Unwrap returns the transport's error.
func (e *PeerLostError) Unwrap() error { return e.Err }

// AsPeerLost is the As method of a transport's error err that reports
// rank lost: if target is a **PeerLostError it sets *target to a
// *PeerLostError naming rank, with err as its Err, and reports true;
// otherwise it reports false. A transport's error type implements
// errors.As's As method with it, so errors.As finds the PeerLostError
// while the type, its fields and its message stay the transport's.
func AsPeerLost(target any, rank int, err error) bool {
	t, ok := target.(**PeerLostError)
	if ok {
		*t = &PeerLostError{Rank: rank, Err: err}
	}
	return ok
}
