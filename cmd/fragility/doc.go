// Command fragility measures how fragile a local language model's arithmetic
// reasoning is under controlled surface variants of word problems.
//
// Every subcommand is registered by a file of its own in this package (see
// register), so that the wiring of one concern stays next to its flags.
//
// It owns flags, wiring, progress bars and exit codes (2 for wrong usage,
// 1 for bad input or a failed run, see exit.go). It must not hold experiment
// logic: the run is package probe, the statistics probe/summary, the text and
// the page probe/report.
package main
