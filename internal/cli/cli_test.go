package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func ExampleParseArgs() {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	np := fs.Int("np", 1, "ranks")
	pos, err := ParseArgs(fs, []string{"a.toml", "--np", "4", "b.toml", "--", "--np"})
	fmt.Println(pos, *np, err)
	// Output: [a.toml b.toml --np] 4 <nil>
}

func TestProgram(t *testing.T) {
	p := &Program{Name: "prog", Help: "HELP\n", CommandHelp: map[string]string{"go": "GO HELP\n"}, HelpHint: " (want go)"}
	cmds := map[string]Command{"go": func(args []string, stdout, _ io.Writer) int {
		fs := flag.NewFlagSet("go", flag.ContinueOnError)
		pos, status, ok := p.ParseCmd("go", fs, args, stdout, io.Discard)
		if !ok {
			return status
		}
		fmt.Fprint(stdout, pos)
		return 7
	}}
	for _, tc := range []struct {
		args           []string
		status         int
		stdout, stderr string
	}{
		{nil, ExitUsage, "", "HELP\n"},
		{[]string{"--help"}, ExitOK, "HELP\n", ""},
		{[]string{"help"}, ExitOK, "HELP\n", ""},
		{[]string{"help", "go"}, ExitOK, "GO HELP\n", ""},
		{[]string{"help", "stop"}, ExitUsage, "", "prog help: unknown command \"stop\" (want go)\nRun 'prog help help' for usage.\n"},
		{[]string{"help", "go", "go"}, ExitUsage, "", "prog help: want at most one command, got 2 arguments\nRun 'prog help help' for usage.\n"},
		{[]string{"stop"}, ExitUsage, "", "prog: unknown command \"stop\"\nRun 'prog help' for usage.\n"},
		{[]string{"--version"}, ExitOK, Version("prog"), ""},
		{[]string{"go", "x", "y"}, 7, "[x y]", ""},
		{[]string{"go", "-h"}, ExitOK, "GO HELP\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		status := p.Run(slices.Clone(tc.args), &stdout, &stderr, cmds)
		if status != tc.status || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
			t.Errorf("Run(%q) = %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, status, stdout.String(), stderr.String(), tc.status, tc.stdout, tc.stderr)
		}
	}
}

// TestParseArgsGlued: one-letter flags take values glued to them, as
// getopt's do; anything else stays as it was.
func TestParseArgsGlued(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // f, e, np, q and the positional arguments
	}{
		{[]string{"-f2", "-e128M", "x"}, "f=2 e=128M np=0 q=false [x]"},
		{[]string{"-f", "2", "-e=1G"}, "f=2 e=1G np=0 q=false []"},
		{[]string{"-np", "4", "-f=3"}, "f=3 e= np=4 q=false []"},
		{[]string{"-np=4", "-np=5"}, "f=0 e= np=5 q=false []"},     // not -n p=4
		{[]string{"-e", "-f2", "x"}, "f=0 e=-f2 np=0 q=false [x]"}, // a value, whole
		{[]string{"--e", "-f2", "-f3"}, "f=3 e=-f2 np=0 q=false []"},
		{[]string{"-q", "-f2"}, "f=2 e= np=0 q=true []"}, // a bool takes no value
		{[]string{"-q", "--", "-f2"}, "f=0 e= np=0 q=true [-f2]"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := fs.Int("f", 0, "")
		e := fs.String("e", "", "")
		np := fs.Int("np", 0, "")
		q := fs.Bool("q", false, "")
		pos, err := ParseArgs(fs, c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if got := fmt.Sprintf("f=%d e=%s np=%d q=%t %v", *f, *e, *np, *q, pos); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
	// A glued value on a flag that takes none, or on no flag, is still
	// an error.
	for _, a := range []string{"-qx", "-np8", "-fx"} { // glued: numbers only
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Bool("q", false, "")
		fs.Int("np", 0, "")
		if _, err := ParseArgs(fs, []string{a}); err == nil {
			t.Errorf("%s: no error", a)
		}
	}
}

// FuzzParseArgs: any command line parses or fails without panicking, and
// the glued numbers it splits invent no positional argument.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"-f2 -e128M x", "-np 4 -f=3", "-e -f2 -- -f3", "-q -qx", "--out -results -r -1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Int("f", 0, "")
		fs.String("e", "", "")
		fs.Int("np", 0, "")
		fs.Bool("q", false, "")
		args := strings.Fields(line)
		pos, err := ParseArgs(fs, args)
		if err != nil {
			return
		}
		if len(pos) > len(args) {
			t.Fatalf("%q: %d positional arguments from %d", args, len(pos), len(args))
		}
	})
}
