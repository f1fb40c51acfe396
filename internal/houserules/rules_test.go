package houserules

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/nexar-go/nexar-go"

// A rule says which imports the packages under From may not have. A
// package matches a pattern when it is the pattern, or lies under it when
// the pattern ends in "/...". Only lists the project packages (or the
// outside ones) the importer may use; Never lists imports it must not
// have. Why is printed when the rule is broken.
type rule struct {
	From  []string
	Only  []string // when set: project imports must match one of these
	Never []string // imports (project or not) that must not appear
	Why   string
}

var rules = []rule{
	{
		From: []string{"algos/..."},
		Only: []string{"algos/...", "device/...", "units"},
		Why:  "the algorithms are written once against the Link: they know no transport, simulator or tool above them",
	},
	{
		From: []string{"schedule"},
		Only: []string{"algos/...", "device/...", "units"},
		Why:  "a schedule is an algorithm over the Link: it runs on every transport, so it knows none",
	},
	{
		From: []string{"device/..."},
		Only: []string{"device/..."},
		Why:  "device is the bottom floor (buffers, kernels, the CUDA driver): it knows nothing of links or algorithms",
	},
	{
		From:  []string{"sim/..."},
		Never: []string{"realnet/...", "live/...", "staging"},
		Why:   "the simulator and the real transport never meet: what both need lives in algos",
	},
	{
		From:  []string{"realnet/..."},
		Never: []string{"sim/...", "scenario", "sweep", "live/..."},
		Why:   "realnet is a transport: it knows the Link and nothing of the simulator or the tools",
	},
	{
		From:  []string{"live"},
		Never: []string{"sim/...", "calibrate", "plots", "gonum.org/v1/plot/..."},
		Why:   "live keeps the real run: holding its measurements against the simulator is verify's, fitting models calibrate's, drawing figures plots'",
	},
	{
		From:  []string{"verify"},
		Never: []string{"live/..."},
		Why:   "verify holds results.csv rows against the model, beneath the real run: the command hands it a run's rows (live.Output.Compare)",
	},
	{
		From: []string{"units", "mesh", "internal/atomicfile", "internal/cli"},
		Only: []string{},
		Why:  "leaves stay leaves: every package may use them because they use none",
	},
	{
		From:  []string{"..."},
		Never: []string{"nexarsim", "nexarlive", "cmd/...", "internal/houserules"},
		Why:   "nothing imports the commands: what two commands share moves into a package of its own",
	},
}

// commands may import the package that holds their insides.
var commandInsides = map[string]string{
	"cmd/nexar-sim":  "nexarsim",
	"cmd/nexar-live": "nexarlive",
}

// maxFuncLines is the longest a function may be, declaration to closing
// brace, outside tests and generated code: past it, a function is a list
// of steps that want names.
const maxFuncLines = 120

func matches(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"algos/...", "algos", true},
		{"algos/...", "algos/nccl/tuner", true},
		{"algos/...", "algosx", false},
		{"algos", "algos/nccl", false},
		{"...", "live/launch", true},
		{"units", "units", true},
	} {
		if got := matches(c.pattern, c.pkg); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.pattern, c.pkg, got, c.want)
		}
	}
}

func matchesAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, pkg) })
}

// sourceFile is one non-test Go file of the module, with its package's
// path relative to the module.
type sourceFile struct {
	pkg  string
	path string // relative to the module root, for messages
	file *ast.File
}

// moduleRoot is two folders up from this package.
func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// sources parses every non-test Go file of the module, whatever its build
// tags (a rule holds on every platform), skipping testdata and nested
// modules (examples/ are modules of their own).
func sources(t *testing.T) (*token.FileSet, []sourceFile) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var files []sourceFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		files = append(files, sourceFile{pkg: path.Dir(rel), path: rel, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no source files found")
	}
	return fset, files
}

func TestImportRules(t *testing.T) {
	_, files := sources(t)
	for _, f := range files {
		for _, spec := range f.file.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			local, isProject := strings.CutPrefix(imp, module+"/")
			for _, r := range rules {
				if !matchesAny(r.From, f.pkg) {
					continue
				}
				bad := false
				switch {
				case isProject && matchesAny(r.Never, local):
					bad = commandInsides[f.pkg] != local
				case !isProject && matchesAny(r.Never, imp):
					bad = true
				case isProject && r.Only != nil && !matchesAny(r.Only, local):
					bad = true
				}
				if bad {
					t.Errorf("%s imports %s: %s", f.path, imp, r.Why)
				}
			}
		}
	}
	t.Logf("%d rules checked", len(rules))
}

var generated = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

func isGenerated(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if generated.MatchString(c.Text) {
				return true
			}
		}
	}
	return false
}

// listOver, when set (go test -run FunctionLength -v -list-over 100),
// logs every function longer than it: the figure a redesign counts.
var listOver = flag.Int("list-over", 0, "log every function longer than this many lines")

func TestFunctionLength(t *testing.T) {
	fset, files := sources(t)
	longest, where, over := 0, "", 0
	for _, f := range files {
		if isGenerated(f.file) {
			continue
		}
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			name := fmt.Sprintf("%s:%d %s", f.path, fset.Position(fn.Pos()).Line, fn.Name.Name)
			if lines > longest {
				longest, where = lines, name
			}
			if *listOver > 0 && lines > *listOver {
				over++
				t.Logf("%s: %d lines", name, lines)
			}
			if lines > maxFuncLines {
				t.Errorf("%s is %d lines, over %d: cut it into named steps", name, lines, maxFuncLines)
			}
		}
	}
	t.Logf("longest function: %s, %d lines", where, longest)
	if *listOver > 0 {
		t.Logf("%d functions over %d lines", over, *listOver)
	}
}

// TestArchitectureDocNamesEveryPackage keeps docs/architecture.md in step
// with the module: every package is named there, as `path/`.
func TestArchitectureDocNamesEveryPackage(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	var text strings.Builder
	sc := bufio.NewScanner(doc)
	for sc.Scan() {
		text.WriteString(sc.Text())
		text.WriteByte('\n')
	}
	pkgs := map[string]bool{}
	_, files := sources(t)
	for _, f := range files {
		pkgs[f.pkg] = true
	}
	var missing []string
	for p := range pkgs {
		if p == "." || strings.HasPrefix(p, "scripts/") || strings.HasPrefix(p, "cmd/") {
			continue
		}
		if !strings.Contains(text.String(), "`"+p+"/`") && !strings.Contains(text.String(), "`"+path.Base(p)+"/`") {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	for _, p := range missing {
		t.Errorf("docs/architecture.md does not name package %s (write it as `%s/`)", p, p)
	}
}
