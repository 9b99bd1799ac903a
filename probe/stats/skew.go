package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// SkewCorrectedT returns the skewness-corrected studentized interval at
// level conf for the mean of the values d (for a paired drop, the template
// means): Johnson's modified t (Johnson 1978, "Modified t tests and
// confidence intervals for asymmetrical populations", JASA 73:536–544)
// made monotone by Hall's cubic transformation (Hall 1992, "On the removal
// of skewness by transformation", JRSS B 54:221–228; in the form of Zhou &
// Dinh 2005, "Nonparametric confidence intervals for the one- and
// two-sample problems", Biostatistics 6:187–200). With n values, mean x̄,
// s² = Σ(d − x̄)²/(n − 1), Johnson's unbiased third central moment μ̂₃ =
// n·Σ(d − x̄)³ / ((n − 1)(n − 2)) and γ̂ = μ̂₃/s³, the statistic at a centre
// μ is
//
//	T(μ) = √n·( S + γ̂S²/3 + γ̂²S³/27 + γ̂/(6n) ),   S = (x̄ − μ)/s,
//
// whose first two terms and the last are Johnson's (the Edgeworth term of
// order n^−½ of the studentized mean removed) and whose cubic term makes
// it increasing in S: S + γ̂S²/3 + γ̂²S³/27 = ((1 + γ̂S/3)³ − 1)/γ̂. So T = c
// inverts in closed form,
//
//	S(c) = (3/γ̂)·( ∛(1 + γ̂·(c/√n − γ̂/(6n))) − 1 )   (c/√n when γ̂ = 0),
//
// and the interval is [x̄ − s·S(z), x̄ − s·S(−z)] with z = Φ⁻¹((1+conf)/2),
// the normal quantile of Hall's derivation. The studentized mean of
// right-skewed values is skewed to the left (the mean and the SD rise
// together), so a symmetric interval misses the centre mostly from below
// its upper limit; this one moves both limits up for right-skewed values
// (the upper further from x̄, the lower nearer) and down for left-skewed
// ones. ok is false with fewer than 3 values, conf outside (0, 1), or no
// spread (s at rounding level).
func SkewCorrectedT(d []float64, conf float64) (lo, hi float64, ok bool) {
	n := float64(len(d))
	if len(d) < 3 || !(conf > 0 && conf < 1) {
		return 0, 0, false
	}
	var mean float64
	for _, x := range d {
		mean += x
	}
	mean /= n
	var m2, m3, scale float64
	for _, x := range d {
		e := x - mean
		m2 += e * e
		m3 += e * e * e
		scale = max(scale, math.Abs(x))
	}
	s := math.Sqrt(m2 / (n - 1))
	if !(s > 1e-12*max(1, scale)) {
		return 0, 0, false
	}
	gamma := n * m3 / ((n - 1) * (n - 2)) / (s * s * s)
	z := distuv.UnitNormal.Quantile((1 + conf) / 2)
	sAt := func(c float64) float64 {
		if math.Abs(gamma) < 1e-9 {
			return c / math.Sqrt(n)
		}
		return 3 / gamma * (math.Cbrt(1+gamma*(c/math.Sqrt(n)-gamma/(6*n))) - 1)
	}
	return mean - s*sAt(z), mean - s*sAt(-z), true
}
