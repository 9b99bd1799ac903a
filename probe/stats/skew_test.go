package stats

import "testing"

// TestSkewCorrectedT: limits from an independent Python computation
// (numpy/scipy: the statistic T(μ) of the doc comment solved for ±z by
// bisection on S, not the closed form). 19 zeros and one 0.5 (a drop
// carried by one template in 20; γ̂ = 4.472): [−0.00563, 0.17804], where
// the symmetric t interval is [−0.027, 0.077]; mirrored values mirror the
// interval; symmetric values (γ̂ = 0) give x̄ ± z·s/√n.
func TestSkewCorrectedT(t *testing.T) {
	one := make([]float64, 20)
	one[19] = 0.5
	mirror := make([]float64, 20)
	mirror[0] = -0.5
	for _, c := range []struct {
		d      []float64
		lo, hi float64
	}{
		{one, -0.005625063936836271, 0.17804081285002693},
		{mirror, -0.17804081285002687, 0.005625063936836268},
		{[]float64{0.6, 0, 0.6, 0, 0, 0}, 0.0034177785776259573, 0.5993244993838341},
		{[]float64{1, 2, 3, 4, 5}, 1.614096175650322, 4.385903824349678},
	} {
		lo, hi, ok := SkewCorrectedT(c.d, 0.95)
		if !ok || !near(lo, c.lo, 1e-9) || !near(hi, c.hi, 1e-9) {
			t.Errorf("%v: [%v, %v] %v, want [%v, %v]", c.d, lo, hi, ok, c.lo, c.hi)
		}
	}
	for _, d := range [][]float64{{1, 2}, {0, 0, 0}} {
		if _, _, ok := SkewCorrectedT(d, 0.95); ok {
			t.Errorf("%v accepted", d)
		}
	}
	if _, _, ok := SkewCorrectedT([]float64{1, 2, 4}, 1); ok {
		t.Error("confidence 1 accepted")
	}
}
