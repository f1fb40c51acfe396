// Package report is what a run says of itself beside its outputs: the
// schema of results.json, which nexar-sim and nexar-live both write (JSON,
// documented in docs/results-json.md), and report.html, one
// self-contained page per run (Write): what was run and on which
// network, the tables, every figure of the folder, the tuning table with
// its crossovers, and the model's error where there are measurements. The
// page embeds its figures, fetches nothing, reads on a phone, and is the
// same bytes for the same folder.
package report
