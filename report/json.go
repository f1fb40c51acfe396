package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// JSONFile is the name of the file JSON is written to.
const JSONFile = "results.json"

// Tools that write results.json, its tool field.
const (
	ToolSim  = "nexar-sim"
	ToolLive = "nexar-live"
)

// JSON is results.json, as both commands write it: the run (Scenario),
// its rows, and what derive reads out of them. docs/results-json.md
// documents every field; times are in seconds, sizes in bytes,
// bandwidths in GB/s (10^9 bytes per second), as in results.csv.
type JSON struct {
	// Tool is the command that wrote the file: ToolSim (simulated) or
	// ToolLive (measured).
	Tool     string   `json:"tool"`
	Scenario Scenario `json:"scenario"`
	// Timing is how a measured point's time was taken (nexar-live's
	// --timing: "start" or "loop"); empty for a simulation.
	Timing string `json:"timing,omitempty"`
	Rows   []Row  `json:"rows"`
	// Crossovers are the sizes at which the faster of two variants
	// changes, BestParams each algorithm's best parameters at each
	// point: never null, empty when nothing competed.
	Crossovers []derive.Crossover `json:"crossovers"`
	BestParams []derive.BestParam `json:"best_params"`
	// Transport is the bulk threshold derived from the scenario's
	// [network.transport], with the times behind it (nexar-sim).
	Transport *derive.Transport `json:"transport,omitempty"`
	// Tuning says whether tuning.toml was written, NCCLTuner whether
	// nccl_tuner.conf was; Notes what derivation left out.
	Tuning    bool     `json:"tuning_table"`
	NCCLTuner bool     `json:"nccl_tuner_conf,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// Model is the error of the scenario's model against the
	// measurements (nexar-live's compare.csv); nil without one.
	Model *ModelError `json:"model_error,omitempty"`
}

// Scenario is the run in results.json: the scenario and its network.
type Scenario struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	// File is the scenario file as the command named it; Hash identifies
	// the scenario (scenario.Scenario.Hash).
	File string `json:"file"`
	Hash string `json:"hash"`
	// Network is the network's model, NetworkSummary its model and
	// parameters in one line, LinkBandwidth a rank's link bandwidth in
	// B/s (0 if the network has no single figure).
	Network        string  `json:"network"`
	NetworkSummary string  `json:"network_summary,omitempty"`
	LinkBandwidth  float64 `json:"link_bandwidth_bytes_per_s,omitempty"`
	// Transport is the scenario's [network.transport] and NCCLCluster the
	// GPU cluster its network describes to NCCL's tuner, as manifest.json
	// holds them (nexar-sim); absent where there is none.
	Transport   json.RawMessage `json:"transport,omitempty"`
	NCCLCluster json.RawMessage `json:"nccl_cluster,omitempty"`
	// Shard is the output's shard, from 1, of Shards (1 of 1 for a whole
	// run); Points the points of the plan, Rows the rows of the file.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	Points int `json:"points"`
	Rows   int `json:"rows"`
}

// Row is a row of results.json: a results.csv row (results.Row, the same
// names), with the variant's algorithm and parameters spelled out.
type Row struct {
	Collective    string         `json:"collective"`
	Algorithm     string         `json:"algorithm"`
	BaseAlgorithm string         `json:"base_algorithm"`
	Params        map[string]int `json:"params,omitempty"`
	World         int            `json:"world"`
	Bytes         int            `json:"bytes"`
	DType         string         `json:"dtype"`
	Op            string         `json:"op,omitempty"`
	Time          float64        `json:"time_s"`
	AlgBW         float64        `json:"algbw_GB_per_s"`
	BusBW         float64        `json:"busbw_GB_per_s"`
	Repeats       int            `json:"repeats"`
	TimeMin       float64        `json:"time_min_s"`
	TimeMax       float64        `json:"time_max_s"`
	// TimeAvg is the mean of the repeats (nexar-live run --minmax).
	TimeAvg  float64 `json:"time_avg_s,omitempty"`
	Spread   float64 `json:"spread_s"`
	Messages int64   `json:"messages"`
	// Wrong, Device, BulkThreshold and EagerThreshold are nexar-live's
	// columns of results.csv (absent from nexar-sim's file): wrong
	// elements (-1 unknown), where the buffers were, the transport
	// thresholds the ranks used.
	Wrong          *int64 `json:"wrong,omitempty"`
	Device         string `json:"device,omitempty"`
	BulkThreshold  int    `json:"bulk_threshold,omitempty"`
	EagerThreshold int    `json:"eager_threshold,omitempty"`
	// Recovery is the recovery from the scenario's shrinking rank
	// failure, on the point it struck (nexar-sim).
	Recovery *Recovery `json:"recovery,omitempty"`
	// Join is the growth of the elastic world before the point at which
	// the scenario's ranks joined (nexar-sim).
	Join *Join `json:"join,omitempty"`
	// Symmetry names the group under which nexar-sim simulated one rank
	// for all ("cyclic" or "xor"; sim.Config.Symmetry), absent for a
	// full run. The times are the full run's either way: it says how they
	// were reached, so that a reader can tell a shortcut from a run of
	// every rank.
	Symmetry string `json:"symmetry,omitempty"`
}

// Join is a growth of the world in results.json: times in seconds from
// the point boundary at which the ranks joined.
type Join struct {
	Joined    int     `json:"joined"`
	WorldFrom int     `json:"world_before"`
	WorldTo   int     `json:"world_after"`
	Agreed    float64 `json:"agreed_at_s"`
	Rebuilt   float64 `json:"rebuilt_at_s"`
	End       float64 `json:"end_s"`
}

// Recovery is a shrinking recovery in results.json: times in seconds from
// the point's start.
type Recovery struct {
	FailedRank int     `json:"failed_rank"`
	WorldFrom  int     `json:"world_before"`
	WorldTo    int     `json:"world_after"`
	Hit        bool    `json:"work_lost"`
	FailedAt   float64 `json:"failed_at_s"`
	Detected   float64 `json:"detected_at_s"`
	Agreed     float64 `json:"agreed_at_s"`
	Rebuilt    float64 `json:"rebuilt_at_s"`
	End        float64 `json:"end_s"`
}

// ModelError summarises compare.csv: the points the model predicted, and
// the median and largest |predicted/measured - 1|.
type ModelError struct {
	Points    int     `json:"points"`
	MedianErr float64 `json:"median_rel_err"`
	MaxErr    float64 `json:"max_rel_err"`
}

// RowOf is the results.json row of r. live says whether r is nexar-live's
// (its wrong column is written, 0 included).
func RowOf(r results.Row, live bool) Row {
	j := Row{Collective: r.Collective, Algorithm: r.Algorithm, BaseAlgorithm: sweep.BaseAlgorithm(r.Algorithm), Params: params(r.Params),
		World: r.World, Bytes: r.Bytes, DType: r.DType, Op: r.Op, Time: r.Time, AlgBW: r.AlgBW, BusBW: r.BusBW,
		Repeats: r.Repeats, TimeMin: r.TimeMin, TimeMax: r.TimeMax, TimeAvg: r.TimeAvg, Spread: r.Spread, Messages: r.Messages,
		Device: r.Device, BulkThreshold: r.BulkThreshold, EagerThreshold: r.EagerThreshold}
	if live {
		w := r.Wrong
		j.Wrong = &w
	}
	return j
}

// params are the parameters of the params column; none if it does not
// parse (the reader of results.csv checks it).
func params(s string) map[string]int {
	p, _ := sweep.ParseParams(s)
	return p
}

// Encode writes j as results.json: indented by one space, the fields in
// the order of the type, so that the same run gives the same bytes. A
// link bandwidth that is not finite is left out.
func (j *JSON) Encode(w io.Writer) error {
	// An unbounded link (bandwidth "inf", loopback's ports) is no single
	// figure: JSON has no infinity.
	if math.IsInf(j.Scenario.LinkBandwidth, 0) || math.IsNaN(j.Scenario.LinkBandwidth) {
		j.Scenario.LinkBandwidth = 0
	}
	if j.Rows == nil {
		j.Rows = []Row{}
	}
	if j.Crossovers == nil {
		j.Crossovers = []derive.Crossover{}
	}
	if j.BestParams == nil {
		j.BestParams = []derive.BestParam{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(j)
}

// ReadJSON reads a results.json of either command. Fields it does not know
// are an error: the file is of another version than this reader.
func ReadJSON(r io.Reader) (*JSON, error) {
	var j JSON
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, err
	}
	return &j, nil
}
