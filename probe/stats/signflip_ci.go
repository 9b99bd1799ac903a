package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// SignFlipCI is the confidence interval of a centre δ obtained by
// inverting the sign-flip test (see SignFlipInterval), with the test of
// δ = 0 on the same sign vectors.
type SignFlipCI struct {
	// Lo and Hi are the interval's limits, in the unit of the values.
	Lo, Hi float64
	// LoOpen and HiOpen say that the limit itself is rejected (the set is
	// (Lo, …] or […, Hi)): only with u < 1, where the randomized test
	// rejects on the atom of the lattice at the limit and not beside it
	// (see SignFlipInterval). Always false at u = 1.
	LoOpen, HiOpen bool
	// Test is the sign-flip test of δ = 0 on the same sign vectors: it
	// equals SignFlip(d, maxExact, draws, rng) from the same generator
	// state, and the interval excludes 0 exactly when Test.P ≤ 1 − conf
	// (up to the bisection's tolerance).
	Test SignFlipResult
}

// signVectors holds the randomization distribution of Σ_g s_g(d_g − δ) as
// two numbers per sign vector s: a_s = Σ s_g d_g and b_s = Σ s_g, so that
// the statistic at δ is a_s − δ·b_s.
type signVectors struct {
	a, b  []float64
	exact bool
	sumD  float64 // Σ d_g (the identity's a)
	g     int
	scale float64 // Σ |d_g|, for the tie tolerance
	u     float64 // the weight of the ties in limit (see p)
}

// newSignVectors enumerates all 2^G sign vectors (G ≤ maxExact, Gray-code
// order as SignFlip) or draws draws of them from rng exactly as SignFlip
// draws them (one bit of rng.Uint64 per cluster; a set bit flips).
func newSignVectors(d []float64, maxExact, draws int, rng *rand.Rand) signVectors {
	sv := signVectors{g: len(d)}
	for _, x := range d {
		sv.sumD += x
		sv.scale += math.Abs(x)
	}
	if len(d) <= maxExact {
		total := 1 << len(d)
		sv.exact = true
		sv.a, sv.b = make([]float64, total), make([]float64, total)
		s := make([]bool, len(d))
		a, b := sv.sumD, float64(len(d))
		sv.a[0], sv.b[0] = a, b
		for k := 1; k < total; k++ {
			j := bits.TrailingZeros(uint(k))
			if s[j] {
				a, b = a+2*d[j], b+2
			} else {
				a, b = a-2*d[j], b-2
			}
			s[j] = !s[j]
			sv.a[k], sv.b[k] = a, b
		}
		return sv
	}
	sv.a, sv.b = make([]float64, draws), make([]float64, draws)
	for i := range draws {
		var a, b float64
		var word uint64
		for j, x := range d {
			if j%64 == 0 {
				word = rng.Uint64()
			}
			if word&1 == 1 {
				a, b = a-x, b-1
			} else {
				a, b = a+x, b+1
			}
			word >>= 1
		}
		sv.a[i], sv.b[i] = a, b
	}
	return sv
}

// p returns the two-sided sign-flip p-value of H0: centre = delta, with
// SignFlip's counting and tie tolerance, the ties at the observed value
// weighted by u (see SignFlipInterval): with gt sign vectors whose
// statistic is above the observed one and eq that tie it,
//
//	p = (gt + u·eq)/2^G            (exact),
//	p = (gt + u·(eq + 1))/(M + 1)  (M Monte Carlo vectors; the observed
//	                                signs count as one more tie),
//
// SignFlip's p at u = 1. At δ = the mean of the values (observed
// statistic 0) it is 1 whatever u: a centre equal to the estimate is never
// rejected (with every value equal to δ the randomized p would be u).
func (sv signVectors) p(delta, u float64) float64 {
	obs := math.Abs(sv.sumD - delta*float64(sv.g))
	scale := sv.scale + math.Abs(delta)*float64(sv.g)
	tol := 1e-9 * max(scale, 1e-300)
	if obs <= tol {
		u = 1
	}
	gt, eq := 0, 0
	for i, a := range sv.a {
		switch x := math.Abs(a - delta*sv.b[i]); {
		case x > obs+tol:
			gt++
		case x >= obs-tol:
			eq++
		}
	}
	if sv.exact {
		return (float64(gt) + u*float64(eq)) / float64(len(sv.a))
	}
	return (float64(gt) + u*float64(eq+1)) / float64(len(sv.a)+1)
}

