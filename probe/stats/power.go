package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Components are the variance components of a one-way random-effects model
// of unit values y_gi in clusters g, y_gi = μ + a_g + e_gi with Var(a) =
// Between and Var(e) = Within, in the squared unit of y (for paired
// differences of 0/1 outcomes, squared fractions).
type Components struct {
	Between float64 // σ²_b, between-cluster variance (≥ 0)
	Within  float64 // σ²_w, within-cluster variance (≥ 0)
	// Clusters (G) and Units (N) the components were estimated from, and
	// N0 the average cluster size of the ANOVA estimator (see
	// VarianceComponents); N0 = N/G for equal sizes.
	Clusters int
	Units    int
	N0       float64
	// WithinIdentified is false when every cluster has one unit (N = G):
	// then Within is 0 and Between is the whole variance.
	WithinIdentified bool
}

// ICC returns the intra-cluster correlation σ²_b / (σ²_b + σ²_w), or 0 when
// both are 0.
func (c Components) ICC() float64 {
	if t := c.Between + c.Within; t > 0 {
		return c.Between / t
	}
	return 0
}

// FixedBaseComponents returns the variance components of the per-pair
// difference d_gi = y_0g − y_gi (0/1 outcomes) of a paired design in which
// each cluster g has ONE fixed reference unit y_0g (a template's base
// prompt: one prompt however many instances are drawn) paired with m units
// y_gi drawn anew for each pair (the instances of a variant that re-draws
// names or numbers). Let p_g and q_g be the probabilities that the
// reference and a drawn unit are right in cluster g, the reference being
// exchangeable with a drawn unit of its cluster, and the outcomes
// independent given g. The law of total variance (Casella & Berger 2002,
// Statistical Inference, Thm. 4.4.7), conditioning on g, gives for the mean
// of a cluster's m differences
//
//	Var(d̄_g) = Var(p_g − q_g) + E[p_g(1 − p_g)] + E[q_g(1 − q_g)]/m
//
// and for two differences of one cluster Cov(d_gi, d_gj) = Var(p_g − q_g)
// + E[p_g(1 − p_g)]: the reference's own Bernoulli variance is shared by
// every pair of its cluster. In the one-way model of d_gi (SEMean, MDE,
// VarianceComponents) it therefore belongs to the between part, which no
// number of instances divides:
//
//	σ²_b = dropVar + baseVar,  σ²_w = variantVar,
//
// with dropVar = Var(p_g − q_g) (how much the true drop differs between
// clusters), baseVar = E[p_g(1 − p_g)] and variantVar = E[q_g(1 − q_g)]
// (each at most 0.25). VarianceComponents applied to the pairs of such a
// design estimates these σ²_b and σ²_w without needing the split.
func FixedBaseComponents(dropVar, baseVar, variantVar float64) Components {
	return Components{Between: dropVar + baseVar, Within: variantVar}
}

// VarianceComponents estimates σ²_b and σ²_w from unit values grouped by
// cluster with the ANOVA (method of moments) estimators of the unbalanced
// one-way model (Searle, Casella & McCulloch 1992, Variance Components,
// §3.6; Donner & Klar 2000, Design and Analysis of Cluster Randomization
// Trials in Health Research, §5.2):
//
//	MSB = Σ_g n_g (ȳ_g − ȳ)² / (G − 1)
//	MSW = Σ_g Σ_i (y_gi − ȳ_g)² / (N − G)
//	n₀  = (N − Σ_g n_g² / N) / (G − 1)
//	σ²_w = MSW,   σ²_b = max(0, (MSB − MSW) / n₀)
//
// Empty groups are ignored. With one unit per cluster (N = G) σ²_w is not
// identified: Within is 0, Between is the sample variance of the values, and
// WithinIdentified is false. ok is false with fewer than 2 non-empty groups.
func VarianceComponents(groups [][]float64) (Components, bool) {
	var G, N int
	var sum, sumN2 float64
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		G++
		N += len(g)
		sumN2 += float64(len(g) * len(g))
		for _, y := range g {
			sum += y
		}
	}
	if G < 2 {
		return Components{Clusters: G, Units: N}, false
	}
	mean := sum / float64(N)
	var ssb, ssw float64
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		var m float64
		for _, y := range g {
			m += y
		}
		m /= float64(len(g))
		ssb += float64(len(g)) * (m - mean) * (m - mean)
		for _, y := range g {
			ssw += (y - m) * (y - m)
		}
	}
	c := Components{Clusters: G, Units: N, N0: (float64(N) - sumN2/float64(N)) / float64(G-1)}
	msb := ssb / float64(G-1)
	if N == G {
		c.Between = msb
		return c, true
	}
	c.WithinIdentified = true
	c.Within = ssw / float64(N-G)
	c.Between = max(0, (msb-c.Within)/c.N0)
	return c, true
}

