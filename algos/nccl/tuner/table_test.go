package tuner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

func TestParseLogFormats(t *testing.T) {
	lg := readLog(t, "nccl-2.29.7-rtx5090-socket-2nodes.log")
	if lg.Version != "2.29.7" {
		t.Errorf("version %q", lg.Version)
	}
	tab := lg.Table
	if tab == nil {
		t.Fatal("no table")
	}
	known := 0
	for c := range NumColls {
		for a := range NumAlgos {
			for p := range NumProtocols {
				if tab.Known[c][a][p] {
					known++
				}
			}
		}
	}
	if known != int(NumColls)*int(NumAlgos)*NumProtocols {
		t.Errorf("%d cells known, want all %d", known, int(NumColls)*int(NumAlgos)*NumProtocols)
	}
	if got := tab.Lat[AllReduce][PAT][nccl.Simple]; got != 0 {
		t.Errorf("allreduce PAT latency %g", got)
	}
	if got := tab.Lat[AllGather][PAT][nccl.Simple]; got != 17.6 {
		t.Errorf("allgather PAT latency %g, want 17.6", got)
	}
	if tab.Threads[Ring][nccl.Simple] != 256 || !tab.KnownThreads[PAT][nccl.LL] {
		t.Errorf("threads %v", tab.Threads)
	}
	if len(lg.Choices) != 18 || lg.Choices[5].Bytes != 32768 || lg.Choices[5].Proto != nccl.Simple || lg.Choices[4].ChannelHi != 1 {
		t.Errorf("choices %+v", lg.Choices)
	}

	old := readLog(t, "nccl-tests-issue-89-2.8.3-t4.log")
	if old.Table == nil || !old.Table.Known[Broadcast][Ring][nccl.Simple] || old.Table.Bw[Broadcast][Ring][nccl.Simple] != 9 ||
		!old.Table.Known[Reduce][Tree][nccl.Simple] || old.Table.Known[Reduce][Ring][nccl.LL] || old.Table.Threads[CollNetDirect][nccl.LL] != 512 {
		t.Errorf("old format: %+v", old.Table)
	}
	times := readLog(t, "nccl-issue-1453-h100-3nodes.log")
	if len(times.Times) != 5 || times.Times[4].Bytes != 1024 || times.Times[4].Time != 25.331232 || times.Times[4].Algo != Tree {
		t.Errorf("times %+v", times.Times)
	}
	cut := readLog(t, "nccl-issue-1154-h800.log")
	if cut.Table == nil || !cut.Table.Known[Broadcast][Tree][nccl.LL128] || cut.Table.Known[Broadcast][Tree][nccl.Simple] {
		t.Errorf("cut-short row: %+v", cut.Table.Known[Broadcast])
	}
}

// Example of reading a log's table and comparing it to the model's.
func ExampleParseLog() {
	log := `host:1:1 [0] NCCL INFO   Algorithm   |                            Tree                  |                            Ring                  |
host:1:1 [0] NCCL INFO     AllReduce |    15.2/  38.7 |    31.5/ 114.5 |    64.4/ 147.2 |    15.0/  80.6 |    40.6/ 168.2 |    56.0/ 182.9 |
host:1:1 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..15}`
	lg, err := ParseLog(strings.NewReader(log))
	if err != nil {
		panic(err)
	}
	fmt.Println(lg.Table.Lat[AllReduce][Ring][nccl.Simple], lg.Table.Bw[AllReduce][Ring][nccl.Simple])
	fmt.Println(lg.Choices[0].Coll, lg.Choices[0].Bytes, lg.Choices[0].Algo, lg.Choices[0].Proto, lg.Choices[0].ChannelHi+1)
	// Output:
	// 56 182.9
	// allreduce 1048576 ring ll 16
}

func FuzzParseLog(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "logs", "*.log"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	m, err := Tune(System{Ranks: 16, Nodes: 2, MinCompCap: 90, Graphs: hopperGraphs(16, 24), NVLS: true})
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	m.Table().WriteTo(&b)
	f.Add(b.Bytes())
	f.Add([]byte("Algorithm | Tree |\nAllReduce | 1.0/2.0 | 3/\nLatency/AlgBw | Ring/LL |\n Max NThreads | x |"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lg, err := ParseLog(bytes.NewReader(data))
		if err != nil {
			return
		}
		if lg.Table == nil {
			return
		}
		// What a table says survives writing it and reading it back.
		var b bytes.Buffer
		if _, err := lg.Table.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		again, err := ParseLog(&b)
		if err != nil || again.Table == nil {
			t.Fatalf("the written table does not read back: %v", err)
		}
		for c := range NumColls {
			for a := range NumAlgos {
				for p := range NumProtocols {
					if !lg.Table.Known[c][a][p] {
						continue
					}
					x, y := lg.Table, again.Table
					if !y.Known[c][a][p] || fmt.Sprintf("%.1f/%.1f", x.Lat[c][a][p], x.Bw[c][a][p]) != fmt.Sprintf("%.1f/%.1f", y.Lat[c][a][p], y.Bw[c][a][p]) {
						t.Fatalf("cell %v %v %v: %g/%g read back as %g/%g", Coll(c), Algo(a), p, x.Lat[c][a][p], x.Bw[c][a][p], y.Lat[c][a][p], y.Bw[c][a][p])
					}
				}
			}
		}
		for a := range NumAlgos {
			for p := range NumProtocols {
				if lg.Table.KnownThreads[a][p] && again.Table.Threads[a][p] != lg.Table.Threads[a][p] {
					t.Fatalf("threads %v/%v: %d read back as %d", Algo(a), p, lg.Table.Threads[a][p], again.Table.Threads[a][p])
				}
			}
		}
	})
}
