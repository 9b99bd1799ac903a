// Package templates turns parametric arithmetic word problems into seeded,
// validated item sets for the fragility probe.
//
// A template is a word problem with variables (each with a domain and a base,
// as-authored value), conditions, an answer expression, and optionally a
// paraphrase and no-op clauses. Templates come from three sources:
//
//   - the package's own YAML/JSON format (see README.md), including the
//     built-in templates returned by Builtin;
//   - files in the GSM-Symbolic annotated syntax (Mirzadeh et al.,
//     "GSM-Symbolic", arXiv:2410.05229, ICLR 2025): inline {var,base}
//     placeholders with #init, #conditions and #answer blocks, at the
//     levels symbolic, p1 and p2;
//   - GSM8K-format JSONL rows (question, answer ending in "#### N"), which are
//     fixed items: only the base variant applies to them.
//
// Generate instantiates templates in variants (base, names, numbers, symbolic,
// paraphrase, noop), each changing one factor against base (symbolic changes
// names and numbers together, as the paper did). Every answer is recomputed
// with exact rational arithmetic (math/big.Rat) and every draw is checked
// against the validity rules before any model runs; rejected draws are logged
// in the Set with their reason.
//
// Expressions (conditions, answers, derived values) use Python syntax and
// semantics for arithmetic (/, //, %, **, int, round) and are parsed by
// gpython's Python parser (github.com/go-python/gpython/parser), whose tree
// this package converts and evaluates itself; evaluation is over exact
// rationals, so no floating-point rounding enters an answer.
//
// GSM-Symbolic files carry a difficulty level (symbolic, p1, p2; from
// LoadOptions.Level or the folder's name), recorded on every template and
// instance; ParseGSMSymbolicLevel describes how each level's base instance
// is made and which deviations are recorded as warnings.
//
// It must not know about models, runs or statistics: it turns template
// files into validated, seeded instances and nothing more.
package templates
