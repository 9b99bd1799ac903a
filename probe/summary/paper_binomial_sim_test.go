package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"gonum.org/v1/gonum/stat"
)

// TestPaperBinomialSDSimulated checks PaperRow.BinomialSDPct by simulation
// (paperRow on drawn trials): N = 12 templates of fixed accuracies p_g
// from 5% to 95%, n = 4 datasets, each template's outcome an independent
// Bernoulli(p_g) in every dataset, 10,000 runs (fixed seed). Under that
// independence the expected squares of SDPct and BinomialSDPct are both
// 100²·Σ_g p_g(1 − p_g)/N² (the variance of a mean of independent
// Bernoulli variables), and each run's mean square is asserted within 4
// Monte Carlo SE of it; the plug-in p_g(1 − p_g) without the n/(n − 1)
// factor would be 3/4 of it, far outside. In every run SDPct² −
// BinomialSDPct² must equal 100²·2/N² times the sum over pairs of
// templates of their outcomes' sample covariances across datasets,
// computed independently with gonum's stat.Covariance. Under a dataset
// effect (every template's p_g shifted by the same ±10 points in a
// dataset) the datasets vary more than independent templates would: the
// mean SDPct² must exceed the mean BinomialSDPct² by more than 4 SE.
// Measured: 142.9 (SE 1.1) and 141.9 (SE 0.3) against 141.9 under
// independence; 228.6 against 144.6 under the dataset effect. A few
// seconds.
func TestPaperBinomialSDSimulated(t *testing.T) {
	const N, n, runs = 12, 4, 10000
	ps := make([]float64, N)
	var truth float64
	for g := range ps {
		ps[g] = 0.05 + 0.9*float64(g)/float64(N-1)
		truth += ps[g] * (1 - ps[g])
	}
	truth *= 1e4 / N / N
	spec := [3]string{PaperSymbolic, "symbolic", "symbolic"}
	for _, shift := range []float64{0, 0.1} {
		rng := rand.New(rand.NewPCG(7, uint64(100*shift)))
		var sd2, bin2, sdSq, binSq float64
		for run := range runs {
			rows := make([]*results.Trial, 0, N*n)
			y := make([][]float64, N)
			for j := range n {
				s := shift
				if rng.Float64() < 0.5 {
					s = -shift
				}
				for g := range N {
					ok := rng.Float64() < min(1, max(0, ps[g]+s))
					rows = append(rows, &results.Trial{TemplateID: fmt.Sprintf("T%02d", g), Variant: "symbolic", Instance: j, Correct: ok})
					y[g] = append(y[g], b2f(ok))
				}
			}
			r := paperRow(spec, rows, 0.95)
			a, b := *r.SDPct**r.SDPct, *r.BinomialSDPct**r.BinomialSDPct
			sd2, bin2, sdSq, binSq = sd2+a, bin2+b, sdSq+a*a, binSq+b*b
			if run < 2000 {
				var cov float64
				for g := range N {
					for h := g + 1; h < N; h++ {
						cov += stat.Covariance(y[g], y[h], nil)
					}
				}
				if want := 1e4 * 2 / N / N * cov; math.Abs(a-b-want) > 1e-6 {
					t.Fatalf("run %d: sd² − binomial sd² = %v, 2/N² Σ cov = %v", run, a-b, want)
				}
			}
		}
		sd2, bin2 = sd2/runs, bin2/runs
		seSD := math.Sqrt((sdSq/runs - sd2*sd2) / runs)
		seBin := math.Sqrt((binSq/runs - bin2*bin2) / runs)
		t.Logf("shift ±%.0f points: mean sd² %.2f (SE %.2f), mean binomial sd² %.2f (SE %.2f), independence %.2f", 100*shift, sd2, seSD, bin2, seBin, truth)
		if shift == 0 && (math.Abs(sd2-truth) > 4*seSD || math.Abs(bin2-truth) > 4*seBin) {
			t.Errorf("independent templates: mean sd² %.2f, mean binomial sd² %.2f, want both %.2f", sd2, bin2, truth)
		}
		if shift > 0 && sd2-bin2 < 4*math.Hypot(seSD, seBin) {
			t.Errorf("a dataset effect: mean sd² %.2f, mean binomial sd² %.2f", sd2, bin2)
		}
	}
}
