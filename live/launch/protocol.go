package launch

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file is the protocol between a Launcher and its workers, both
// ends: the variables the launcher sets in a worker's environment beyond
// the launch variables realnet.LaunchFromEnv reads, and the status lines
// a worker writes on its status pipe and the launcher reads.

// StatusFDEnv names the environment variable through which a launcher
// tells a worker the file descriptor of its status pipe (Launcher sets it;
// other launchers do not, and the worker then reports nothing there).
const StatusFDEnv = "NEXAR_LIVE_STATUS_FD"

// MembershipEnv names the variable that gives a worker the address of
// the membership coordinator its launcher hosts for --recovery shrink.
const MembershipEnv = "NEXAR_MEMBERSHIP"

// LateEnv, set by a launcher to a member id (from the first world's size
// on), makes a worker join a running elastic world instead of starting
// one.
const LateEnv = "NEXAR_LATE"

// statusFD is the descriptor of a worker's status pipe: the first of its
// extra files (exec.Cmd.ExtraFiles), after standard input, output and
// error.
const statusFD = 3

// OpenStatusPipe is the status pipe this process's launcher passed it in
// StatusFDEnv, nil where it passed none.
func OpenStatusPipe() (*os.File, error) {
	fd := os.Getenv(StatusFDEnv)
	if fd == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil, fmt.Errorf("%s=%q: want a file descriptor", StatusFDEnv, fd)
	}
	return os.NewFile(uintptr(n), "status"), nil
}

// StatusWriter writes a worker's status lines, one per event:
//
//	ready RANK            connected
//	point INDEX DESC      starting a point
//	alive                 an iteration finished (at most every 200 ms)
//	error BLAMED MSG      failed; BLAMED is the peer the error names, or -1
//	recovering BLAMED MSG lost a peer, rebuilding the world (recovery)
//	regrouping at point N left the world for members to join (recovery)
//	rebuilt RANK SIZE     in the rebuilt world, with its new rank
//	done                  finished
//
// Every line tells the launcher the rank is making progress; it reads
// point, error and done (see parseStatus). A nil *StatusWriter, or one
// writing to nil, writes nothing.
type StatusWriter struct {
	mu    sync.Mutex
	w     io.Writer
	blame func(error) int
	last  time.Time
}

// NewStatusWriter returns a StatusWriter writing to w; blame names the
// peer an error blames, -1 for none.
func NewStatusWriter(w io.Writer, blame func(error) int) *StatusWriter {
	return &StatusWriter{w: w, blame: blame}
}

func (s *StatusWriter) printf(format string, args ...any) {
	if s == nil || s.w == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format+"\n", args...)
	s.last = time.Now()
}

// Ready says the worker joined the world as rank.
func (s *StatusWriter) Ready(rank int) { s.printf("ready %d", rank) }

// Point says the worker starts the point of index, described by desc.
func (s *StatusWriter) Point(index int, desc string) { s.printf("point %d %s", index, desc) }

// Beat says an iteration finished; it writes at most every 200 ms.
func (s *StatusWriter) Beat() {
	if s == nil || s.w == nil {
		return
	}
	s.mu.Lock()
	due := time.Since(s.last) >= 200*time.Millisecond
	s.mu.Unlock()
	if due {
		s.printf("alive")
	}
}

// Error says the worker failed with err.
func (s *StatusWriter) Error(err error) { s.failure("error", err) }

// Recovering says the worker lost a peer to err and rebuilds the world.
func (s *StatusWriter) Recovering(err error) { s.failure("recovering", err) }

func (s *StatusWriter) failure(word string, err error) {
	if s == nil || s.w == nil {
		return
	}
	blamed := -1
	if s.blame != nil {
		blamed = s.blame(err)
	}
	s.printf("%s %d %s", word, blamed, strings.ReplaceAll(err.Error(), "\n", " "))
}

// Regrouping says the worker left its world after a point, to rebuild it
// with members that join at point next.
func (s *StatusWriter) Regrouping(next int) { s.printf("regrouping at point %d", next) }

// Rebuilt says the worker is rank of a rebuilt world of size ranks.
func (s *StatusWriter) Rebuilt(rank, size int) { s.printf("rebuilt %d %d", rank, size) }

// Done says the worker finished its part of the run.
func (s *StatusWriter) Done() { s.printf("done") }

// statusLine is what the launcher reads of one status line.
type statusLine struct {
	word string // the line's first word: "point", "error", "done", ...
	// point: its index (-1 if not a number as StatusWriter writes it)
	// and its description, if the line has one.
	index     int
	desc      string
	described bool
	// error: the peer it blames and its message.
	blamed int
	msg    string
}

// parseStatus reads a status line as StatusWriter writes it.
func parseStatus(line string) statusLine {
	word, rest, _ := strings.Cut(line, " ")
	l := statusLine{word: word, index: -1}
	switch word {
	case "point":
		idx, desc, ok := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(idx); err == nil && strconv.Itoa(n) == idx {
			l.index = n
		}
		l.desc, l.described = desc, ok
	case "error":
		b, msg, _ := strings.Cut(rest, " ")
		l.blamed, _ = strconv.Atoi(b)
		l.msg = msg
	}
	return l
}

// statusPipe gives cmd, not yet started, its status pipe: its only extra
// file, descriptor statusFD, which vars (the variables of its
// environment) name in StatusFDEnv. It returns the read end, and the
// write end, which the launcher closes once cmd started.
func statusPipe(cmd *exec.Cmd, vars map[string]string) (r, w *os.File, err error) {
	if r, w, err = os.Pipe(); err != nil {
		return nil, nil, err
	}
	cmd.ExtraFiles = []*os.File{w}
	vars[StatusFDEnv] = strconv.Itoa(statusFD)
	return r, w, nil
}

// readStatus calls line with every status line r holds, until r ends.
func readStatus(r io.Reader, line func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line(sc.Text())
	}
}
