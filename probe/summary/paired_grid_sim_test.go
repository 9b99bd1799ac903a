package summary_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
	"gonum.org/v1/gonum/stat/distuv"
)

// pairedGridCell is one cell of the paired-drop design of probe/stats
// TestCoveragePowerGrid (its gridCell): G templates of m drawn-reference
// pairs, base accuracy mu, intra-template correlation rho of the 0/1
// outcomes, true drop delta (a fraction) and, with het, a drop that
// differs between templates.
type pairedGridCell struct {
	G, m           int
	mu, rho, delta float64
	het            bool
}

func (c pairedGridCell) String() string {
	return fmt.Sprintf("G=%d m=%d base=%.0f%% rho=%.1f drop=%.0fpp het=%v", c.G, c.m, 100*c.mu, c.rho, 100*c.delta, c.het)
}

// pairedGridTrials draws one run of cell c as results.Trial rows, by the
// model of probe/stats drawGrid (written out again here, as package stats
// cannot be imported by its tests' helpers): template g has base accuracy
// p_g ~ Beta(μ(1−ρ)/ρ, (1−μ)(1−ρ)/ρ) (a Beta draw that underflows is a
// Bernoulli(μ) p_g), loss share r_g and gain share s_g (r_g = δ/μ and s_g
// = 0 without het; with het r_g ~ U(0, 2A), s_g ~ U(0, 2B), B = min(0.05,
// (μ/2 − δ)/(1 − μ)) ≥ 0, A = (δ + (1 − μ)B)/μ, so that the mean over
// templates of the true drop is δ); pair j of template g is the base trial
// and the noop trial of instance j (no question text: each instance is its
// own prompt, the drawn reference), which share one uniform with
// probability 0.7, else the variant draws its own.
func pairedGridTrials(rng *rand.Rand, c pairedGridCell, beta *distuv.Beta) []results.Trial {
	A, B := c.delta/c.mu, 0.0
	if c.het {
		B = max(0, min(0.05, (c.mu/2-c.delta)/(1-c.mu)))
		A = (c.delta + (1-c.mu)*B) / c.mu
	}
	ts := make([]results.Trial, 0, 2*c.G*c.m)
	for g := range c.G {
		p := beta.Rand()
		if math.IsNaN(p) {
			p = 0
			if rng.Float64() < c.mu {
				p = 1
			}
		}
		r, s := A, 0.0
		if c.het {
			r, s = 2*A*rng.Float64(), 2*B*rng.Float64()
		}
		tmpl := fmt.Sprintf("T%03d", g)
		for j := range c.m {
			u := rng.Float64()
			v := u
			if rng.Float64() > 0.7 {
				v = rng.Float64()
			}
			y0 := u < p
			y1 := v < p*(1-r) || (v >= p && v < p+(1-p)*s)
			ts = append(ts, tr(tmpl, summary.BaseVariant, j, y0), tr(tmpl, "noop", j, y1))
		}
	}
	return ts
}

// pairedGridCase is one cell of TestPairedDropGridSummarize: the claimed
// band of its coverage (hi = 1: no upper bound), the label Summarize must
// give its interval (Paired.IntervalCoverage) where the template means are
// not all equal (where they are: CoverageConservative), and the coverage probe/stats
// TestCoveragePowerGrid measured for the same cell over gridRuns runs of
// its own draws.
type pairedGridCase struct {
	c         pairedGridCell
	lo, hi    float64
	label     string
	gridCover float64
	gridRuns  int
}

// binomUpperLimit is the upper one-sided limit at level a of the observed
// share of n Bernoulli(p) trials: k/n for the smallest k with P(X > k) ≤ a,
// X ~ Binomial(n, p) (as probe/stats binomUpperLimit; e.g. 17/400 for p =
// a = 0.025).
func binomUpperLimit(n int, p, a float64) float64 {
	b := distuv.Binomial{N: float64(n), P: p}
	for k := int(math.Floor(p * float64(n))); k < n; k++ {
		if b.Survival(float64(k)) <= a {
			return float64(k) / float64(n)
		}
	}
	return 1
}

