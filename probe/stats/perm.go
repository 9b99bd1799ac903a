package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// Defaults of the sign-flip test.
const (
	// ExactMaxClusters is the largest G for which SignFlip enumerates all
	// 2^G sign vectors (65,536 at G = 16); above it, it draws
	// MonteCarloDraws random ones.
	ExactMaxClusters = 16
	// MonteCarloDraws is the number M of random sign vectors drawn above
	// ExactMaxClusters: the smallest attainable p is then 1/(M+1) = 1e-4.
	MonteCarloDraws = 9999
)

// SignFlipResult is the outcome of a sign-flip permutation test.
type SignFlipResult struct {
	// P is the two-sided p-value.
	P float64
	// Exact is true when all 2^G sign vectors were enumerated.
	Exact bool
	// Draws is the number of sign vectors the p-value is over: 2^G when
	// exact, M when Monte Carlo.
	Draws int
	// MinP is the smallest p-value the test can give at this G: 2^(1−G)
	// when exact (the observed signs and their mirror image always tie),
	// 1/(M+1) when Monte Carlo.
	MinP float64
	// Clusters is G, the number of cluster sums tested.
	Clusters int
	// U is the uniform in (0, 1] that breaks the ties at the observed
	// statistic (SignFlipInterval); 1 for the non-randomized test, whose
	// p counts every tie.
	U float64
	// PNonRandomized is the p-value with U = 1 (equal to P when U = 1):
	// the conservative p of the same sign vectors.
	PNonRandomized float64
}

// SignFlip tests whether the paired differences summed per cluster, d[g],
// are centred on 0, by flipping the sign of whole clusters: under the null
// hypothesis that within each cluster the two conditions of every pair are
// exchangeable (so each d[g] is symmetric about 0, independently across
// clusters), every sign vector s ∈ {−1, +1}^G is equally likely, and the
// statistic |Σ_g s_g d_g| of the observed signs is compared with its
// randomization distribution (Fisher 1935, The Design of Experiments, §21;
// for clustered data: Canay, Romano & Shaikh 2017, "Randomization tests
// under an approximate symmetry assumption", Econometrica 85:1013–1030).
// Testing the sum tests the pooled paired mean Σd/Σn, since the number of
// pairs is fixed under the flips.
//
// When G ≤ maxExact all 2^G sign vectors are enumerated (in Gray-code order,
// one flip per step) and p = #{s: |Σ s·d| ≥ |Σ d|}/2^G. Otherwise draws sign
// vectors are drawn from rng (one bit per cluster from rng.Uint64) and
// p = (1 + #{|Σ s·d| ≥ |Σ d|})/(draws + 1), which is a valid p-value for a
// Monte Carlo test (Phipson & Smyth 2010, "Permutation p-values should never
// be zero", Stat. Appl. Genet. Mol. Biol. 9:39). Ties are taken within
// 1e-9·Σ|d| to absorb rounding. G = 0 gives p = 1. rng may be nil when
// G ≤ maxExact.
func SignFlip(d []float64, maxExact, draws int, rng *rand.Rand) SignFlipResult {
	g := len(d)
	var obs, scale float64
	for _, x := range d {
		obs += x
		scale += math.Abs(x)
	}
	target := math.Abs(obs) - 1e-9*max(scale, 1e-300)
	if g <= maxExact {
		total := 1 << g
		count := 0
		if math.Abs(obs) >= target {
			count++ // the identity
		}
		s := make([]bool, g) // true: flipped
		sum := obs
		for k := 1; k < total; k++ {
			j := bits.TrailingZeros(uint(k))
			if s[j] {
				sum += 2 * d[j]
			} else {
				sum -= 2 * d[j]
			}
			s[j] = !s[j]
			if math.Abs(sum) >= target {
				count++
			}
		}
		p := float64(count) / float64(total)
		return SignFlipResult{P: p, Exact: true, Draws: total,
			MinP: math.Min(1, 2/float64(total)), Clusters: g, U: 1, PNonRandomized: p}
	}
	count := 0
	for range draws {
		var sum float64
		var word uint64
		for j, x := range d {
			if j%64 == 0 {
				word = rng.Uint64()
			}
			if word&1 == 1 {
				sum -= x
			} else {
				sum += x
			}
			word >>= 1
		}
		if math.Abs(sum) >= target {
			count++
		}
	}
	p := float64(count+1) / float64(draws+1)
	return SignFlipResult{P: p, Draws: draws, MinP: 1 / float64(draws+1), Clusters: g, U: 1, PNonRandomized: p}
}

// SignFlipMinClusters returns the smallest G at which an exact two-sided
// sign-flip test can reach p ≤ alpha: its smallest p is 2^(1−G), so
// G = 1 + ⌈log2(1/alpha)⌉ (6 at alpha = 0.05, 7 at 0.05/3). It returns 0 for
// alpha outside (0, 1].
func SignFlipMinClusters(alpha float64) int {
	if !(alpha > 0 && alpha <= 1) {
		return 0
	}
	g := 1
	for math.Ldexp(1, 1-g) > alpha*(1+1e-12) {
		g++
	}
	return g
}

// Holm returns Holm's step-down adjusted p-values (S. Holm, "A simple
// sequentially rejective multiple test procedure", Scand. J. Statist.
// 6:65–70, 1979), in the order of p: with p sorted ascending as
// p_(1) ≤ … ≤ p_(m),
//
//	p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j))
//
// (the adjusted form of Wright 1992, "Adjusted P-values for simultaneous
// inference", Biometrics 48:1005–1013). Rejecting every hypothesis with
// p̃ ≤ α controls the family-wise error rate at α under any dependence.
// NaN entries are not part of the family and stay NaN.
func Holm(p []float64) []float64 {
	out := make([]float64, len(p))
	var idx []int
	for i, x := range p {
		if math.IsNaN(x) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	m := len(idx)
	run := 0.0
	for j, i := range idx {
		v := math.Min(1, float64(m-j)*p[i])
		run = math.Max(run, v)
		out[i] = run
	}
	return out
}
