package realnet

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	testCAOnce sync.Once
	testCA     *CA
	testCreds  *Credentials
)

// creds returns credentials from one ephemeral CA shared by the tests of
// the process (generating keys is the slow part of a small test).
func creds(t testing.TB) *Credentials {
	t.Helper()
	testCAOnce.Do(func() {
		ca, err := NewCA()
		if err != nil {
			panic(err)
		}
		c, err := ca.Credentials("rank")
		if err != nil {
			panic(err)
		}
		testCA, testCreds = ca, c
	})
	return testCreds
}

// newWorld starts p ranks on 127.0.0.1: rank 0 hosts the seed and every
// rank joins through it, so every test exercises the join protocol.
func newWorld(t testing.TB, p int, cfg Config) []*Link {
	t.Helper()
	return joinWorld(t, newEndpoints(t, p, cfg))
}

// newEndpoints starts p endpoints on loopback, the first hosting the seed
// of a world of p.
func newEndpoints(t testing.TB, p int, cfg Config) []*Endpoint {
	t.Helper()
	if cfg.Credentials == nil {
		cfg.Credentials = creds(t)
	}
	eps := make([]*Endpoint, p)
	for i := range eps {
		ep, err := ListenAddr("127.0.0.1:0", cfg)
		if err != nil {
			t.Fatal(err)
		}
		eps[i] = ep
	}
	if err := eps[0].HostSeed(p, ""); err != nil {
		t.Fatal(err)
	}
	return eps
}

// joinWorld joins eps (from newEndpoints) into a world and returns its
// links by rank.
func joinWorld(t testing.TB, eps []*Endpoint) []*Link {
	t.Helper()
	p := len(eps)
	seed := eps[0].Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	links := make([]*Link, p)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() {
			// Rank 0 is asked for explicitly; the others take what the
			// seed assigns, in order of arrival.
			rank := -1
			if i == 0 {
				rank = 0
			}
			links[i], errs[i] = ep.Join(ctx, seed, rank, p)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, ep := range eps {
				ep.Close()
			}
			t.Fatalf("endpoint %d: %v", i, err)
		}
	}
	byRank := make([]*Link, p)
	for _, l := range links {
		if byRank[l.Rank()] != nil {
			t.Fatalf("rank %d assigned twice", l.Rank())
		}
		byRank[l.Rank()] = l
	}
	return byRank
}

// closeWorld closes every link at once, as processes ending would.
func closeWorld(t testing.TB, links []*Link) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(links))
	for i, l := range links {
		wg.Go(func() { errs[i] = l.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("close rank %d: %v", i, err)
		}
	}
}

// run runs body on every rank at once and returns each rank's error.
func run(links []*Link, body func(ctx context.Context, l *Link) error) []error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	for i, l := range links {
		wg.Go(func() { errs[i] = body(context.Background(), l) })
	}
	wg.Wait()
	return errs
}

func firstErr(errs []error) error {
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("rank %d: %w", i, err)
		}
	}
	return nil
}

// checkGoroutines fails the test if goroutines started during it are
// still running a few seconds after it ends.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines before the test, %d after:\n%s", before, n, leaked(string(buf)))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// leaked keeps the stacks that mention this module or quic-go.
func leaked(stacks string) string {
	var out []string
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "realnet") || strings.Contains(g, "quic-go") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
