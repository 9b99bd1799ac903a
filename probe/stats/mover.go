package stats

import "math"

// WilsonCrit returns the Wilson score interval of a proportion p estimated
// from n units (n may be an effective sample size, not an integer) with the
// critical value crit in place of z (Wilson 1927; see Wilson):
//
//	centre = (p + c²/2n) / (1 + c²/n)
//	half   = c / (1 + c²/n) · √(p(1−p)/n + c²/4n²)
//
// clipped to [0, 1]. With crit = z_{(1+conf)/2} it is Wilson's interval;
// with crit = t_{(1+conf)/2, df} and n an effective sample size it is the
// score interval of Korn & Graubard (1998) with their degrees-of-freedom
// adjustment: the formula depends on n and crit only through c²/n, and
// their adjusted n*·(z/t)² with z gives the same c²/n as n* with t. ok is
// false when n is not positive and finite, p is outside [0, 1] or crit is
// not positive and finite.
func WilsonCrit(p, n, crit float64) (lo, hi float64, ok bool) {
	if !(n > 0) || math.IsInf(n, 0) || !(p >= 0 && p <= 1) || !(crit > 0) || math.IsInf(crit, 0) {
		return 0, 0, false
	}
	c2 := crit * crit
	den := 1 + c2/n
	centre := (p + c2/(2*n)) / den
	half := crit / den * math.Sqrt(p*(1-p)/n+c2/(4*n*n))
	lo, hi = max(0, centre-half), min(1, centre+half)
	if p == 0 {
		lo = 0
	}
	if p == 1 {
		hi = 1
	}
	return lo, hi, true
}

// EffectiveN returns the effective sample size of a proportion p estimated
// from n units whose (design-based, e.g. cluster-robust) variance is v:
//
//	n_eff = n / deff,   deff = v / (p(1−p)/n),
//
// that is n_eff = p(1−p)/v (Kish 1965, Survey Sampling, §8.2; Korn &
// Graubard 1998, "Confidence intervals for proportions with small expected
// number of positive counts estimated from survey data", Survey
// Methodology 24:193–201, eq. 2.1). As Korn & Graubard propose, the design
// effect is truncated at 1 (n_eff ≤ n): clustering is not allowed to make
// an interval narrower than the one for independent units. When p is 0 or
// 1, v is 0 and the design effect cannot be estimated from the sample; it
// then returns min(n, undefined), the caller's effective size for that
// case (Korn & Graubard use n; see PairedMOVERWilson for why it should not
// be n with clustered units). It returns 0 when n ≤ 0.
func EffectiveN(p, n, v, undefined float64) float64 {
	if !(n > 0) {
		return 0
	}
	pq := p * (1 - p)
	if !(pq > 0) {
		return min(n, undefined)
	}
	if !(v > 0) {
		return n
	}
	return min(n, pq/v)
}

// MOVER returns the confidence limits of θ₁ − θ₂ from the estimates θ₁, θ₂,
// their own confidence limits [l₁, u₁] and [l₂, u₂] and the correlation r
// of the two estimates, by the method of variance estimates recovery
// (Zou & Donner 2008, "Construction of confidence limits about effect
// measures: a general approach", Statistics in Medicine 27:1693–1702,
// eqs. 5–6):
//
//	L = θ₁ − θ₂ − √((θ₁ − l₁)² + (u₂ − θ₂)² − 2r(θ₁ − l₁)(u₂ − θ₂))
//	U = θ₁ − θ₂ + √((u₁ − θ₁)² + (θ₂ − l₂)² − 2r(u₁ − θ₁)(θ₂ − l₂))
//
// Each limit recovers the variance of one estimate from the distance to its
// own limit on the side that matters, so an asymmetric single-proportion
// interval (Wilson near 0 or 1) gives an asymmetric difference interval.
// With Wilson limits and r the correlation of paired proportions this is
// Newcombe's method 10 for a paired difference (Newcombe 1998, "Improved
// confidence intervals for the difference between binomial proportions
// based on paired data", Statistics in Medicine 17:2635–2650). r is
// clipped to [−1, 1]; a negative radicand (impossible for |r| ≤ 1) is 0.
func MOVER(t1, l1, u1, t2, l2, u2, r float64) (lo, hi float64) {
	r = max(-1, min(1, r))
	a, b := t1-l1, u2-t2
	c, d := u1-t1, t2-l2
	lo = t1 - t2 - math.Sqrt(max(0, a*a+b*b-2*r*a*b))
	hi = t1 - t2 + math.Sqrt(max(0, c*c+d*d-2*r*c*d))
	return lo, hi
}

// MOVERWilson is the MOVER-Wilson interval of a difference of two clustered
// proportions measured on the same units (see PairedMOVERWilson), with the
// quantities it was built from, for the record.
type MOVERWilson struct {
	Lo, Hi float64 // limits of A − B, fractions in [−1, 1]
	// A and B are the two proportions, each with its Wilson limits at the
	// effective sample size.
	A, ALo, AHi float64
	B, BLo, BHi float64
	// NEffA and NEffB are the Korn–Graubard effective sample sizes (at most
	// Units), Units the number of units (pairs), Clusters G.
	NEffA, NEffB float64
	Units        float64
	Clusters     int
	// Corr is the cluster-robust correlation of the two proportions (0 when
	// either has no variance), Crit the critical value t_{(1+c)/2, G−1}.
	Corr, Crit float64
}

