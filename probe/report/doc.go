// Package report renders a run directory as one self-contained HTML page:
// the narrative, plots drawn with gonum.org/v1/plot and inlined as SVG, the
// quantization comparison when there is one, and a filterable table of
// trials whose rows open the prompt, the response with the extracted answer
// marked and the generated tokens coloured by entropy.
//
// It reads the run's files (results.csv, summary.json, narrative.md,
// traces.jsonl, manifest.json, compare.json) and computes no statistic:
// every interval, drop and verdict is the one in summary.json. The page
// loads nothing from the network (no scripts, fonts or styles from
// elsewhere) and opens from disk in any browser.
//
// It also owns the text a reader reads: narrative.md (Narrative,
// WriteNarrative, Rewrite) and compare.md (CompareNarrative), rendered from
// a summary.Summary or a probe.Comparison. It must not compute a statistic
// (package summary does), run a model, or write results.csv, traces.jsonl,
// summary.json or manifest.json (packages probe and probe/rundir do).
package report
