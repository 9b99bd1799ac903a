package stats

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Statistic is a statistic evaluated on a resample of clusters: idx holds
// the drawn cluster indices (with repetition; nil is the sample itself). ok
// is false when the statistic is undefined on that resample (e.g. a ratio
// whose resampled denominator is 0).
type Statistic func(idx []int) (value float64, ok bool)

// JointBootstrap runs the cluster bootstrap (Field & Welsh 2007, "Bootstrapping
// clustered data", JRSS B 69:369–390; Cameron, Gelbach & Miller 2008,
// "Bootstrap-based improvements for inference with clustered errors", REStat
// 90:414–427): b resamples, each drawing g cluster indices with replacement
// by rng.IntN(g), g times in order, and evaluating every statistic of fs on
// that one resample. Sharing the resample keeps the correlation between
// statistics (two variants, two models) that the clusters induce. It returns,
// per statistic, the replicates where it was defined, in draw order; nil when
// g < 1 or b < 1.
func JointBootstrap(g, b int, rng *rand.Rand, fs []Statistic) [][]float64 {
	if g < 1 || b < 1 {
		return nil
	}
	reps := make([][]float64, len(fs))
	idx := make([]int, g)
	for range b {
		for j := range idx {
			idx[j] = rng.IntN(g)
		}
		for k, f := range fs {
			if v, ok := f(idx); ok {
				reps[k] = append(reps[k], v)
			}
		}
	}
	return reps
}

// Percentile returns the percentile interval of bootstrap replicates at
// confidence c (Efron & Tibshirani 1993, An Introduction to the Bootstrap,
// §13.3): the empirical quantiles at (1−c)/2 and (1+c)/2 (EmpiricalQuantile).
// reps is sorted in place. ok is false when reps is empty.
func Percentile(reps []float64, c float64) (lo, hi float64, ok bool) {
	if len(reps) == 0 {
		return 0, 0, false
	}
	sort.Float64s(reps)
	return EmpiricalQuantile(reps, (1-c)/2), EmpiricalQuantile(reps, (1+c)/2), true
}

// EmpiricalQuantile returns the p-quantile of sorted (ascending, non-empty)
// as the inverse of the empirical distribution function: the ⌈p·n⌉-th
// smallest value (Hyndman & Fan 1996, "Sample quantiles in statistical
// packages", Am. Statistician 50:361–365, definition 1), the percentile of
// Efron & Tibshirani (1993, §13.3): with 1000 replicates the 95% interval
// runs from the 25th to the 975th. p·n within 1e-9 of an integer is taken as
// that integer, so that the rounding of (1 − 0.95)/2 in binary does not move
// the end by one replicate.
func EmpiricalQuantile(sorted []float64, p float64) float64 {
	k := p * float64(len(sorted))
	if r := math.Round(k); math.Abs(k-r) < 1e-9 {
		k = r
	}
	i := int(math.Ceil(k))
	return sorted[min(max(i, 1), len(sorted))-1]
}

// Quantile7 is the q-quantile of sorted data by linear interpolation
// between order statistics (Hyndman & Fan 1996, "Sample quantiles in
// statistical packages", definition 7; R's default): with h = q·(n − 1),
// x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). sorted must be non-empty.
func Quantile7(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
