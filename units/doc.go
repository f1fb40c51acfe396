// Package units reads and writes the quantities nexar's files, flags and
// reports carry: sizes in bytes, durations, bandwidths, amounts and rates
// of compute, and ranges of sizes. It is the one place that knows the
// spellings: a scenario's "8MiB", "1KiB..1GiB x2", "5us" and "12.5GB/s",
// nccl-tests' "128M" and its -b/-e/-f steps, and the texts a figure, a
// table or an estimate prints.
//
// # Reading
//
// [ParseBytes], [ParseDuration], [ParseBandwidth], [ParseFLOPs] and
// [ParseFLOPS] read a number and a unit, with optional spaces between;
// numbers are decimal ("1.5", "1e3", "1_000") and exact, so "1.5KiB" is
// 1536 bytes. [ParseNCCLBytes] also reads nccl-tests' sizes ("128M", powers
// of 1024). [ParseByteRange] and [ParseIntRange] read "START..END xF" and
// "START..END +S"; a [Range] holds one and expands it, as nccl-tests' -b,
// -e, -f and -i do. Their errors quote the text and say what was wanted;
// callers add the file, line and key.
//
// # Writing
//
// Each writer names its style; the callers' outputs are checked byte for
// byte (golden files, examples), so styles are not merged:
//
//   - read back exactly: [FormatBytesCompact] ("64KiB"), [FormatBytesExact]
//     ("64 KiB"), [Picoseconds.String] ("5us"), [FormatNanoseconds]
//     ("5000.000ns"), [FormatBandwidth] ("1.25e+10B/s"),
//     [FormatBandwidthWhole] ("12500000000B/s"), [FormatBandwidthGB]
//     ("12.5GB/s"), [Range.String] ("1024..8192 x2");
//   - for people, three significant digits: [FormatBytes] and
//     [FormatSeconds] ("1.5 KiB", "250 ns": figures and reports),
//     [FormatBytesG], [FormatSecondsG] and [FormatBandwidthG] (printf's
//     %.3g: "1.5 KiB", "1.5e+03 GiB"), [FormatBytesFixed] and [FormatCount]
//     (trailing zeros kept: "1.00 MiB", "12.3k");
//   - rough or clock times: [FormatSecondsRough] ("1.4 h"), [FormatElapsed]
//     ("2m05s"); nccl-tests' time column: [FormatNCCLMicros].
//
// # A leaf
//
// units imports the standard library only, and must stay so: every package
// that prints or reads a quantity imports it (the simulator, scenarios,
// figures, calibration, the live run, the commands), so a single import of
// one of them here would make a cycle or drag that package in everywhere. A
// test checks it.
package units
