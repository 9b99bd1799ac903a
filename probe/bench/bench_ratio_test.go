package bench

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRatioIntervalHand compares ratioInterval with values computed
// independently (Python, from the formula in its doc comment, t_{0.975,2}
// = 0.95/√(2·0.975·0.025) in closed form): bare 1.0, 1.1, 0.9 s and ours
// 1.02, 1.10, 0.93 s give b/a 0.98361 [0.94295, 1.02426].
func TestRatioIntervalHand(t *testing.T) {
	r, lo, hi, ok := ratioInterval([]float64{1.0, 1.1, 0.9}, []float64{1.02, 1.10, 0.93})
	if !ok {
		t.Fatal("no interval from 3 repeats")
	}
	for _, c := range []struct{ got, want float64 }{{r, 0.983606557377049}, {lo, 0.9429541882247074}, {hi, 1.0242589265293907}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("got %.12f, want %.12f", c.got, c.want)
		}
	}
	if _, lo, hi, ok := ratioInterval([]float64{1}, []float64{1.01}); ok || lo != 0 || hi != 0 {
		t.Errorf("one repeat: interval [%v, %v] ok %v, want none", lo, hi, ok)
	}
}

// TestRatioIntervalCoverage simulates bench repeats with a known b/a: each
// repeat's (a) and (b) share a machine-speed factor (sd 2%, the drift the
// interleaving cancels) and have their own noise (sd 0.5%), and (b) is
// slower by the true factor 1/ρ. Over 4,000 runs of 5 and of 10 repeats
// the 95% interval must cover ρ in 93–97% of runs.
func TestRatioIntervalCoverage(t *testing.T) {
	const runs, rho = 4000, 0.988
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{5, 10} {
		cover := 0
		for range runs {
			bare, ours := make([]float64, n), make([]float64, n)
			for r := range n {
				speed := 1 + 0.02*rng.NormFloat64()
				bare[r] = 5 * speed * (1 + 0.005*rng.NormFloat64())
				ours[r] = 5 / rho * speed * (1 + 0.005*rng.NormFloat64())
			}
			if _, lo, hi, ok := ratioInterval(bare, ours); ok && lo <= rho && rho <= hi {
				cover++
			}
		}
		c := float64(cover) / runs
		t.Logf("%d repeats: coverage %.3f", n, c)
		if c < 0.93 || c > 0.97 {
			t.Errorf("%d repeats: the 95%% interval of b/a covered the true ratio in %.3f of runs", n, c)
		}
	}
}