// PairedMOVERWilson returns the confidence interval at level conf of the
// difference A − B of two proportions measured on the same units in G
// clusters (a paired drop: A the base outcome of each pair, B the variant
// outcome), given as Ratios over the same clusters with equal denominators
// (a.Den[g] = b.Den[g], the units of cluster g; values in [0, 1]). capA and
// capB bound each side's effective sample size (the number of distinct
// units on that side, e.g. KishN of the distinct prompts: a base prompt
// shared by a template's pairs counts once); unitCorr is the correlation of
// the two outcomes over the units (Pearson over the pairs; for 0/1
// outcomes the phi coefficient of the paired 2×2 table). It combines:
//
//   - for each proportion, the CR1 cluster-robust variance v (Influence.CR1:
//     Miller 2024, arXiv:2411.00640; Cameron & Miller 2015), the
//     Korn–Graubard effective sample size n_eff = p(1−p)/v with the design
//     effect truncated at 1 (EffectiveN; for a proportion of 0 or 1 the
//     other proportion's design effect, or the number of clusters G when
//     neither has one: pairedEffectiveN), and the Wilson score interval on
//     n_eff with the critical value t_{(1+c)/2, G−1} in place of z
//     (WilsonCrit; Korn & Graubard 1998's degrees-of-freedom adjustment with
//     G − 1 degrees of freedom, as for cluster-t);
//
//   - their correlation r, from the same cluster-robust covariance, so
//     that the variance of the difference MOVER recovers is the
//     cluster-robust one, V_D = CR1 of the influences e_A − e_B. Where the
//     design effects are truncated (variances v*_X = p_X(1−p_X)/n_eff,X
//     larger than the cluster-robust V_X) the difference's variance is
//     floored the same way, at its value for independent pairs, s²_D/n with
//     s²_D = p_A q_A + p_B q_B − 2·unitCorr·√(p_A q_A p_B q_B); then
//
//     r = (v*_A + v*_B − max(V_D, s²_D/n)) / (2√(v*_A v*_B)),
//
//     clipped to [−1, 1]. Without truncation this is the cluster-robust
//     correlation Σ_g e_Ag·e_Bg / √(Σ_g e_Ag² · Σ_g e_Bg²), which with one
//     unit per cluster is the phi coefficient of the paired 2×2 table that
//     Newcombe (1998, method 10) uses (without his adjustment of its
//     numerator by n/2); when everything is truncated, the regime of
//     independent units, it is unitCorr. When v*_A or v*_B is 0 (a
//     proportion of 0 or 1) r is unitCorr;
//
//   - MOVER (Zou & Donner 2008) for the difference.
//
// Unlike the symmetric cluster-t interval it is asymmetric where a
// proportion is near 0 or 1 and never certain at the boundary: when every
// pair is right on both sides it is not [0, 0]. ok is false with fewer than
// 2 clusters, mismatched denominators, or conf not in (0, 1).
func PairedMOVERWilson(a, b Ratio, capA, capB, unitCorr, conf float64) (MOVERWilson, bool) {
	if len(a.Den) != len(b.Den) || len(a.Num) != len(a.Den) || len(b.Num) != len(b.Den) || !(conf > 0 && conf < 1) {
		return MOVERWilson{}, false
	}
	var n float64
	for g := range a.Den {
		if a.Den[g] != b.Den[g] {
			return MOVERWilson{}, false
		}
		n += a.Den[g]
	}
	ia, ok1 := a.Influence()
	ib, ok2 := b.Influence()
	if !ok1 || !ok2 {
		return MOVERWilson{}, false
	}
	G := ia.Clusters()
	if G < 2 {
		return MOVERWilson{}, false
	}
	pa, _ := a.Value()
	pb, _ := b.Value()
	var saa, sbb, sab float64
	for g := range ia.E {
		if ia.Present[g] {
			saa += ia.E[g] * ia.E[g]
			sbb += ib.E[g] * ib.E[g]
			sab += ia.E[g] * ib.E[g]
		}
	}
	f := float64(G) / float64(G-1) // CR1
	m := MOVERWilson{A: pa, B: pb, Units: n, Clusters: G, Crit: TQuantile((1+conf)/2, float64(G-1))}
	m.NEffA, m.NEffB = pairedEffectiveN(pa, pb, min(n, capA), min(n, capB), f*saa, f*sbb, G)
	if math.IsNaN(unitCorr) {
		unitCorr = 0
	}
	unitCorr = max(-1, min(1, unitCorr))
	qa, qb := pa*(1-pa), pb*(1-pb)
	wa, wb := qa/m.NEffA, qb/m.NEffB
	if wa > 0 && wb > 0 {
		vd := max(0, f*(saa+sbb-2*sab))
		floor := max(0, qa+qb-2*unitCorr*math.Sqrt(qa*qb)) / n
		m.Corr = max(-1, min(1, (wa+wb-max(vd, floor))/(2*math.Sqrt(wa*wb))))
	} else {
		m.Corr = unitCorr
	}
	var okA, okB bool
	m.ALo, m.AHi, okA = WilsonCrit(pa, m.NEffA, m.Crit)
	m.BLo, m.BHi, okB = WilsonCrit(pb, m.NEffB, m.Crit)
	if !okA || !okB {
		return MOVERWilson{}, false
	}
	m.Lo, m.Hi = MOVER(pa, m.ALo, m.AHi, pb, m.BLo, m.BHi, m.Corr)
	m.Lo, m.Hi = max(-1, m.Lo), min(1, m.Hi)
	return m, true
}

