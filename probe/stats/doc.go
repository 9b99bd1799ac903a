// Package stats holds the statistics of fragility as pure functions: no
// files, no llama.cpp, no knowledge of trials, templates or models. Callers
// (package probe/summary) reduce their data to per-cluster sums (a cluster is a
// template) and call these functions; every function here is deterministic
// given its arguments (random draws come from a *rand.Rand the caller
// seeds).
//
// What is here, each with its formula and source in its doc comment:
//
//   - Wilson: the Wilson score interval of a proportion.
//   - Ratio, Influence, Influence.CR1: ratio estimators over clusters
//     (accuracy = Σ correct / Σ items) and their cluster-robust standard
//     error with the CR1 small-sample factor G/(G−1) (Miller 2024, "Adding
//     Error Bars to Evals", arXiv:2411.00640; Cameron & Miller 2015).
//   - ClusterT, TQuantile: cluster-t intervals on G−1 degrees of freedom.
//   - PairedMOVERWilson, MOVER, WilsonCrit, EffectiveN: the interval of a
//     paired difference of clustered proportions (a paired drop): Wilson
//     score limits of each proportion on its Korn–Graubard effective sample
//     size with a t(G−1) critical value, combined by MOVER (Zou & Donner
//     2008) with their cluster-robust correlation (Newcombe 1998, method
//     10, for one pair per cluster); SkewCorrectedT: the skewness-corrected
//     studentized interval of a mean (Johnson 1978, Hall 1992);
//     PairedDropInterval: the reported interval of a paired drop, built
//     from MOVER-Wilson, the inverted sign-flip test (SignFlipInterval) and
//     SkewCorrectedT.
//   - JointBootstrap, Percentile, EmpiricalQuantile: the cluster bootstrap
//     with one resample of clusters shared by every statistic.
//   - SignFlip: the sign-flip permutation test over clusters (exact or Monte
//     Carlo), and Holm: Holm's step-down multiplicity adjustment.
//   - VarianceComponents, FixedBaseComponents, MDE, RequiredClusters: power
//     and planning from the between- and within-cluster variance of paired
//     differences (a fixed base prompt's own variance is between-cluster).
//
// Units: every function works in the units of its input; percentages are
// the caller's business.
package stats
