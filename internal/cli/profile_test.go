package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStartCPUProfile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cpu.pprof")
	stop, err := StartCPUProfile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartCPUProfile(filepath.Join(dir, "second.pprof")); err == nil {
		t.Error("a second profile while one runs: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "second.pprof")); !os.IsNotExist(err) {
		t.Errorf("the refused second profile's file is left behind (stat: %v)", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() == 0 {
		t.Error("the profile is empty: a stopped profile writes at least its header")
	}
	if _, err := StartCPUProfile(filepath.Join(dir, "missing", "cpu.pprof")); err == nil {
		t.Error("a profile in a missing directory: no error")
	}
}