// SignFlipInterval returns the confidence interval at level conf for the
// centre δ of the cluster values d (for a paired drop, the per-template
// mean differences) by inverting the sign-flip test: the set of δ for
// which SignFlip on d_g − δ does not reject at the two-sided level
// α = 1 − conf, the randomization confidence interval of Fisher (1935, The
// Design of Experiments, §21) and Pitman (1937, "Significance tests which
// may be applied to samples from any populations", Suppl. J. R. Statist.
// Soc. 4:119–130), here with the sign vectors held fixed across δ
// (Garthwaite 1996, "Confidence intervals from randomization tests",
// Biometrics 52:1387–1393, discusses the search). Under the test's
// assumption (each d_g − δ symmetric about 0, independent across clusters)
// it covers δ with probability at least conf (exactly conf with a random
// u, below), and it excludes 0 exactly
// when the sign-flip test of 0 on the same sign vectors rejects, which
// Test reports: a verdict that needs both reads one decision.
//
// The sign vectors are all 2^G when G ≤ maxExact, else draws drawn from
// rng as SignFlip draws them, so that at u = 1 Test equals SignFlip(d,
// maxExact, draws, rng) from the same generator state. Each limit is found
// by bisection between the mean of d, where no sign vector's statistic is
// below the observed one (p = 1 at u = 1), and a point beyond the
// values (max d + range + 1 above, symmetrically below), where every
// d_g − δ has one sign and p is the test's smallest; 60 halvings; a limit
// within 1e-7 of the values' range of a value is that value. ok is
// false when G < 2, conf is not in (0, 1), every d_g is equal (the
// interval would be the single point d; report another interval), or the
// test cannot reject at α at all (its smallest p is above α: the interval
// is unbounded).
//
// u in (0, 1] weights the sign vectors whose statistic ties the observed
// one (see p). u = 1 is the non-randomized test above, whose p counts
// every tie and which rejects with probability at most α under the null,
// less where the template means tie or few are non-zero (the whole atom
// at the observed value counts against it). A u drawn uniform on (0, 1],
// independent of d, gives the randomized test of exact level α (Lehmann &
// Romano 2005, Testing Statistical Hypotheses, 3rd ed., §15.2.1: the
// observed statistic's rank among its orbit is uniform under the null, and
// the uniform breaks its ties; for Monte Carlo draws the observed signs
// are one more member of the exchangeable sample, Dufour 2006, "Monte
// Carlo tests with nuisance parameters", J. Econometrics 133:443–477, §2),
// so that the interval covers δ with probability conf under the test's
// assumption, not more. Test.P is then the randomized p and
// Test.PNonRandomized the p at u = 1; Test.U records u. A u outside (0, 1]
// is taken as 1.
//
// The randomization acts only where many sign vectors tie the observed
// statistic, at the δ that are points of the values' lattice (for means
// of 0/1 outcomes: δ = 0 among them, where the template means that are 0
// do not move the statistic); between them only the observed signs and
// their mirror image tie. There the randomized test may reject δ while
// accepting every δ beside it on one side: the set not rejected is then
// open at that limit (LoOpen, HiOpen), as at 0 when the test of a drop
// rejects and the interval reaches down to it: (0, Hi]. The interval
// excludes 0 exactly when the test of 0 rejects, in both cases.
func SignFlipInterval(d []float64, conf float64, maxExact, draws int, u float64, rng *rand.Rand) (SignFlipCI, bool) {
	g := len(d)
	if g < 2 || !(conf > 0 && conf < 1) {
		return SignFlipCI{}, false
	}
	if !(u > 0 && u <= 1) {
		u = 1
	}
	sv := newSignVectors(d, maxExact, draws, rng)
	sv.u = u
	res := SignFlipResult{P: sv.p(0, u), Exact: sv.exact, Draws: len(sv.a), Clusters: g, U: u, PNonRandomized: sv.p(0, 1)}
	if sv.exact {
		res.MinP = math.Min(1, 2/float64(len(sv.a)))
	} else {
		res.MinP = 1 / float64(len(sv.a)+1)
	}
	out := SignFlipCI{Test: res}
	lo, hi := d[0], d[0]
	for _, x := range d {
		lo, hi = min(lo, x), max(hi, x)
	}
	alpha := 1 - conf
	if hi == lo {
		return out, false
	}
	mean := sv.sumD / float64(g)
	far := hi - lo + 1
	upper, okU := sv.limit(mean, hi+far, alpha)
	lower, okL := sv.limit(mean, lo-far, alpha)
	if !okU || !okL {
		return out, false
	}
	out.Lo, out.Hi = snap(lower, d, far), snap(upper, d, far)
	// Only a limit snapped to a value or to 0 can be open: elsewhere it is
	// the bisection's, within rounding of the boundary, and the test of it
	// says nothing (at u = 1 every limit is closed).
	open := func(x float64) bool {
		return u < 1 && (x == 0 || slices.Contains(d, x)) && sv.p(x, u) <= alpha*(1+1e-12)
	}
	out.LoOpen, out.HiOpen = open(out.Lo), open(out.Hi)
	return out, true
}

// snap returns the value of d, or 0, within 1e-7·scale of x, else x:
// where values tie (template means of 0/1 outcomes often do), p jumps at δ
// equal to a value, as a sign test's limits are order statistics, and the
// bisection lands a rounding error beside it (printed as −0.0 for 0); and
// 0, the drop the verdict asks about, is where ties between sums of values
// of opposite sign ({1, −1, 1, …}: flipping a 1 and a −1 keeps the sum)
// make the randomized test reject while the drops beside it are not.
func snap(x float64, d []float64, scale float64) float64 {
	if math.Abs(x) <= 1e-7*scale {
		return 0
	}
	for _, v := range d {
		if math.Abs(x-v) <= 1e-7*scale {
			return v
		}
	}
	return x
}

// limit bisects between in (not rejected) and out (rejected at alpha) for
// the boundary of the set of δ not rejected; ok is false when out is not
// rejected.
func (sv signVectors) limit(in, out, alpha float64) (float64, bool) {
	if sv.p(out, sv.u) > alpha*(1+1e-12) {
		return 0, false
	}
	for range 60 {
		mid := (in + out) / 2
		if sv.p(mid, sv.u) > alpha*(1+1e-12) {
			in = mid
		} else {
			out = mid
		}
	}
	return (in + out) / 2, true
}