// SEMean returns the standard error of the mean of a design with g clusters
// of m units each under the components c:
//
//	SE = √( (σ²_b + σ²_w/m) / g ) = √( σ²·(1 + (m−1)ρ) / (g·m) ),
//
// σ² = σ²_b + σ²_w and ρ the ICC: the variance of a simple mean inflated by
// the design effect 1 + (m−1)ρ (Kish 1965, Survey Sampling, §5.4; Donner &
// Klar 2000, §2.2). NaN when g < 1 or m ≤ 0.
func SEMean(g int, m float64, c Components) float64 {
	if g < 1 || !(m > 0) {
		return math.NaN()
	}
	return math.Sqrt((c.Between + c.Within/m) / float64(g))
}

// MDE returns the minimum detectable effect of a two-sided test at level
// alpha with the given power, for the mean over g clusters of m units:
//
//	MDE = (t_{1−α/2, g−1} + t_{power, g−1}) · SE
//
// with SE from SEMean and t quantiles on g−1 degrees of freedom (Bloom 1995,
// "Minimum detectable effects: a simple way to report the statistical power
// of experimental designs", Evaluation Review 19:547–556, with the t
// multiplier for a small number of clusters). At 80% power and α = 0.05
// the multiplier is 2.80 for many clusters and 3.49 at g = 6. It returns
// +Inf when g < 2.
func MDE(g int, m float64, c Components, alpha, power float64) float64 {
	return mdeDF(g, float64(g-1), m, c, alpha, power)
}

// Power returns the approximate power of a two-sided test at level alpha to
// detect an effect delta with g clusters of m units: 1 − F_{g−1}(t_{1−α/2,
// g−1} − |delta|/SE), the central-t approximation that MDE inverts (the
// opposite tail is neglected; Bloom 1995). It returns 0 when g < 2 and 1
// when SE = 0 and delta ≠ 0.
func Power(g int, m float64, c Components, delta, alpha float64) float64 {
	return powerDF(g, float64(g-1), m, c, delta, alpha)
}

// RequiredClusters returns the smallest number of clusters g ≥ minG (and ≥
// 2) at which a paired drop delta of 0/1 outcomes is detected with the
// given power, PairedDropPower(g, m, c, delta, alpha, randomFrom) ≥ power
// (the randomized test from randomFrom clusters; with m ≠ 1
// the same as MDE(g, m, c, alpha, power) ≤ delta, since MDE inverts Power;
// with m = 1 the exact sign test's power, as PairedDropMDE), searching up
// to maxG; ok is false when even maxG is not enough (or delta ≤ 0). minG
// lets a caller add a floor such as SignFlipMinClusters(alpha), below which
// the sign-flip test cannot reach alpha at all. The search is a bisection:
// the sign test's power rises with g in small saw-teeth (its critical count
// is an integer), so a g a little below the one returned can reach the
// power too.
func RequiredClusters(delta, m float64, c Components, alpha, power float64, minG, maxG, randomFrom int) (int, bool) {
	return RequiredClustersInformed(delta, m, 1, c, alpha, power, minG, maxG, randomFrom)
}

