// Package bench is the throughput benchmark (`fragility bench`): Bench
// times the demo items on one model one at a time and in batches, the
// answer-scoring pass and the DDC classifier beside generation, with
// probe's own prompts, batches and scoring, and a bare decode loop for
// comparison (BenchResult, Rate). Its result file is the rate that
// `fragility plan --bench` reads (plan.BenchThroughput), and the command
// records its last result on this machine (RecordLast, LastPath) for
// `fragility plan` without a rate (plan.LastBenchThroughput). Calibrate
// generates a plan's first items on a model as `fragility run` would and
// measures their rate and length (`fragility plan --calibrate`).
package bench
