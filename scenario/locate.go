package scenario

import (
	"strconv"
	"strings"
)

// BurntSushi/toml keeps the position of each key in its MetaData but does
// not export it (and keeps only the last table of an array of tables), so
// errors about values find their lines with this small scanner instead. It
// runs only on text the TOML parser accepted, so it can be lenient.

// keyLines returns the line on which each key and each table header of a
// TOML document is defined, by path: "name", "network", "network.latency",
// "sweep[1]", "sweep[1].world". Keys inside inline tables are not recorded;
// lineOf falls back to the enclosing key.
func keyLines(text string) map[string]int {
	l := &locator{s: text, line: 1, lines: map[string]int{}, arrays: map[string]int{}}
	l.run()
	return l.lines
}

// lineOf returns the line of path in lines, or of its nearest enclosing key
// or table that has one, or 0.
func lineOf(lines map[string]int, path string) int {
	for path != "" {
		if n, ok := lines[path]; ok {
			return n
		}
		path = parentPath(path)
	}
	return 0
}

// parentPath strips the last part of a path: "a[1].b" -> "a[1]" -> "a".
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func indexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

type locator struct {
	s     string
	i     int
	line  int
	lines map[string]int
	// arrays counts the tables of each array of tables, by path.
	arrays map[string]int
	// ctx is the path of the current table.
	ctx string
}

func (l *locator) peek(k int) byte {
	if l.i+k < len(l.s) {
		return l.s[l.i+k]
	}
	return 0
}

func (l *locator) run() {
	for {
		l.skipSpace(true)
		if l.i >= len(l.s) {
			return
		}
		line := l.line
		if l.peek(0) == '[' {
			arr := l.peek(1) == '['
			l.i++
			if arr {
				l.i++
			}
			l.ctx = l.header(l.key(), arr)
			l.record(l.ctx, line)
			l.skipLine()
			continue
		}
		segs := l.key()
		if len(segs) == 0 {
			l.skipLine()
			continue
		}
		path := l.ctx
		for _, s := range segs {
			path = joinPath(path, s)
		}
		l.record(path, line)
		l.skipSpace(false)
		if l.peek(0) == '=' {
			l.i++
		}
		l.value()
	}
}

func (l *locator) record(path string, line int) {
	if _, ok := l.lines[path]; !ok {
		l.lines[path] = line
	}
}

// header returns the path of a table header's key, counting a new table
// of an array of tables when arr is set.
func (l *locator) header(segs []string, arr bool) string {
	path := ""
	for i, s := range segs {
		path = joinPath(path, s)
		if arr && i == len(segs)-1 {
			l.arrays[path]++
			return indexPath(path, l.arrays[path]-1)
		}
		if n := l.arrays[path]; n > 0 {
			path = indexPath(path, n-1)
		}
	}
	return path
}

// skipSpace skips blanks and, if newlines is set, line ends and comments.
func (l *locator) skipSpace(newlines bool) {
	for l.i < len(l.s) {
		switch c := l.s[l.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case newlines && c == '\n':
			l.line++
			l.i++
		case newlines && c == '#':
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
		default:
			return
		}
	}
}

// skipLine skips past the end of the current line.
func (l *locator) skipLine() {
	for l.i < len(l.s) {
		c := l.s[l.i]
		l.i++
		if c == '\n' {
			l.line++
			return
		}
	}
}

// key reads a dotted key: bare, "basic" or 'literal' parts.
func (l *locator) key() []string {
	var segs []string
	for {
		l.skipSpace(false)
		switch c := l.peek(0); {
		case c == '"' || c == '\'':
			segs = append(segs, l.quoted(c))
		case isBare(c):
			j := l.i
			for l.i < len(l.s) && isBare(l.s[l.i]) {
				l.i++
			}
			segs = append(segs, l.s[j:l.i])
		default:
			return segs
		}
		l.skipSpace(false)
		if l.peek(0) != '.' {
			return segs
		}
		l.i++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// quoted reads a one-line quoted string starting at the quote q and
// returns its contents, with the escapes \" and \\ undone in basic strings.
func (l *locator) quoted(q byte) string {
	l.i++
	var b strings.Builder
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == q:
			l.i++
			return b.String()
		case c == '\n':
			return b.String()
		case c == '\\' && q == '"' && l.i+1 < len(l.s):
			l.i++
			c = l.s[l.i]
		}
		b.WriteByte(c)
		l.i++
	}
	return b.String()
}

// value skips a value: up to the end of its line, or of the line where
// its arrays and inline tables close, with strings and comments skipped.
func (l *locator) value() {
	depth := 0
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch c {
		case '"', '\'':
			if l.peek(1) == c && l.peek(2) == c {
				l.multiline(c)
			} else {
				l.quoted(c)
			}
			continue
		case '#':
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '\n':
			l.line++
			l.i++
			if depth <= 0 {
				return
			}
			continue
		}
		l.i++
	}
}

// multiline skips a multi-line string opened by three quotes q.
func (l *locator) multiline(q byte) {
	l.i += 3
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == '\n':
			l.line++
		case c == '\\' && q == '"':
			if l.peek(1) == '\n' {
				l.line++
			}
			l.i++
		case c == q && l.peek(1) == q && l.peek(2) == q:
			l.i += 3
			for l.peek(0) == q { // up to two quotes may close the content
				l.i++
			}
			return
		}
		l.i++
	}
}