// RequiredClustersInformed is RequiredClusters when only a share of the
// clusters is expected to be informative (InformativeOf(g, share) of g;
// c the components of those clusters' pairs, as PairedDropPowerInformed
// takes them): the smallest g with PairedDropPowerInformed(g,
// InformativeOf(g, share), m, c, delta, alpha, randomFrom) ≥ power. A
// share of 1 (or outside (0, 1)) is RequiredClusters.
func RequiredClustersInformed(delta, m, share float64, c Components, alpha, power float64, minG, maxG, randomFrom int) (int, bool) {
	if !(delta > 0) {
		return 0, false
	}
	lo := max(2, minG)
	if lo > maxG {
		return 0, false
	}
	enough := func(g int) bool {
		return PairedDropPowerInformed(g, InformativeOf(g, share), m, c, delta, alpha, randomFrom) >= power
	}
	if !enough(maxG) {
		return 0, false
	}
	hi := maxG
	for lo < hi {
		mid := (lo + hi) / 2
		if enough(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// SignTestPower returns the power of the verdict's test of a paired drop
// of 0/1 outcomes with one pair per cluster: the sign-flip test over g
// clusters at two-sided level alpha, rejecting with the drop's sign, when
// each cluster's difference d_g ∈ {−1, 0, 1} has mean delta and variance
// v = c.Between + c.Within (σ²_b + σ²_w/m at m = 1, as SEMean). Such a
// d_g is +1 with probability p₊ and −1 with p₋, where
//
//	p₊ − p₋ = δ,   p₊ + p₋ = E[d²] = v + δ²,
//
// so the components determine the distribution (p₊ + p₋ clipped to
// [|δ|, 1]). The sign-flip test of such values is exact Bernoulli: the
// zeros do not move Σ s_g d_g, and given N nonzero values the statistic is
// |2K − N| with K ~ Bin(N, ½) under the null, so it is the two-sided sign
// test on the discordant clusters, rejecting when 2·P(K ≥ k) ≤ α (its
// critical k by signCritical). With N ~ Bin(g, p₊ + p₋) and, given N,
// K ~ Bin(N, p₊/(p₊ + p₋)),
//
//	power = Σ_N P(N) · P(K ≥ k*(N) | N),
//
// binomial tails by the regularized incomplete beta function (P(K ≥ k) =
// I_π(k, N − k + 1); Abramowitz & Stegun 1964, 26.5.24). Unlike Power's
// central-t approximation it accounts for the discreteness of the test,
// which with few discordant clusters rejects less often than its level:
// in TestCoveragePowerGrid the verdict's power at one pair per template
// was 6–16 points below Power's prediction. The Monte Carlo version of the
// test (above ExactMaxClusters) rejects slightly less often still ((hits +
// 1)/(draws + 1)). It returns 0 when g < 2.
//
// With randomized, the test breaks its ties at random (SignFlipInterval
// with a uniform u): given N it also rejects on K = k* − 1, the count
// just short of the critical one, with probability
//
//	γ = min(1, (α − 2·P₀(K ≥ k*)) / (2·P₀(K = k* − 1))),
//
// the share of u that puts its randomized p at or below α (the two tails
// tie at |2K − N|; P₀ under Bin(N, ½); k* = N + 1 where no count
// reaches α), which makes the level exactly α (Lehmann & Romano 2005,
// Testing Statistical Hypotheses, 3rd ed., §3.4, the randomized UMP test
// of a binomial proportion).
func SignTestPower(g int, c Components, delta, alpha float64, randomized bool) float64 {
	if g < 2 {
		return 0
	}
	d := math.Abs(delta)
	q := min(1, max(d, c.Between+c.Within+d*d))
	if !(q > 0) {
		return 0
	}
	pi := min(1, (q+d)/(2*q))
	var pw float64
	for n := 1; n <= g; n++ {
		pn := binomPMF(g, n, q)
		if pn < 1e-16 {
			continue
		}
		k := signCritical(n, alpha)
		if randomized {
			if k < 0 {
				k = n + 1
			}
			if 2*(k-1) > n {
				tail := 2 * binomUpper(n, k, 0.5)
				gamma := min(1, max(0, alpha-tail)/(2*binomPMF(n, k-1, 0.5)))
				pw += pn * gamma * binomPMF(n, k-1, pi)
			}
		}
		if k < 0 {
			continue
		}
		pw += pn * binomUpper(n, k, pi)
	}
	return min(1, pw)
}

// SignTestMDE returns the smallest drop delta at which SignTestPower(g, c,
// delta, alpha, randomized) reaches power (bisection on [0, 1] to 1e-6; the power
// rises with the drop), or +Inf when even a drop of 1 does not reach it
// (too few clusters for the test to reject) or g < 2.
func SignTestMDE(g int, c Components, alpha, power float64, randomized bool) float64 {
	if g < 2 || SignTestPower(g, c, 1, alpha, randomized) < power {
		return math.Inf(1)
	}
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if SignTestPower(g, c, mid, alpha, randomized) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// InformativeClusters returns how many of the values are not 0 (|x| >
// 1e-12; NaN is not counted). Given the count of right answers (base plus
// variant) per cluster, it counts the clusters that can show a paired
// drop: a cluster wrong on both sides in every pair (never solved) has a
// mean difference of 0 and does not move the sign-flip statistic Σ_g s_g
// x_g (see PairedDropMDEInformed).
func InformativeClusters(means []float64) int {
	n := 0
	for _, x := range means {
		if math.Abs(x) > 1e-12 {
			n++
		}
	}
	return n
}

// mdeDF is MDE with the t quantiles on df degrees of freedom (+Inf when
// g < 2).
func mdeDF(g int, df, m float64, c Components, alpha, power float64) float64 {
	if g < 2 {
		return math.Inf(1)
	}
	return (TQuantile(1-alpha/2, df) + TQuantile(power, df)) * SEMean(g, m, c)
}

// powerDF is Power with the t distribution on df degrees of freedom (0
// when g < 2; 1, or α/2 with no effect, when SE = 0).
func powerDF(g int, df, m float64, c Components, delta, alpha float64) float64 {
	if g < 2 {
		return 0
	}
	se := SEMean(g, m, c)
	if se == 0 {
		if delta != 0 {
			return 1
		}
		return alpha / 2
	}
	return 1 - TCDF(TQuantile(1-alpha/2, df)-math.Abs(delta)/se, df)
}

// InformativeOf returns G', the informative clusters expected among g when
// a share of them is informative: share·g rounded to the nearest integer,
// at least 1; g when share is not in (0, 1) (every cluster counted).
func InformativeOf(g int, share float64) int {
	if !(share > 0 && share < 1) {
		return g
	}
	return max(1, int(math.Round(share*float64(g))))
}

// informedFrame returns the clusters the sign-flip test of a paired drop
// rests on, informative when 0 < informative < g (else g), and their share
// of the g clusters.
func informedFrame(g, informative int) (int, float64) {
	if informative <= 0 || informative >= g {
		return g, 1
	}
	return informative, float64(informative) / float64(g)
}

// latticeShift returns the continuity correction of the sign-flip test of
// g cluster means of m 0/1 differences each, in the unit of their mean:
// 1/(m·g). Each mean is a multiple of 1/m, so the statistic Σ_g s_g d_g
// moves on a lattice of span 2/m (flipping one sign moves it by 2d_g), and
// its p-value P(|S| ≥ |S_obs|) counts the whole atom at the observed value.
// The normal approximation of such a lattice tail is evaluated half a span
// inside it (the continuity correction: Feller 1968, An Introduction to
// Probability Theory and Its Applications I, 3rd ed., §VII.2; Cox 1970,
// "The continuity correction", Biometrika 57:217–219), so the test rejects
// only when Σ_g d_g clears the continuous critical value by 1/m, and the
// mean by 1/(m·g). Where the counts per cluster differ (m their harmonic
// mean) the lattice is finer and the shift conservative.
func latticeShift(g int, m float64) float64 {
	return 1 / (m * float64(g))
}

// PairedDropMDEInformed is PairedDropMDE for a run in which only
// informative of the g clusters can have a non-zero mean (InformativeClusters
// of the right answers per template: the templates solved in some pair on
// either side; pass g, or 0, when unknown, as plan does), with c the
// variance components of the pairs of those informative clusters alone. A
// cluster mean of exactly 0 (a template never solved: both sides wrong in
// every pair) does not move the sign-flip statistic Σ_g s_g x_g, so the
// test is the sign-flip test on the G' informative clusters alone, as the
// sign test discards zero differences (Conover 1999, Practical
// Nonparametric Statistics, 3rd ed., §3.4): their mean is δ' = δ·g/G' and
// their spread is that of c, which leaves out the spread between the
// never-solved clusters' zeros and the others' mean (the components of all
// g clusters include it, and with many never-solved clusters it made the
// prediction far too cautious: up to 12.6 points in TestCoveragePowerGrid).
// With m ≠ 1 the MDE on those clusters is the central-t MDE of G' clusters
// plus the continuity correction of the test's lattice (latticeShift), and
// the drop over all g clusters is G'/g of it:
//
//	MDE = (G'/g)·( (t_{1−α/2, G'−1} + t_{power, G'−1})·SE' + 1/(m·G') ),
//
// SE' = SEMean(G', m, c). Without the correction the central t overstated
// the verdict's power by up to 11.5 points at 20 templates × 5 pairs. With
// m = 1 it is (G'/g)·SignTestMDE(G', c), the exact sign test, where that
// is finite (else the central t without correction, finite and large). It
// is +Inf when fewer than SignFlipMinClusters(alpha) of the g clusters are
// informative: the test cannot reject on so few, whatever the drop (at 20
// templates × 10 pairs, base 20%, ρ = 0.9, a finite MDE there put the
// median printed MDE at 9.7 pp where the verdict's power at 10 pp was 29%).
//
// From randomFrom clusters (g ≥ randomFrom; pass 0 for always, a number
// above g for never) the test is the randomized one, which breaks its ties
// at random and has level exactly α (SignFlipInterval with a uniform u):
// its lattice costs it nothing, so there is no continuity correction, and
// with m = 1 the sign test is the randomized one (SignTestPower).
func PairedDropMDEInformed(g, informative int, m float64, c Components, alpha, power float64, randomFrom int) float64 {
	gi, share := informedFrame(g, informative)
	if share < 1 && gi < SignFlipMinClusters(alpha) {
		return math.Inf(1)
	}
	randomized := g >= randomFrom
	if m == 1 {
		if d := SignTestMDE(gi, c, alpha, power, randomized); !math.IsInf(d, 1) {
			return share * d
		}
		return share * mdeDF(gi, float64(max(1, gi-1)), m, c, alpha, power)
	}
	if gi < 2 {
		return math.Inf(1)
	}
	return share * (mdeDF(gi, float64(gi-1), m, c, alpha, power) + lattice(gi, m, randomized))
}

// lattice is latticeShift(g, m) for the non-randomized test, 0 for the
// randomized one.
func lattice(g int, m float64, randomized bool) float64 {
	if randomized {
		return 0
	}
	return latticeShift(g, m)
}

// PairedDropPowerInformed is the power that PairedDropMDEInformed inverts
// (informative of the g cluster means non-zero, g or 0 when unknown; c the
// components of the informative clusters' pairs): with the drop δ' =
// δ·g/G' on the G' informative clusters, SignTestPower(G', c, δ') with one
// pair per cluster, else the central-t power on G' − 1 degrees of freedom
// at δ' less the lattice's continuity correction (latticeShift; 0 where
// the correction exceeds the drop). It is 0 when G' is below
// SignFlipMinClusters(alpha), where the test cannot reject at all (the
// central t gave up to 44 points too much there in TestCoveragePowerGrid);
// the MDE there is +Inf when fewer than g clusters are informative and
// stays finite and large, as SignTestMDE's fallback, when all g are. From
// randomFrom clusters the test is the randomized one, as in
// PairedDropMDEInformed (no continuity correction).
func PairedDropPowerInformed(g, informative int, m float64, c Components, delta, alpha float64, randomFrom int) float64 {
	gi, share := informedFrame(g, informative)
	d := math.Abs(delta) / share
	randomized := g >= randomFrom
	if m == 1 {
		return SignTestPower(gi, c, d, alpha, randomized)
	}
	if gi < SignFlipMinClusters(alpha) {
		return 0
	}
	return powerDF(gi, float64(gi-1), m, c, max(0, d-lattice(gi, m, randomized)), alpha)
}

// PairedDropMDE returns the minimum detectable paired drop of 0/1 outcomes
// with g clusters of m pairs, every cluster counted as informative
// (PairedDropMDEInformed with informative = g): SignTestMDE with one pair
// per cluster (m = 1, where the template means are −1, 0 or 1 and the
// central-t approximation overstates the power of the sign-flip test), MDE
// plus the continuity correction of the sign-flip test's lattice
// (latticeShift, 1/(m·g)) otherwise, and MDE also where SignTestMDE is
// infinite (too few clusters for the test to reach alpha at all, which
// callers report apart: the number stays finite and large); both for the
// randomized test from randomFrom clusters (see PairedDropMDEInformed).
func PairedDropMDE(g int, m float64, c Components, alpha, power float64, randomFrom int) float64 {
	return PairedDropMDEInformed(g, 0, m, c, alpha, power, randomFrom)
}

// PairedDropPower returns the power to detect a paired drop delta of 0/1
// outcomes with g clusters of m pairs at two-sided level alpha, the power
// PairedDropMDE inverts: SignTestPower with one pair per cluster, else
// Power at the drop less latticeShift(g, m); both for the randomized test
// from randomFrom clusters (see PairedDropMDEInformed).
func PairedDropPower(g int, m float64, c Components, delta, alpha float64, randomFrom int) float64 {
	return PairedDropPowerInformed(g, 0, m, c, delta, alpha, randomFrom)
}

// signCritical returns the smallest k > n/2 with 2·P(K ≥ k) ≤ alpha for K ~
// Bin(n, ½) (the two-sided sign test's critical count, with the tolerance
// of SignFlip's comparison), or −1 when no k ≤ n reaches it.
func signCritical(n int, alpha float64) int {
	lo, hi := n/2+1, n
	if lo > hi || 2*binomUpper(n, hi, 0.5) > alpha*(1+1e-12) {
		return -1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if 2*binomUpper(n, mid, 0.5) <= alpha*(1+1e-12) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// binomUpper returns P(K ≥ k) for K ~ Bin(n, p): I_p(k, n − k + 1), 1 for
// k ≤ 0 and 0 for k > n.
func binomUpper(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case p >= 1:
		return 1
	case p <= 0:
		return 0
	}
	return mathext.RegIncBeta(float64(k), float64(n-k+1), p)
}

// binomPMF returns P(K = k) for K ~ Bin(n, p), computed in logs.
func binomPMF(n, k int, p float64) float64 {
	switch {
	case p <= 0 && k == 0, p >= 1 && k == n:
		return 1
	case p <= 0, p >= 1:
		return 0
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}
