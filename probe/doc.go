// Package probe is the experiment of fragility: it plans a run (models ×
// templates × variants × instances × conditions), orders and batches its
// items, runs them through package llm with every item in its own context,
// scores them (package answer, package docqa), and keeps the run directory
// true: manifest.json, results.csv and traces.jsonl written as it goes,
// resume after an interruption, shards and their merge, verify (replaying a
// run bit for bit), the throughput benchmark (Bench), `fragility plan`
// (PlanRun, Plan) and the frozen protocol (Protocol). The quantization
// comparison is package probe/compare. At the end of a
// run it computes summary.json with package summary (WriteSummary,
// Recompute).
//
// It must not compute a statistic itself (package summary and package
// stats do), write the text a reader reads (narrative.md, compare.md and
// report.html are package report's), call C directly (package llm does), or
// parse a template format (package templates does).
package probe
