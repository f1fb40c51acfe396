package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
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
