package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wilson returns the Wilson score interval for a binomial proportion with k
// successes out of n trials at the given confidence level, as fractions in
// [0, 1] (E. B. Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22:209–212, 1927):
//
//	centre = (p + z²/2n) / (1 + z²/n)
//	half   = z / (1 + z²/n) · √(p(1−p)/n + z²/4n²)
//
// with p = k/n and z = Φ⁻¹((1+confidence)/2) = √2·erf⁻¹(confidence). Unlike
// the Wald interval it stays within [0, 1] and does not collapse at k = 0 or
// n. k may be fractional (a unit answered right by some of its copies counts
// the share of them); the formula only uses p = k/n. It returns ok = false
// when n < 1, k is outside [0, n] or confidence is not in (0, 1).
func Wilson(k, n, confidence float64) (lo, hi float64, ok bool) {
	if !(n >= 1) || !(k >= 0 && k <= n) || !(confidence > 0 && confidence < 1) {
		return 0, 0, false
	}
	z := math.Sqrt2 * math.Erfinv(confidence)
	p := k / n
	z2 := z * z
	den := 1 + z2/n
	centre := (p + z2/(2*n)) / den
	half := z / den * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lo, hi = max(0, centre-half), min(1, centre+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi, true
}

// TQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom (gonum's distuv.StudentsT, which inverts the regularized
// incomplete beta function: F(t) = 1 − ½·I_{df/(df+t²)}(df/2, ½) for t > 0).
// It returns NaN when df ≤ 0 or p is not in (0, 1).
func TQuantile(p, df float64) float64 {
	if !(df > 0) || !(p > 0 && p < 1) {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// TCDF returns P(T ≤ x) for Student's t with df degrees of freedom (gonum's
// distuv.StudentsT); NaN when df ≤ 0.
func TCDF(x, df float64) float64 {
	if !(df > 0) {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(x)
}

// Ratio is a ratio estimator over G clusters, R = ΣNum / ΣDen, held as the
// per-cluster sums: for an accuracy, Num[g] is the number of correct units
// in cluster g and Den[g] the number of units; for a mean paired difference,
// Num[g] is the sum of the differences and Den[g] the number of pairs. A
// cluster with Den[g] = 0 holds no data for this statistic.
type Ratio struct {
	Num, Den []float64
}

// NewRatio returns a Ratio over g clusters with zero sums.
func NewRatio(g int) Ratio { return Ratio{Num: make([]float64, g), Den: make([]float64, g)} }

// Add adds one unit with value y (weight 1) to cluster g.
func (r Ratio) Add(g int, y float64) {
	r.Num[g] += y
	r.Den[g]++
}

// Value returns ΣNum / ΣDen; ok is false when ΣDen = 0.
func (r Ratio) Value() (float64, bool) { return r.At(nil) }

// At returns the ratio on a resample of clusters, Σ_j Num[idx[j]] /
// Σ_j Den[idx[j]] (a cluster drawn twice counts twice); a nil idx is the
// sample itself. ok is false when the denominator is 0.
func (r Ratio) At(idx []int) (float64, bool) {
	var n, d float64
	if idx == nil {
		for i := range r.Num {
			n += r.Num[i]
			d += r.Den[i]
		}
	} else {
		for _, i := range idx {
			n += r.Num[i]
			d += r.Den[i]
		}
	}
	if d == 0 {
		return 0, false
	}
	return n / d, true
}

// EqualWeights returns the ratio with every cluster holding data weighted
// equally: cluster g's mean Num[g]/Den[g] with weight W = ΣDen/G over the
// G clusters holding data (Den[g] > 0), so that the ratio is the mean of
// the cluster means,
//
//	R_eq = (1/G) · Σ_g Num[g]/Den[g],
//
// and a cluster's weight no longer depends on how many units it holds (a
// template with 2 distinct pairs counts as much as one with 10). Keeping
// the total weight ΣDen leaves the number of units that sample-size based
// intervals read from Den (PairedMOVERWilson) unchanged. Its Influence is
// e_g = (ȳ_g − R_eq)/G, so CR1 gives s/√G with s the standard deviation of
// the cluster means: the one-sample t statistic of the cluster means
// (cluster-t on cluster means; Cameron & Miller 2015, §VIC), and At on a
// resample of clusters is the mean of the resampled clusters' means (the
// cluster bootstrap of the equal-weight mean). Clusters without data stay
// empty.
func (r Ratio) EqualWeights() Ratio {
	out := NewRatio(len(r.Num))
	var tot float64
	g := 0
	for _, d := range r.Den {
		if d > 0 {
			tot += d
			g++
		}
	}
	if g == 0 {
		return out
	}
	w := tot / float64(g)
	for i, d := range r.Den {
		if d > 0 {
			out.Num[i] = w * r.Num[i] / d
			out.Den[i] = w
		}
	}
	return out
}

// Clusters returns the number of clusters holding data (Den[g] > 0).
func (r Ratio) Clusters() int {
	g := 0
	for _, d := range r.Den {
		if d > 0 {
			g++
		}
	}
	return g
}

// Influence returns the per-cluster linearised contributions of the ratio,
//
//	e_g = (Num_g − R·Den_g) / ΣDen,
//
// the within-cluster sum of each unit's residual y_i − R divided by the
// total weight: R − R₀ ≈ Σ_g e_g (first-order Taylor expansion of a ratio
// estimator; Cochran 1977, Sampling Techniques, 3rd ed., §6.4). For the mean
// of units it is the score of the intercept-only regression summed within
// cluster, from which the cluster-robust variance is built (see
// Influence.CR1). ok is false when ΣDen = 0.
func (r Ratio) Influence() (Influence, bool) {
	R, ok := r.Value()
	if !ok {
		return Influence{}, false
	}
	var tot float64
	for _, d := range r.Den {
		tot += d
	}
	inf := Influence{E: make([]float64, len(r.Num)), Present: make([]bool, len(r.Num))}
	for g := range r.Num {
		inf.E[g] = (r.Num[g] - R*r.Den[g]) / tot
		inf.Present[g] = r.Den[g] > 0
	}
	return inf, true
}

// Influence is the linearisation of an estimator over clusters: E[g] is
// cluster g's contribution to the estimator's deviation (see Ratio.Influence),
// Present[g] whether cluster g holds data for it. Estimators built from
// ratios combine linearly (Combine) by the delta method.
type Influence struct {
	E       []float64
	Present []bool
}

// Combine returns the influence of a·X + b·Y given those of X (the receiver)
// and Y, over the same clusters (the delta method: a smooth function f of
// estimators has influence Σ ∂f/∂X_k · e_k; Cochran 1977 §6.4). A cluster is
// present when it is present in either. The two must have the same length.
func (x Influence) Combine(a float64, y Influence, b float64) Influence {
	out := Influence{E: make([]float64, len(x.E)), Present: make([]bool, len(x.E))}
	for g := range x.E {
		out.E[g] = a*x.E[g] + b*y.E[g]
		out.Present[g] = x.Present[g] || y.Present[g]
	}
	return out
}

// Clusters returns the number of present clusters, G.
func (x Influence) Clusters() int {
	g := 0
	for _, p := range x.Present {
		if p {
			g++
		}
	}
	return g
}

// CR1 returns the cluster-robust standard error of the estimator with the
// CR1 small-sample factor, over its G present clusters:
//
//	SE = √( G/(G−1) · Σ_g e_g² )
//
// For the mean of unit scores s_i with clusters c this is
//
//	SE² = G/(G−1) · (1/n²) · Σ_c ( Σ_{i∈c} (s_i − s̄) )²,
//
// the clustered standard error of Miller 2024 ("Adding Error Bars to Evals:
// A Statistical Approach to Language Model Evaluations", arXiv:2411.00640,
// §2: SE²_CLT plus the within-cluster cross products (1/n²)·Σ_c Σ_{i≠j}
// (s_ic − s̄)(s_jc − s̄), which together are (1/n²)·Σ_c (Σ_i (s_ic − s̄))²)
// times the factor G/(G−1) of the CR1 estimator (Cameron & Miller 2015, "A
// Practitioner's Guide to Cluster-Robust Inference", J. Human Resources
// 50:317–372, §IIIC; for an intercept-only model Stata's other factor
// (N−1)/(N−K) is 1). For a paired difference the s_i are the per-pair
// differences (Miller 2024, paired analysis). ok is false when G < 2.
func (x Influence) CR1() (se float64, g int, ok bool) {
	var ss float64
	for i, e := range x.E {
		if x.Present[i] {
			ss += e * e
			g++
		}
	}
	if g < 2 {
		return 0, g, false
	}
	return math.Sqrt(float64(g) / float64(g-1) * ss), g, true
}

// ClusterT returns the cluster-t interval est ± t_{(1+c)/2, G−1} · se: the
// Student-t critical value on G−1 degrees of freedom, as recommended with
// few clusters (Cameron & Miller 2015, §VIC; Bester, Conley & Hansen 2011,
// "Inference with dependent data using cluster covariance estimators", J.
// Econometrics 165:137–151, who show the CR estimator's t statistic is
// asymptotically t(G−1) with fixed G). ok is false when g < 2, se is not
// finite and ≥ 0, or c is not in (0, 1).
func ClusterT(est, se float64, g int, c float64) (lo, hi float64, ok bool) {
	if g < 2 || !(se >= 0) || math.IsInf(se, 0) || !(c > 0 && c < 1) {
		return 0, 0, false
	}
	half := TQuantile((1+c)/2, float64(g-1)) * se
	return est - half, est + half, true
}

// ClusterTP returns the two-sided p-value of est/se against t(G−1),
// 2·F(−|est/se|), the test that matches ClusterT (the interval excludes
// 0 exactly when p < 1 − c). It returns NaN when g < 2 or se ≤ 0.
func ClusterTP(est, se float64, g int) float64 {
	if g < 2 || !(se > 0) {
		return math.NaN()
	}
	return 2 * TCDF(-math.Abs(est/se), float64(g-1))
}
