package cli

import "strings"

// CommandLine is args joined by spaces, each quoted as a POSIX shell
// would need it to read it back as one word: what a report shows of the
// command that made it.
func CommandLine(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}
