package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses every command shares.
const (
	ExitOK    = 0
	ExitUsage = 2 // bad input or usage; nothing was done
)

// Command is one command: it parses args (without its name), writes to
// stdout and stderr, and returns the exit status.
type Command func(args []string, stdout, stderr io.Writer) int

// Program is a command line of commands.
type Program struct {
	Name        string            // the program, as usage errors name it
	Help        string            // printed by -h, help, and no arguments
	CommandHelp map[string]string // each command's help, by name
	// HelpHint follows the error of "help" asked about an unknown command.
	HelpHint string
}

// Run runs the command args[0] names, among cmds, with the rest of args;
// -h, --help and "help [COMMAND]" print help.
func (p *Program) Run(args []string, stdout, stderr io.Writer, cmds map[string]Command) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, p.Help)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, p.Help)
		return ExitOK
	case "help":
		return p.help(rest, stdout, stderr)
	case "--version", "-version", "version":
		fmt.Fprint(stdout, Version(p.Name))
		return ExitOK
	}
	if c, ok := cmds[cmd]; ok {
		return c(rest, stdout, stderr)
	}
	return p.UsageError(stderr, "", "unknown command %q", cmd)
}

func (p *Program) help(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		fmt.Fprint(stdout, p.Help)
		return ExitOK
	case 1:
		if h, ok := p.CommandHelp[args[0]]; ok {
			fmt.Fprint(stdout, h)
			return ExitOK
		}
		return p.UsageError(stderr, "help", "unknown command %q%s", args[0], p.HelpHint)
	}
	return p.UsageError(stderr, "help", "want at most one command, got %d arguments", len(args))
}

// UsageError reports bad usage of cmd ("" for the program) and returns
// ExitUsage.
func (p *Program) UsageError(stderr io.Writer, cmd, format string, args ...any) int {
	prog := p.Name
	if cmd != "" {
		prog += " " + cmd
	}
	fmt.Fprintf(stderr, "%s: %s\n", prog, fmt.Sprintf(format, args...))
	fmt.Fprintf(stderr, "Run '%s' for usage.\n", strings.TrimSpace(p.Name+" help "+cmd))
	return ExitUsage
}

// ParseCmd parses the flags of cmd and returns its positional arguments.
// On -h it prints cmd's help, on bad usage the error, and returns the
// status to exit with and ok false.
func (p *Program) ParseCmd(cmd string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, status int, ok bool) {
	pos, err := ParseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, p.CommandHelp[cmd])
		return nil, ExitOK, false
	}
	if err != nil {
		return nil, p.UsageError(stderr, cmd, "%v", err), false
	}
	return pos, ExitOK, true
}

// ParseArgs parses flags that may come before, between or after the
// positional arguments, which it returns; everything after "--" is
// positional. A one-letter flag may carry a number glued to it, as
// getopt's do in the command lines of nccl-tests and MPI ("-f2",
// "-e128M"). It returns flag.ErrHelp for -h and --help.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	args = splitGlued(fs, args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// splitGlued splits each "-Xdigits..." of args whose X is a one-letter
// flag of fs that takes a value and whose "Xdigits..." (up to an "=") is
// no flag of fs, into "-X" and "digits...": getopt's glued numbers, as
// nccl-tests' and MPI's command lines write them ("-f2", "-e128M"). An
// argument that is the value of the flag before it ("--out -results")
// stays whole, and so does everything after "--".
func splitGlued(fs *flag.FlagSet, args []string) []string {
	var out []string
	value := false // args[i] is the value of the flag before it
	for i, a := range args {
		if value || a == "--" || len(a) < 2 || a[0] != '-' {
			if a == "--" && !value {
				if out == nil {
					return args
				}
				return append(out, args[i:]...)
			}
			value = false
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil {
			value = !hasValue && !isBoolFlag(f)
		} else if a[1] != '-' && len(a) > 2 && a[2] >= '0' && a[2] <= '9' {
			if f := fs.Lookup(a[1:2]); f != nil && !isBoolFlag(f) {
				if out == nil {
					out = append([]string{}, args[:i]...)
				}
				out = append(out, a[:2], a[2:])
				continue
			}
		}
		if out != nil {
			out = append(out, a)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// isBoolFlag reports whether f takes no value (-q, not -q 1).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
