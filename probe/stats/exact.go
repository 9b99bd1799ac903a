package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// ClopperPearson returns the Clopper–Pearson interval of a binomial
// proportion from k successes of n trials at the given confidence, as
// fractions in [0, 1] (Clopper & Pearson 1934, "The use of confidence or
// fiducial limits illustrated in the case of the binomial", Biometrika
// 26:404–413), from the Beta quantiles (gonum's distuv.Beta):
//
//	lo = B⁻¹(α/2; k, n − k + 1)   (0 when k = 0)
//	hi = B⁻¹(1 − α/2; k + 1, n − k)   (1 when k = n)
//
// with α = 1 − confidence. Each side misses with probability at most α/2
// for a binomial count. k and n may be fractional (an effective count,
// p·n_eff, as Korn & Graubard 1998 use it for clustered data). It returns
// ok = false when n ≤ 0, k is outside [0, n] or confidence is not in
// (0, 1).
func ClopperPearson(k, n, confidence float64) (lo, hi float64, ok bool) {
	if !(n > 0) || math.IsInf(n, 0) || !(k >= 0 && k <= n) || !(confidence > 0 && confidence < 1) {
		return 0, 0, false
	}
	a := (1 - confidence) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: k, Beta: n - k + 1}.Quantile(a)
	}
	if k < n {
		hi = distuv.Beta{Alpha: k + 1, Beta: n - k}.Quantile(1 - a)
	}
	return lo, hi, true
}
