// Package compare is the quantization comparison of a run (`fragility
// compare`, and `run` when its models are one family): each model's
// next-token distributions on the reference model's own tokens (teacher
// forcing), as KL divergence, top-token agreement and the shifts of the
// chosen token's probability and of the entropy, with the models'
// accuracies from the run's summary beside them. It writes compare.json and
// compare.csv; the text, compare.md, is package report's.
//
// It must not compute the run's statistics (package summary does) or
// write the narrative.
package compare
