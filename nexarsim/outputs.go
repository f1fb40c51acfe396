package nexarsim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// manifestFile names the file every run writes last in its output
// directory: what produced the outputs and which files they are.
const manifestFile = "manifest.json"

// manifest describes the outputs of one run (or merge) of a scenario.
type manifest struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	// File is the scenario file as the command named it.
	File string `json:"file"`
	// Hash identifies the scenario (scenario.Scenario.Hash): shards of
	// one run share it.
	Hash    string `json:"hash"`
	Network string `json:"network"`
	// NetworkSummary is the network's model and parameters in one line
	// (scenario.Network.Summary), which the figures print.
	NetworkSummary string `json:"network_summary,omitempty"`
	// LinkBandwidth is a rank's link bandwidth in B/s (the busbw
	// ceiling), 0 if the network has no single figure.
	LinkBandwidth float64 `json:"link_bandwidth_bytes_per_s,omitempty"`
	// Transport is the scenario's [network.transport], if any: merge
	// derives the bulk threshold from it as run does.
	Transport *scenario.Transport `json:"transport,omitempty"`
	// NCCLCluster is the GPU cluster the network describes to NCCL's
	// tuner (scenario.Network.NCCLCluster), if it describes one: it gives
	// nccl_tuner.conf its nodes and channels, and NCCL's own choice to
	// compare with.
	NCCLCluster *tuner.Cluster `json:"nccl_cluster,omitempty"`
	// Shard is this output's shard, from 1, of Shards; 1 of 1 for a whole
	// run.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Points is the number of points of the whole plan; Rows the rows of
	// this results.csv.
	Points int `json:"points"`
	Rows   int `json:"rows"`
	// Files are the files written, the manifest last.
	Files []string `json:"files"`
	// Changes are what results.csv cannot say of its rows: how a point
	// changed the world (a shrinking recovery, ranks joining) and the
	// symmetry group under which a point's run simulated one rank for
	// all. Merge reads them from a shard's manifest; results.json reports
	// them on its rows instead. (The key keeps its first name, so that
	// shards written before symmetry was recorded still merge.)
	Changes []rowChange `json:"world_changes,omitempty"`
}

// rowChange is what results.csv cannot say of its row Row (from 0), as
// sweep.Row.EncodeChange writes it: a world change, a symmetry group.
type rowChange struct {
	Row    int             `json:"row"`
	Change json.RawMessage `json:"change"`
}

// changesOf lists the world changes of rows.
func changesOf(rows []sweep.Row) ([]rowChange, error) {
	var out []rowChange
	for i, r := range rows {
		c, err := r.EncodeChange()
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, rowChange{Row: i, Change: c})
		}
	}
	return out, nil
}

// applyChanges puts the world changes cs back on rows.
func applyChanges(rows []sweep.Row, cs []rowChange) error {
	for _, c := range cs {
		if c.Row < 0 || c.Row >= len(rows) {
			return fmt.Errorf("a world change on row %d of %d", c.Row, len(rows))
		}
		if err := rows[c.Row].DecodeChange(c.Change); err != nil {
			return err
		}
	}
	return nil
}

// subtitle is what the figures of m's run print under their titles: the
// scenario and its network, so that a figure alone tells one study from
// another.
func (m *manifest) subtitle() string {
	net := m.NetworkSummary
	if net == "" { // a manifest of an earlier version
		net = m.Network
	}
	return fmt.Sprintf("scenario %s · network %s", m.Scenario, net)
}

// readManifest reads dir's manifest.
func readManifest(dir string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, manifestFile), err)
	}
	return &m, nil
}

// outputs stages the files of a run in a private directory inside the
// output directory, so that nothing appears in it until every file is
// complete: commit then renames them into place (each rename atomic) and
// writes the manifest last; abort removes them.
type outputs struct {
	dir   string
	stage string
	files []string
	// created says whether the output directory did not exist before.
	created bool
}

// stagePrefix starts the names of staging directories.
const stagePrefix = ".nexar-sim-stage-"

// ownerFile, in a staging directory, says which process made it: "PID
// HOST", so that a later run can tell the directory of a run that was
// killed from that of a run still going.
const ownerFile = ".owner"

// staleAge is how old a staging directory without an owner must be for a
// later run to take it for a killed run's.
const staleAge = 10 * time.Minute

// newOutputs makes dir (and its parents) if needed and a staging
// directory inside it, after removing the staging directories that runs
// killed before they could remove their own left in dir.
func newOutputs(dir string) (*outputs, error) {
	o := &outputs{dir: dir}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		o.created = true
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	removeStaleStages(dir)
	stage, err := os.MkdirTemp(dir, stagePrefix)
	if err != nil {
		o.removeDir()
		return nil, err
	}
	o.stage = stage
	host, _ := os.Hostname()
	if err := os.WriteFile(filepath.Join(stage, ownerFile), fmt.Appendf(nil, "%d %s\n", os.Getpid(), host), 0o644); err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// removeStaleStages removes the staging directories in dir whose run is
// gone: its process no longer exists on this host, or, for a directory
// that names no owner, it was last changed over staleAge ago. A run on
// another host that shares dir is left alone.
func removeStaleStages(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	host, _ := os.Hostname()
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagePrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(filepath.Join(path, ownerFile))
		if err != nil {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAge {
				os.RemoveAll(path)
			}
			continue
		}
		var pid int
		var owner string
		if _, err := fmt.Sscan(string(data), &pid, &owner); err != nil || owner != host || processAlive(pid) {
			continue
		}
		os.RemoveAll(path)
	}
}

// write stages the file name with what fn writes.
func (o *outputs) write(name string, fn func(w io.Writer) error) error {
	f, err := os.OpenFile(filepath.Join(o.stage, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.add(name)
	return nil
}

// add records a file something else wrote into the staging directory.
func (o *outputs) add(name string) {
	if !slices.Contains(o.files, name) {
		o.files = append(o.files, name)
	}
}

// commit moves the staged files into place, then writes m (with the list
// of files) as the manifest, and removes the files an earlier run's
// manifest listed that this run did not write (figures of a collective
// no longer swept, say).
func (o *outputs) commit(m manifest) error {
	old, _ := readManifest(o.dir)
	m.Files = append(slices.Clone(o.files), manifestFile)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.stage, manifestFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	for _, name := range m.Files {
		if err := os.Rename(filepath.Join(o.stage, name), filepath.Join(o.dir, name)); err != nil {
			return err
		}
	}
	os.Remove(filepath.Join(o.stage, ownerFile))
	os.Remove(o.stage)
	if old != nil {
		for _, name := range old.Files {
			// Only plain names of files in the directory, never paths.
			if name != filepath.Base(name) || strings.HasPrefix(name, ".") || slices.Contains(m.Files, name) {
				continue
			}
			os.Remove(filepath.Join(o.dir, name))
		}
	}
	return nil
}

// abort removes the staged files, and the output directory if this run
// created it and left it empty.
func (o *outputs) abort() {
	os.RemoveAll(o.stage)
	o.removeDir()
}

func (o *outputs) removeDir() {
	if o.created {
		os.Remove(o.dir) // fails, as it should, unless empty
	}
}

// commitFiles moves the staged files into place, without a manifest.
func (o *outputs) commitFiles() error {
	for _, name := range o.files {
		if err := os.Rename(filepath.Join(o.stage, name), filepath.Join(o.dir, name)); err != nil {
			return err
		}
	}
	os.Remove(filepath.Join(o.stage, ownerFile))
	return os.Remove(o.stage)
}
