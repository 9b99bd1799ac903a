// Package summary turns the scored trials of a run (results.Trial) into its
// Summary, the content of summary.json: per model and variant the accuracy,
// the drop against base (unpaired and paired), the paired flips, the
// minimum detectable drop, the entropy and DDC-margin shifts and the
// verdict; the differences between models; accuracy by difficulty (level,
// steps, relation); the calculator, reasoning-effort and document-question
// sections. Summarize is the entry point; its doc comment lists the
// estimators and their sources.
//
// Files by concept: params.go (settings, thresholds and the planning
// defaults with their sources), types.go (the Summary's types),
// collect.go (trials into distinct prompts and pairs), estimates.go
// (cluster-robust SE, cluster-t, the joint bootstrap and the reported
// interval of each estimate; sign-flip tests and Holm), power.go
// (MOVER-Wilson and the minimum detectable drop's inputs), verdict.go,
// difficulty.go, calculator.go, documents.go, summarize.go (the order of
// the steps).
//
// Every formula is package stats'; this package reduces trials to the
// per-template sums those functions take. It does no file I/O (the caller
// reads results.csv and writes summary.json), runs no model and writes no
// text for a reader (package report renders the Summary).
package summary
