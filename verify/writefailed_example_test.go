package verify_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nexar-go/nexar-go/verify"
)

// A file that cannot be written fails a command; a figure with nothing to
// draw is only a warning.
func ExampleWriteFailed() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	err := os.WriteFile(filepath.Join(dir, "missing", verify.ComparePlotFile), nil, 0o644)
	fmt.Println(verify.WriteFailed(err))
	fmt.Println(verify.WriteFailed(errors.New("no data to plot")))
	// Output:
	// true
	// false
}
