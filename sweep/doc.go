// Package sweep turns a scenario into measurements: Plan expands its sweeps
// into points (a collective, an algorithm variant, a world size, a message
// size, a dtype), RunPoint simulates one point (once per seed when the
// sweep repeats) and returns its Row, Run runs points in parallel with
// rows in a deterministic order; a Row is its point's row of results.csv
// (results.Row, which results.Writer writes with results.SimColumns:
// times to the picosecond of the simulator's clock, results.SimDecimals)
// and the world change the point made. ReadCSV reads such a file back
// into the same rows, which is how shards are merged and a run resumed;
// like every reader of results.csv it finds the columns by name and reads
// the files of earlier versions and of nexar-live (results.Read).
//
// Points with data = "host" move real bytes: each rank's input comes from
// the collective's reference in algotest's registry (Point.Case is the
// call it is built for), its output is verified against it, and a
// mismatch fails the point with an error naming the point and the rank.
// Every collective of the catalogue has a reference there, and
// algotest.RegisterReference adds that of a collective registered
// elsewhere, which nexar-live then checks too. Plan rejects host data for
// a collective without one (HasCheck).
//
// RunPoint depends only on its point, so parallel runs, shards and other
// outputs are built on top of it. Phantom points are replayed by the
// simulator (sim.Config.Replay), which is fast and small at scale;
// RunPointWith and Run take a context that stops a point under way within
// milliseconds, and report how far each point is. EstimatePoint says what
// a point will cost (messages, events, peak memory) before it runs, from
// a recording of a sample of its ranks.
package sweep