// pairedEffectiveN returns the effective sample sizes of two proportions
// pa and pb measured on the same units in g clusters (nA and nB units,
// CR1 variances va and vb), by EffectiveN, with the effective size of a
// proportion of 0 or 1 (design effect not estimable) taken as follows: the
// other proportion's design effect where that one is estimable (both are
// measured on the same units in the same clusters; a model that gets every
// base prompt right tells nothing about the correlation within templates,
// its variant answers do), never below g; g itself where neither is (the
// design effect of the most clustered design the sample allows, an
// intra-cluster correlation of 1: deff = 1 + (m̄ − 1)·1 = n/g for clusters
// of mean size m̄ = n/g; Kish 1965, §5.4; Donner & Klar 2000, Design and
// Analysis of Cluster Randomization Trials in Health Research, §2.2).
// Korn & Graubard's n there treats the units as independent exactly where
// clustering may be most extreme: 0 of 60 pairs right from 6 templates is
// what a model that cannot solve those 6 templates gives whatever the
// correlation within them, and n = 60 made a 95% interval cover a true
// drop of 10 pp in 71% of simulated runs (TestCoveragePowerGrid).
func pairedEffectiveN(pa, pb, nA, nB, va, vb float64, g int) (effA, effB float64) {
	G := float64(g)
	effA = EffectiveN(pa, nA, va, G)
	effB = EffectiveN(pb, nB, vb, G)
	okA, okB := pa*(1-pa) > 0, pb*(1-pb) > 0
	switch {
	case okA && !okB && nA > 0:
		effB = min(nB, max(G, nB*effA/nA))
	case okB && !okA && nB > 0:
		effA = min(nA, max(G, nA*effB/nB))
	}
	return effA, effB
}

// KishN returns Kish's effective sample size of a weighted mean with
// weights w (Kish 1965, Survey Sampling, §11.7):
//
//	n_w = (Σ w)² / Σ w²
//
// It is the number of equally weighted independent units that give the
// same variance: for the base side of paired prompts, w_i is the number of
// pairs in which distinct prompt i appears, so a base prompt shared by m
// pairs counts as one unit, not m. Non-positive weights are ignored; 0 for
// none.
func KishN(w []float64) float64 {
	var s, s2 float64
	for _, x := range w {
		if x > 0 {
			s += x
			s2 += x * x
		}
	}
	if s2 == 0 {
		return 0
	}
	return s * s / s2
}

// Pearson returns the Pearson correlation of x and y (equal lengths):
// Σ(x − x̄)(y − ȳ) / √(Σ(x − x̄)² Σ(y − ȳ)²); for 0/1 values the phi
// coefficient (AD − BC)/√((A+B)(C+D)(A+C)(B+D)) of their 2×2 table
// (Yule 1912). It returns 0 when either has no variance or the lengths
// differ or are below 2.
func Pearson(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return 0
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxx, syy, sxy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return max(-1, min(1, sxy/math.Sqrt(sxx*syy)))
}

// NewcombePhi returns the correlation of a paired 2×2 table that Newcombe's
// method 10 uses (Newcombe 1998, "Improved confidence intervals for the
// difference between binomial proportions based on paired data",
// Statistics in Medicine 17:2635–2650, §2, method 10): the phi coefficient
//
//	φ = A / √((a+b)(c+d)(a+c)(b+d)),  A = ad − bc,
//
// with its numerator corrected for continuity: A − n/2 when A > n/2, 0
// when 0 ≤ A ≤ n/2, A itself when A < 0 (n = a+b+c+d). a is the pairs right
// on both sides, b right on the first only, c on the second only, d on
// neither; counts may be fractional. It returns 0 when a margin is empty.
// Without the correction a table with no discordant pair has φ = 1 and the
// MOVER interval of an unchanged accuracy can collapse to [0, 0].
func NewcombePhi(a, b, c, d float64) float64 {
	den := (a + b) * (c + d) * (a + c) * (b + d)
	if !(den > 0) {
		return 0
	}
	num := a*d - b*c
	n := a + b + c + d
	switch {
	case num > n/2:
		num -= n / 2
	case num >= 0:
		num = 0
	}
	return max(-1, min(1, num/math.Sqrt(den)))
}