// binomLowerLimit is the lower one-sided limit at level a: k/n for the
// largest k with P(X < k) ≤ a (as probe/stats binomLowerLimit; 362/400 for
// p = 0.93, a = 0.025).
func binomLowerLimit(n int, p, a float64) float64 {
	b := distuv.Binomial{N: float64(n), P: p}
	for k := int(math.Ceil(p * float64(n))); k > 0; k-- {
		if b.CDF(float64(k-1)) <= a {
			return float64(k) / float64(n)
		}
	}
	return 0
}

// inInterval reports whether x lies in iv, an open limit excluded; a nil
// interval contains nothing.
func inInterval(iv *summary.Interval, x float64) bool {
	if iv == nil {
		return false
	}
	const eps = 1e-9
	above := x > iv.Lo-eps
	if iv.LoOpen {
		above = x > iv.Lo+eps
	}
	below := x < iv.Hi+eps
	if iv.HiOpen {
		below = x < iv.Hi-eps
	}
	return above && below
}

// aboveZero reports whether iv lies above 0 (an open lower limit at 0
// counts), as the verdict reads it.
func aboveZero(iv *summary.Interval) bool {
	return iv != nil && (iv.Lo > 0 || (iv.Lo == 0 && iv.LoOpen))
}

// TestPairedDropGridSummarize drives four cells of probe/stats
// TestCoveragePowerGrid end to end through Summarize: each run's
// results.Trial rows are drawn by pairedGridTrials (the grid's drawGrid
// model), summarized with the default parameters but for 999 Monte Carlo
// sign vectors (the grid's number) and 20 bootstrap resamples (the paired
// drop's interval reads none), a seed per run, and the interval Summarize
// reports for the paired drop (Paired.PairedDropPP.CI, noop against base)
// must cover the true drop at the rate the grid claims for the cell:
//
//   - 20 templates × 5 pairs, base 60%, ρ = 0.5, a 10 pp drop differing
//     between templates: the band 93–97% (nominal);
//   - 68 templates × 1 pair, base 80%, ρ = 0.1, no drop: 93–97% (nominal),
//     and signals (interval above 0 and the sign-flip test at 5%) in at
//     most binomUpperLimit(400, 2.5%, 2.5%) = 4.25% of runs;
//   - 20 templates × 5 pairs, base 20%, ρ = 0.9, a 10 pp drop: 93–98.5%
//     (the skew-corrected upper limit binds);
//   - 6 templates × 5 pairs, base 60%, ρ = 0.1, a 10 pp drop: at least 93%
//     (approximate: MOVER-Wilson with the sign-flip lower limit).
//
// Each over 400 runs, with the grid's binomial tolerances (one-sided 2.5%:
// 93% may read 90.5%, 97% 98.5%, 98.5% 99.5%); and the coverage must agree
// with the one the grid measured for the cell from its own draws (the two
// binomial shares within 2.576 standard errors of their difference), and
// from 20 templates the verdict's signal with the test's rejection, as the
// interval inverts the test; each run's interval carries the cell's
// coverage label (conservative in the runs whose template means are all
// equal). Measured: 95.5% (grid 96.8%), 95.0% (grid 95.8%; false signals
// 2.8%), 98.5% (grid 98.3%; every template mean equal in 7 runs), 98.8%
// (grid 97.8%). About 15 s of CPU time.
func TestPairedDropGridSummarize(t *testing.T) {
	const runs = 400
	cases := []pairedGridCase{
		{pairedGridCell{20, 5, 0.6, 0.5, 0.1, true}, 0.93, 0.97, summary.CoverageNominal, 0.968, 1600},
		{pairedGridCell{68, 1, 0.8, 0.1, 0, false}, 0.93, 0.97, summary.CoverageNominal, 0.958, 400},
		{pairedGridCell{20, 5, 0.2, 0.9, 0.1, false}, 0.93, 0.985, summary.CoverageNominal, 0.983, 1600},
		{pairedGridCell{6, 5, 0.6, 0.1, 0.1, false}, 0.93, 1, summary.CoverageApproximate, 0.978, 400},
	}
	for ci, k := range cases {
		c := k.c
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			t.Parallel() // each case has its own seed: the same numbers in any order
			rng := rand.New(rand.NewPCG(uint64(ci), 51))
			beta := &distuv.Beta{Alpha: c.mu * (1 - c.rho) / c.rho, Beta: (1 - c.mu) * (1 - c.rho) / c.rho, Src: rng}
			p := summary.DefaultParams(0)
			p.BootstrapResamples = 20
			p.PermutationDraws = 999
			var cover, signal, reject float64
			labels := map[string]int{}
			for run := range runs {
				p.Seed = int64(1000*ci + run)
				s, err := summary.Summarize(pairedGridTrials(rng, c, beta), p)
				if err != nil {
					t.Fatal(err)
				}
				var pd *summary.Paired
				for _, v := range s.Models[0].Variants {
					if v.Variant == "noop" {
						pd = v.Paired
					}
				}
				if pd == nil || pd.PairedDropPP == nil || pd.Test == nil {
					t.Fatalf("%s: run %d has no paired drop with its test", c, run)
				}
				e := pd.PairedDropPP
				if e.Degenerate {
					labels[pd.IntervalCoverage+" (every template mean equal)"]++
					if pd.IntervalCoverage != summary.CoverageConservative {
						t.Errorf("%s: run %d: every template mean equal, interval coverage %q", c, run, pd.IntervalCoverage)
					}
				} else {
					labels[pd.IntervalCoverage]++
					if pd.IntervalCoverage != k.label {
						t.Errorf("%s: run %d: interval coverage %q, want %q", c, run, pd.IntervalCoverage, k.label)
					}
				}
				cover += b2f(inInterval(e.CI, 100*c.delta))
				rejected := e.Value > 0 && pd.Test.PAdjusted <= 0.05
				reject += b2f(rejected)
				signal += b2f(rejected && aboveZero(e.CI))
			}
			cover, signal, reject = cover/runs, signal/runs, reject/runs
			t.Logf("%s: Summarize's interval covers the true drop in %.3f of %d runs (the grid %.3f of %d); signal %.3f, test %.3f; coverage labels %v",
				c, cover, runs, k.gridCover, k.gridRuns, signal, reject, labels)
			if lo := binomLowerLimit(runs, k.lo, 0.025); cover < lo-1e-12 {
				t.Errorf("%s: coverage %.3f below %.4f", c, cover, lo)
			}
			if k.hi < 1 {
				if hi := binomUpperLimit(runs, k.hi, 0.025); cover > hi+1e-12 {
					t.Errorf("%s: coverage %.3f above %.4f", c, cover, hi)
				}
			}
			pool := (cover*runs + k.gridCover*float64(k.gridRuns)) / float64(runs+k.gridRuns)
			if se := math.Sqrt(pool * (1 - pool) * (1/float64(runs) + 1/float64(k.gridRuns))); math.Abs(cover-k.gridCover) > 2.576*se+1e-12 {
				t.Errorf("%s: Summarize covers in %.3f, the grid's reconstruction in %.3f (SE of the difference %.4f)", c, cover, k.gridCover, se)
			}
			if c.G >= summary.DefaultFewTemplates && math.Abs(signal-reject) > 0.005 {
				t.Errorf("%s: signal in %.3f of runs, the test rejects in %.3f", c, signal, reject)
			}
			if c.delta == 0 {
				if lim := binomUpperLimit(runs, 0.025, 0.025); signal > lim+1e-12 {
					t.Errorf("%s: false signals in %.3f of runs, above %.4f", c, signal, lim)
				}
			}
		})
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
