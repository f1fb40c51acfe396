package cli

import (
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts a CPU profile of this process written to file;
// stop ends it and closes the file, returning the close's error (a full
// disk shows there). nexar-live's workers (run --profile) and its ladder
// (ladder --profile) both profile this way.
func StartCPUProfile(file string) (stop func() error, err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		// Another profile is running: leave no empty file behind.
		f.Close()
		os.Remove(file)
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
