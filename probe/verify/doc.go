// Package verify replays a recorded run and checks that it reproduces to
// the last bit (`fragility verify`): Verify re-renders and re-tokenizes
// every prompt, decodes every batch again as the run grouped it (with the
// calculator where the run had it, and the answer-scoring pass, refused
// for a run recorded under another answer-score version), and
// compares every generated token id and the float64 bits of every entropy
// and log-probability with traces.jsonl, and each replayed text with the
// response results.csv records (Divergence, VerifyResult). Before any
// replay the run's files are checked against each other and against the
// plan (probe.CheckScores, probe.CheckResponses, probe.CheckRecords), and
// an environment that differs from the recorded one is refused unless
// forced (Environment, EnvMismatchError).
//
// It replays with package probe's own rendering, calculator and scoring,
// so that a replay is the run's procedure and not a copy of it.
package verify
