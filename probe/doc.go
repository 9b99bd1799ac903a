// Package probe is the experiment of fragility: it generates the item set
// of a run (models × templates × variants × instances × conditions), plans
// its order and batches (PlanBatches, PlanSHA256: the same plan for a whole
// run and for each of its shards), runs them through package llm with every
// item in its own context (Run: resume after an interruption, a shard's
// part of the plan), renders the frozen prompts, drives the calculator
// condition and the answer-scoring pass, and scores every trial (package
// answer, package docqa). It checks a run directory against its plan and
// its own rules (CheckRecords, CheckScores, CheckResponses) and writes
// summary.json with package summary (WriteSummary, Recompute).
//
// The run directory's files and records (manifest.json with the run's
// Config, results.csv and traces.jsonl, the lock) are package
// probe/rundir's, which it imports. The commands around a run are packages
// above it: probe/verify (the bit-for-bit replay), probe/shard (--shard and
// merge), probe/plan (`fragility plan`), probe/bench (the throughput
// benchmark), probe/protocol (the frozen protocol) and probe/compare (the
// quantization comparison).
//
// It must not compute a statistic itself (package summary and package
// stats do), write the text a reader reads (narrative.md, compare.md and
// report.html are package report's), call C directly (package llm does), or
// parse a template format (package templates does).
package probe
