package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// gridCell is one cell of the coverage and power grid: G templates of m
// pairs, base accuracy mu, within-template correlation rho of the 0/1
// outcomes, true drop delta (a fraction) and, with het, a drop that
// differs between templates.
type gridCell struct {
	G, m           int
	mu, rho, delta float64
	het            bool
}

func (c gridCell) String() string {
	return fmt.Sprintf("G=%d m=%d base=%.0f%% rho=%.1f drop=%.0fpp het=%v", c.G, c.m, 100*c.mu, c.rho, 100*c.delta, c.het)
}

// gridRun is what one simulated run gives: the per-template mean paired
// differences, the base and variant outcomes as Ratios, the per-pair
// differences per template and the phi coefficient of the pairs.
type gridRun struct {
	dbar, right      []float64 // template means; right answers per template (base + variant)
	base, vari       Ratio
	groups           [][]float64
	phi              float64
	both, bo, vo, bw float64
}

// drawGrid draws one run of the drawn-reference paired design of cell c:
// template g has base accuracy p_g ~ Beta(μ(1−ρ)/ρ, (1−μ)(1−ρ)/ρ) (the
// beta-binomial whose 0/1 outcomes have intra-template correlation ρ), a
// loss share r_g (of the pairs the base gets right, the share the variant
// gets wrong) and a gain share s_g (of those the base gets wrong, the share
// the variant gets right), so its variant accuracy is q_g = p_g(1 − r_g) +
// (1 − p_g)s_g and its drop p_g r_g − (1 − p_g)s_g. Without het, r_g =
// δ/μ and s_g = 0. With het, r_g ~ U(0, 2A) and s_g ~ U(0, 2B) with B =
// min(0.05, (μ/2 − δ)/(1 − μ)) (≥ 0) and A = (δ + (1 − μ)B)/μ, so that
// templates differ in their drop (some gain) while the mean over templates
// of the true drop is δ exactly (r_g, s_g independent of p_g). Each pair
// has its own base instance (the drawn reference) and a variant instance of
// the same problem: the two share one uniform draw with probability 0.7
// (answers to one problem are correlated), else the variant draws its own.
func drawGrid(rng *rand.Rand, c gridCell, beta *distuv.Beta) gridRun {
	run := gridRun{dbar: make([]float64, c.G), right: make([]float64, c.G), base: NewRatio(c.G), vari: NewRatio(c.G), groups: make([][]float64, c.G)}
	A, B := c.delta/c.mu, 0.0
	if c.het {
		B = max(0, min(0.05, (c.mu/2-c.delta)/(1-c.mu)))
		A = (c.delta + (1-c.mu)*B) / c.mu
	}
	var xs, ys []float64
	for g := range c.G {
		p := beta.Rand()
		if math.IsNaN(p) {
			p = b2f(rng.Float64() < c.mu)
		}
		r, s := A, 0.0
		if c.het {
			r, s = 2*A*rng.Float64(), 2*B*rng.Float64()
		}
		for range c.m {
			u := rng.Float64()
			v := u
			if rng.Float64() > 0.7 {
				v = rng.Float64()
			}
			y0 := b2f(u < p)
			y1 := b2f(v < p*(1-r) || (v >= p && v < p+(1-p)*s))
			xs, ys = append(xs, y0), append(ys, y1)
			run.base.Add(g, y0)
			run.vari.Add(g, y1)
			run.groups[g] = append(run.groups[g], y0-y1)
			run.dbar[g] += (y0 - y1) / float64(c.m)
			run.right[g] += y0 + y1
			switch {
			case y0 == 1 && y1 == 1:
				run.both++
			case y0 == 1:
				run.bo++
			case y1 == 1:
				run.vo++
			default:
				run.bw++
			}
		}
	}
	run.phi = Pearson(xs, ys)
	if run.bo == 0 && run.vo == 0 {
		run.phi = NewcombePhi(run.both, run.bo, run.vo, run.bw)
	}
	return run
}

// gridResult is what one cell measured, as shares of its runs except
// predicted (the mean over runs of PairedDropPowerInformed at the true
// drop from each run's informative templates and their components, as the
// summary passes them) and mde (the median over runs of the printed MDE,
// PairedDropMDEInformed on the same, pp).
type gridResult struct {
	cover, coverT, coverMW float64 // reported interval, cluster-t, MOVER-Wilson
	coverSF                float64 // inverted sign-flip test (when defined and the SE is positive)
	signal, reject         float64 // verdict signal (interval above 0 and test); sign-flip test alone, estimate above 0
	degenerate             float64 // every template mean equal (SE 0): MOVER-Wilson reported
	predicted, mde         float64
	floor, floorK3         float64 // with no true drop: coverage floors (see coverageFloor)
	// coverND is the reported interval's coverage over the nND runs in
	// which the template means are not all equal (SE > 0).
	coverND float64
	nND     int
	runs    int
}

// reportedInterval is the interval the summary reports for a paired drop
// (summary's estimates.finish): PairedDropInterval on MOVER-Wilson, the
// inverted sign-flip test and the skew-corrected t interval of the template
// means d, with FewTemplates = fewT.
func reportedInterval(se float64, g int, mw MOVERWilson, mwOK bool, sf SignFlipCI, sfOK bool, d []float64, fewT int) Limits {
	var skew Limits
	skew.Lo, skew.Hi, skew.OK = SkewCorrectedT(d, 0.95)
	l, _ := PairedDropInterval(g, fewT, se, Limits{Lo: mw.Lo, Hi: mw.Hi, OK: mwOK},
		Limits{Lo: sf.Lo, Hi: sf.Hi, OK: sfOK, LoOpen: sf.LoOpen, HiOpen: sf.HiOpen}, skew)
	return l
}

// gridFew is the summary's FewTemplates: from 20 templates the sign-flip
// inversion is reported, its ties broken at random.
const gridFew = 20

// tieU returns the summary's tie-breaking uniform for g templates: 1 − a
// draw from rng (in (0, 1]) from few templates, else 1 (the
// non-randomized test), as summary's signFlipCI.
func tieU(rng *rand.Rand, g, few int) float64 {
	if g < few {
		return 1
	}
	return 1 - rng.Float64()
}

// simulateCell runs cell c runs times from a fixed seed, with draws Monte
// Carlo sign vectors above ExactMaxClusters templates.
func simulateCell(c gridCell, runs, draws int, seed uint64) gridResult {
	rng := rand.New(rand.NewPCG(seed, 30))
	beta := &distuv.Beta{Alpha: c.mu * (1 - c.rho) / c.rho, Beta: (1 - c.mu) * (1 - c.rho) / c.rho, Src: rng}
	res := gridResult{runs: runs}
	var pred float64
	var mdes []float64
	n := float64(c.G * c.m)
	for range runs {
		run := drawGrid(rng, c, beta)
		d := ratioOf(run.groups).EqualWeights()
		est, _ := d.Value()
		inf, _ := d.Influence()
		se, g, _ := inf.CR1()
		if se <= 1e-12 {
			se = 0
			res.degenerate++
		}
		mw, mwOK := PairedMOVERWilson(run.base.EqualWeights(), run.vari.EqualWeights(), n, n, run.phi, 0.95)
		sf, sfOK := SignFlipInterval(run.dbar, 0.95, ExactMaxClusters, draws, tieU(rng, c.G, gridFew), rng)
		rep := reportedInterval(se, g, mw, mwOK, sf, sfOK, run.dbar, gridFew)
		res.cover += b2f(rep.Contains(c.delta))
		if se > 0 {
			res.nND++
			res.coverND += b2f(rep.Contains(c.delta))
		}
		if c.delta == 0 {
			f, k3 := coverageFloor(run.dbar)
			res.floor += f
			res.floorK3 += b2f(k3)
		}
		if tl, th, ok := ClusterT(est, se, g, 0.95); ok && se > 0 {
			res.coverT += b2f(tl <= c.delta && c.delta <= th)
		}
		res.coverMW += b2f(mwOK && mw.Lo <= c.delta && c.delta <= mw.Hi)
		res.coverSF += b2f(sfOK && se > 0 && sf.Lo <= c.delta && c.delta <= sf.Hi)
		rejected := est > 0 && sf.Test.P <= 0.05
		res.reject += b2f(rejected)
		res.signal += b2f(rep.Above(0) && rejected)
		if comp, gi, ok := informativeComponents(run.groups, run.right); ok {
			pred += PairedDropPowerInformed(c.G, gi, float64(c.m), comp, c.delta, 0.05, gridFew)
			mdes = append(mdes, 100*PairedDropMDEInformed(c.G, gi, float64(c.m), comp, 0.05, 0.8, gridFew))
		}
	}
	f := float64(runs)
	res.cover, res.coverT, res.coverMW, res.coverSF = res.cover/f, res.coverT/f, res.coverMW/f, res.coverSF/f
	res.signal, res.reject, res.degenerate = res.signal/f, res.reject/f, res.degenerate/f
	res.floor, res.floorK3 = res.floor/f, res.floorK3/f
	if res.nND > 0 {
		res.coverND /= float64(res.nND)
	}
	if len(mdes) > 0 {
		res.predicted = pred / float64(len(mdes))
		slices.Sort(mdes) // +Inf where too few templates are informative
		n := len(mdes)
		res.mde = (mdes[(n-1)/2] + mdes[n/2]) / 2
	}
	return res
}

// gridSide is the one-sided level of every Monte Carlo tolerance of
// TestCoveragePowerGrid: a cell whose true coverage (or false-signal rate)
// sits exactly at a bound lands outside the bound's tolerance at no more
// than 2.5% of seeds.
const gridSide = 0.025

// binomUpperLimit returns the upper one-sided limit at level a of the observed
// share of n independent Bernoulli(p) trials: k/n for the smallest k with
// P(X > k) ≤ a, X ~ Binomial(n, p), the exact binomial quantile (gonum's
// distuv.Binomial), not a normal approximation at some other p. For n =
// 400 and p = a = 0.025: P(X > 16) = 0.0254 and P(X > 17) = 0.0132, so
// 17/400 = 4.25% (the normal approximation p + 2·√(p(1 − p)/n) gives
// 4.06%). A share observed above it rejects "the true share is at most p"
// at level a.
func binomUpperLimit(n int, p, a float64) float64 {
	b := distuv.Binomial{N: float64(n), P: p}
	for k := int(math.Floor(p * float64(n))); k < n; k++ {
		if b.Survival(float64(k)) <= a {
			return float64(k) / float64(n)
		}
	}
	return 1
}

// binomLowerLimit returns the lower one-sided limit at level a of the observed
// share of n independent Bernoulli(p) trials: k/n for the largest k with
// P(X < k) ≤ a, X ~ Binomial(n, p). A share observed below it rejects
// "the true share is at least p" at level a.
func binomLowerLimit(n int, p, a float64) float64 {
	b := distuv.Binomial{N: float64(n), P: p}
	for k := int(math.Ceil(p * float64(n))); k > 0; k-- {
		if b.CDF(float64(k-1)) <= a {
			return float64(k) / float64(n)
		}
	}
	return 0
}

// TestBinomialLimits checks binomUpperLimit and binomLowerLimit against
// binomial tails summed by hand (exact sums of C(n, k)p^k(1 − p)^(n−k) in
// rational arithmetic, Python's fractions): Binomial(400, 0.025) has P(X >
// 16) = 0.025417 and P(X > 17) = 0.013172 (upper limit 17/400);
// Binomial(400, 0.95) has P(X < 371) = 0.019034 and P(X < 372) = 0.030705
// (lower limit 371/400); Binomial(400, 0.93) has P(X < 362) = 0.023801 and
// P(X < 363) = 0.035713 (lower limit 362/400); Binomial(400, 0.97) has
// P(X > 393) = 0.043533 and P(X > 394) = 0.019017 (upper limit 394/400);
// Binomial(400, 0.99) has P(X > 398) = 0.090478 and P(X > 399) = 0.99^400
// = 0.017951 (upper limit 399/400, so that a coverage of 100% lies above
// it); Binomial(100, 0.97) has P(X > 99) = 0.97^100 = 0.047553 > 0.025 (no
// limit below 100%); and, summed in floating point from log-gamma terms,
// Binomial(4000, 0.025) has P(X > 119) = 0.026651 and P(X > 120) =
// 0.021287 (upper limit 120/4000).
func TestBinomialLimits(t *testing.T) {
	for _, c := range []struct {
		n     int
		p     float64
		upper bool
		want  float64
	}{
		{400, 0.025, true, 17.0 / 400},
		{400, 0.95, false, 371.0 / 400},
		{400, 0.93, false, 362.0 / 400},
		{400, 0.97, true, 394.0 / 400},
		{400, 0.99, true, 399.0 / 400},
		{100, 0.97, true, 1},
		{4000, 0.025, true, 120.0 / 4000},
	} {
		got := binomLowerLimit(c.n, c.p, gridSide)
		if c.upper {
			got = binomUpperLimit(c.n, c.p, gridSide)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("n = %d, p = %v, upper %v: %v, want %v", c.n, c.p, c.upper, got, c.want)
		}
	}
}

// coverageClaim is what TestCoveragePowerGrid asserts of one cell's
// reported interval: its coverage of the true drop over all runs at least
// lo, and at most hi over the runs it counts (all of them, or with onND
// only those whose template means are not all equal, SE > 0), each with
// the binomial tolerance at gridSide over the runs counted
// (binomLowerLimit at lo, binomUpperLimit at hi). hi = 1 claims nothing;
// class names the case.
type coverageClaim struct {
	lo, hi float64
	onND   bool
	class  string
}

// The classes of coverageClaim.
const (
	classNominal      = "nominal"
	classSkew         = "skew"
	classTied         = "tied"
	classConservative = "conservative"
	classFloor        = "approximate, floor"
	classApproximate  = "approximate"
)

// skewCell reports whether cell c is one where the skew-corrected upper
// limit binds: base 20%, ρ ≥ 0.5 and a drop (the drop sits in the few
// templates whose base is near 100%, and the template means are
// right-skewed).
func skewCell(c gridCell) bool { return c.delta > 0 && c.mu == 0.2 && c.rho >= 0.5 }

// cellFloor returns the coverage floor of cell c (measured r) below 20
// templates, where one is computed: with one pair per template onePairFloor
// (the means are independent −1/0/+1: every trinomial with the drop), with
// the same drop of 0 in every template the mean over runs of coverageFloor
// (every mean symmetric about 0: the sign-flip orbits); from 20 templates
// the latter only. Either is a lower bound on the coverage of any interval
// that reads the template means, ignores their order, is not randomized
// and covers 93% under every null of its kind.
func cellFloor(c gridCell, r gridResult) (float64, bool) {
	switch {
	case c.m == 1 && c.G < gridFew:
		pp, pm := onePairProbs(c)
		return onePairFloor(c.G, pp, pm, floorA, 400, 40)
	case c.delta == 0 && !c.het:
		return r.floor, true
	}
	return 0, false
}

// coverageBounds returns cell c's claim (measured r, floor from cellFloor
// when ok):
//
//   - from 20 templates where every template mean is equal in at most 2% of
//     runs: the band 93–97% (classNominal), 93–98.5% at base 20%, ρ ≥ 0.5
//     and a drop, where the skew-corrected upper limit binds (classSkew);
//   - from 20 templates where every template mean is equal in more than 2%
//     of runs (classTied: one pair per template or ρ = 0.9): at least 93%
//     over all runs, and at most 97% (98.5% under skewCell) over the runs
//     with SE > 0. There the randomized sign-flip inversion is reported,
//     exact given the |d_g|; the runs with every mean equal are left out of
//     the upper bound, as MOVER-Wilson is reported in them and, with every
//     mean 0, no interval of positive width can leave 0 out without
//     tossing a coin;
//   - below 20 templates with one pair per template (classConservative, as
//     summary labels the case): at least 95%, and no upper bound: it covers
//     99.8–100% in every such cell, up to 4.3 points above the floor;
//   - below 20 templates with the same drop of 0 in every template
//     (classFloor): 93% to max(97%, floor + 3 points);
//   - below 20 templates otherwise (classApproximate: 5–10 pairs with a
//     drop, or a drop of 0 that differs between templates): at least 93%
//     and no upper bound, as no floor is computed.
//
// Where the floor is within 3 points of 100% the upper bound cannot fail
// (binomUpperLimit of 97% + 3 points or more over 400 runs is 100%): no
// interval of this kind can cover less there (coverageFloor,
// onePairFloor).
func coverageBounds(c gridCell, r gridResult, floor float64, ok bool) coverageClaim {
	switch {
	case c.G < gridFew && c.m == 1:
		return coverageClaim{lo: 0.95, hi: 1, class: classConservative}
	case c.G < gridFew && c.delta == 0 && !c.het:
		return coverageClaim{lo: 0.93, hi: min(1, max(0.97, floor+0.03)), class: classFloor}
	case c.G < gridFew:
		return coverageClaim{lo: 0.93, hi: 1, class: classApproximate}
	}
	hi := 0.97
	if skewCell(c) {
		hi = 0.985
	}
	if r.degenerate > 0.02 {
		return coverageClaim{lo: 0.93, hi: hi, onND: true, class: classTied}
	}
	if skewCell(c) {
		return coverageClaim{lo: 0.93, hi: hi, class: classSkew}
	}
	return coverageClaim{lo: 0.93, hi: hi, class: classNominal}
}

// upperLimit returns the largest coverage claim k accepts over the runs it
// counts (hi with its binomial tolerance) and the coverage it compares
// with it; a limit of 1 cannot fail.
func (k coverageClaim) upperLimit(r gridResult) (limit, cover float64, n int) {
	n, cover = r.runs, r.cover
	if k.onND {
		n, cover = r.nND, r.coverND
	}
	if k.hi >= 1 || n == 0 {
		return 1, cover, n
	}
	return binomUpperLimit(n, k.hi, gridSide), cover, n
}

// gridCellResult is one measured cell of the grid with its floor and claim.
type gridCellResult struct {
	c       gridCell
	r       gridResult
	floor   float64
	floorOK bool
	claim   coverageClaim
}

// TestCoveragePowerGrid is the coverage and power simulation of the paired
// drop as the summary reports it (the equal-weight mean of the template
// means; its interval PairedDropInterval: from 20 templates the inverted
// sign-flip test on those means (SignFlipInterval), randomized at ties with
// a uniform u from the run's stream (tieU), with its upper limit raised to
// the skew-corrected t's (SkewCorrectedT) where that is higher; below 20 or
// when every template mean is equal MOVER-Wilson, its lower limit lowered
// to the non-randomized sign-flip inversion's where that is defined; the
// verdict's signal = interval above 0 (an open limit at 0 counts) AND the
// sign-flip test at α = 0.05, as stats.ClassifyDrop reads them with a
// single variant): drawn-reference pairs (drawGrid), 6, 20 and 68 templates
// × 1, 5 and 10 pairs, base accuracy 20, 60 and 80%, intra-template
// correlation ρ of 0.1, 0.5 and 0.9, true drop 0 and 10 pp, with and
// without a drop that differs between templates: 324 cells of 400 runs each
// (1,600 in the 36 cells at 20 templates with 5–10 pairs and a drop, where
// the power is compared with its prediction), fixed seeds, 999 Monte Carlo
// sign vectors above 16 templates; about 2 minutes of CPU time (2 to 5
// minutes' wall time on a shared 2-core machine while other jobs ran).
// summary's TestPairedDropGridSummarize drives four of these cells end to
// end through Summarize.
//
// Every Monte Carlo tolerance is binomial, at the bound's own share and the
// runs it counts, one-sided at gridSide = 2.5% (binomLowerLimit,
// binomUpperLimit): 93% over 400 runs may read 90.5%, 95% 92.75%, 97%
// 98.5%, 99% 99.75% (so 100% fails), and a false-signal rate of 2.5% 4.25%
// (17 of 400 runs). The cells are asserted one by one (checkCell), and the
// ranges and medians over classes of cells that the README and
// summary.PairedDropCoverageMeasured print are asserted to their printed
// precision (gridClaims), so that a change that moves them fails. Measured
// at these seeds, and asserted:
//
//   - coverage within coverageBounds. From 20 templates 92.7–99.8% (median
//     95.6%) over the 216 cells: 92.7–97.8% (median 95.3%) in the 146 cells
//     where every template mean is equal in at most 2% of runs and the
//     skew-corrected limit does not bind, the band 93–97% within the Monte
//     Carlo error; 94.3–99.8% in the 50 cells where every template mean is
//     equal in more than 2% of runs (one pair per template or ρ = 0.9:
//     MOVER-Wilson is reported there, and with every mean 0 no interval of
//     positive width leaves 0 out without a coin excluding it), 92.3–99.2%
//     over their runs with SE > 0, where the upper bound is asserted (97%,
//     98.5% under skewCell); 94.4–99.3% at base 20% with ρ ≥ 0.5 and a 10 pp
//     drop (the drop sits in the few templates whose base is near 100%: the
//     template means are right-skewed, and a run with fewer of those
//     templates than the population puts the sign-flip inversion wholly below
//     the drop, 86.2–96.5% alone; cluster-t 86.5–91.2% at 20: the
//     skew-corrected upper limit closes the gap from above). Every cell from
//     20 templates has an upper bound that can fail except 3 with one pair
//     per template, ρ = 0.9 and no drop, where every template mean is equal
//     in 74–84% of runs and the 65–104 runs left are too few for a bound of
//     97% (a coverage of 100% over fewer than 121 runs is within its
//     tolerance); below 20 templates it cannot fail in any of the 108 cells
//     (one pair per template: no upper bound; a drop of 0 in every template:
//     the floor is within 3 points of 100%; otherwise no floor is computed):
//     111 cells in all, asserted, against 175 when every bound had a
//     tolerance of 2.2 points, computed at 95%. The non-randomized test (u =
//     1, every tie counted against the drop) covered 93.2–100% (median 97.3%)
//     from 20 templates when it was measured (before the test was randomized;
//     not re-run here), above 97% + 2.2 points in 29 of the 54 cells with the
//     same drop of 0 in every template, 25 of them forced: with few non-zero
//     template means or many tied ones (means of 0/1 outcomes are multiples
//     of 1/m), the orbit has too few classes for any non-randomized interval
//     that reads the template means and ignores their order to cover less
//     (coverageFloor: 97% or more in 26 of the 54 cells, asserted), which is
//     why the test is randomized. A mid-p test (Lancaster 1961, "Significance
//     tests in discrete distributions", JASA 56:223–234) also covered less
//     but is not exact (with 5 equal non-zero template means it rejects 6.25%
//     of the orbit at α = 5%; false signals up to 4.0%); breaking the ties by
//     the count of means of each sign raised the power by at most 4.3 points.
//     Below 20 templates the reported interval (MOVER-Wilson with its lower
//     limit lowered to the sign-flip inversion's) is conservative with one
//     pair per template (99.8–100%; cluster-t 4.5–79.5% and the exact
//     sign-flip inversion 4.5–65.5%, both often of zero width) and covers
//     94.0–100% with 5–10 (median 99.4%; MOVER-Wilson alone 87.3–100%,
//     cluster-t 20.5–97.5%, sign-flip inversion 20.5–100%). Little of that is
//     the interval's own: in the 54 cells at 6 templates where a floor is
//     computed (cellFloor), no exact interval that reads the template means,
//     ignores their order and is not randomized can cover less than
//     95.7–100%, and less than 97% in only 5 of them (floors 95.7–96.8%: four
//     with one pair and a drop, one with 10 pairs and none), where the
//     reported interval covers at most 4.3 points above the floor; in the
//     other 54 (5–10 pairs with a drop, or a drop of 0 that differs between
//     templates) it covers 94.0–100% (median 99.0%) and no floor is computed.
//     Before the effective sample size of a proportion of 0 or 1 took the
//     clusters into account (pairedEffectiveN) and before the sign-flip lower
//     limit, MOVER-Wilson covered 70.8–93.2% at base 20%, ρ = 0.9 and a 10 pp
//     drop and 88.2% at 6 templates × 5 pairs there.
//   - the verdict agrees with the test from 20 templates: the share of runs
//     with a signal is within half a point of the share where the sign-flip
//     test rejects with the estimate above 0 (measured: equal in every cell,
//     as the interval inverts that test on the same sign vectors and u, an
//     open limit at 0 where only the tie at 0 is rejected).
//   - false signals: with no true drop a cell's signals (a one-sided
//     rejection at 2.5%) may exceed 2.5% only within the binomial tolerance,
//     binomUpperLimit(runs, 2.5%, 2.5%): 17 of 400 runs, 4.25%. A cell above
//     it is run again with 4,000 runs from another seed, where the limit is
//     3.0% (120 of 4,000), and fails if it is above that too: with 162 cells
//     at a one-sided 2.5% each, a cell or more is expected above the first
//     limit by chance alone. Measured 0–4.5% (median 1.8%); from 20 templates
//     0.3–4.5% (median 2.2%), the one cell above 4.25% (68 templates × 10
//     pairs, base 80%, ρ = 0.1, 4.5%) 2.7% over its 4,000 further runs. And
//     over the 108 no-drop cells from 20 templates together (43,200 runs,
//     where the randomized test is exact) the share of signals is at most
//     binomUpperLimit(43,200, 2.5%, 2.5%) = 2.65%: measured 2.24%.
//   - power against the printed MDE, from 20 templates: the prediction is the
//     mean over runs of PairedDropPowerInformed at the true drop from each
//     run's informative templates (those solved in some pair on either side)
//     and the variance components of their pairs (informativeComponents), as
//     the summary passes them (the function whose inverse,
//     PairedDropMDEInformed, the summary prints; 80% where the printed MDE
//     equals the true drop); from 20 templates it is that of the randomized
//     test (no continuity correction; the randomized sign test with one pair
//     per template). In every cell with one pair per template, and with 5 or
//     10 pairs where the prediction is 50% or more, the verdict's power is
//     within 7 points below and 11 above it (measured −6.1 to +5.3 points
//     with one pair; −4.6 to +9.3 with 5–10 pairs: −0.1 to +1.8 at 68
//     templates, −4.6 to +9.3, median +3.7, at 20, where the central t on G'
//     − 1 degrees of freedom is conservative for the randomized sign-flip
//     test, as Efron (1969, "Student's t-test under symmetry conditions",
//     JASA 64:1278–1302) showed the t-test to be under the sign-flip
//     symmetry, the largest at 20 × 5, base 80%, ρ = 0.9, 89.5% against
//     80.2%; normal quantiles instead were −11.6 to +4.9 off there, median
//     −1.1; 72.1–89.5%, median 82.5%, in the cells whose median printed MDE
//     is 9–11 pp). The 400 runs give a Monte Carlo SE of 2.5 points at 50%,
//     the 1,600 at 20 templates 1.25; with 400 there the range was −5.1 to
//     +10.2. With the non-randomized test the prediction counted the
//     lattice's continuity correction (latticeShift) and was −2.5 to +8.1
//     points off; before it rested on the informative templates' own
//     components it was −11.5 to +12.6 points off. Where fewer templates are
//     informative than the non-randomized test needs to reach α at all
//     (SignFlipMinClusters) the power is taken as 0 and the printed MDE +Inf.
//     Below 20 templates it is not checked: the printed MDE is far above the
//     10 pp drop there.
func TestCoveragePowerGrid(t *testing.T) {
	const runs, powerRuns, recheck = 400, 1600, 10
	var all []gridCellResult
	for gi, G := range []int{6, 20, 68} {
		for mi, m := range []int{1, 5, 10} {
			for ui, mu := range []float64{0.2, 0.6, 0.8} {
				for ri, rho := range []float64{0.1, 0.5, 0.9} {
					for di, delta := range []float64{0, 0.1} {
						for hi, het := range []bool{false, true} {
							c := gridCell{G, m, mu, rho, delta, het}
							seed := uint64(((((gi*3+mi)*3+ui)*3+ri)*2+di)*2 + hi)
							n := runs
							if G == 20 && delta > 0 && m > 1 {
								n = powerRuns
							}
							x := gridCellResult{c: c, r: simulateCell(c, n, 999, seed)}
							x.floor, x.floorOK = cellFloor(c, x.r)
							x.claim = coverageBounds(c, x.r, x.floor, x.floorOK)
							checkCell(t, x)
							if c.delta == 0 && x.r.signal > binomUpperLimit(n, 0.025, gridSide)+1e-12 {
								again := simulateCell(c, recheck*n, 999, seed+1000)
								lim := binomUpperLimit(recheck*n, 0.025, gridSide)
								t.Logf("%-44s false signals %.4f over %d further runs (limit %.4f)", c, again.signal, recheck*n, lim)
								if again.signal > lim+1e-12 {
									t.Errorf("%s: false signals in %.3f of %d runs and %.4f of %d more (limits %.4f, %.4f)",
										c, x.r.signal, n, again.signal, recheck*n, binomUpperLimit(n, 0.025, gridSide), lim)
								}
							}
							all = append(all, x)
						}
					}
				}
			}
		}
	}
	// Pooled false signals from 20 templates.
	var sig float64
	nPool := 0
	for _, x := range all {
		if x.c.delta == 0 && x.c.G >= gridFew {
			sig += x.r.signal * float64(x.r.runs)
			nPool += x.r.runs
		}
	}
	lim := binomUpperLimit(nPool, 0.025, gridSide)
	t.Logf("false signals from %d templates, pooled: %.4f of %d runs (limit %.4f)", gridFew, sig/float64(nPool), nPool, lim)
	if sig/float64(nPool) > lim+1e-12 {
		t.Errorf("false signals from %d templates, pooled: %.4f of %d runs, above %.4f", gridFew, sig/float64(nPool), nPool, lim)
	}
	// Upper bounds that cannot fail.
	vacuous, vacuous20 := 0, 0
	for _, x := range all {
		if l, _, _ := x.claim.upperLimit(x.r); l >= 1 {
			vacuous++
			if x.c.G >= gridFew {
				vacuous20++
			}
		}
	}
	t.Logf("%d cells, %d of them with an upper coverage bound that cannot fail (%d from %d templates)", len(all), vacuous, vacuous20, gridFew)
	if vacuous > 111 || vacuous20 > 3 {
		t.Errorf("%d cells (%d from %d templates) have an upper coverage bound that cannot fail; 111 (3) were measured", vacuous, vacuous20, gridFew)
	}
	checkGridClaims(t, all)
}

// checkCell logs one cell's row and asserts its own claims (see
// TestCoveragePowerGrid): coverage within coverageBounds, the verdict in
// agreement with the test, and the verdict's power against its prediction.
func checkCell(t *testing.T, x gridCellResult) {
	t.Helper()
	c, r, k := x.c, x.r, x.claim
	t.Logf("%-44s cover %.3f (cluster-t %.3f, MOVER-Wilson %.3f, sign-flip %.3f, SE 0 in %.2f; %.3f over the %d runs with SE > 0) signal %.3f test %.3f predicted %.3f MDE %.1f pp",
		c, r.cover, r.coverT, r.coverMW, r.coverSF, r.degenerate, r.coverND, r.nND, r.signal, r.reject, r.predicted, r.mde)
	if x.floorOK {
		t.Logf("%-44s coverage floor of a non-randomized interval %.4f (at most 3 non-zero template means in %.3f of runs)", c, x.floor, r.floorK3)
	}
	lo := binomLowerLimit(r.runs, k.lo, gridSide)
	hi, cover, n := k.upperLimit(r)
	t.Logf("%-44s %s: coverage at least %.4f, at most %.4f over %d runs", c, k.class, lo, hi, n)
	if r.cover < lo-1e-12 {
		t.Errorf("%s (%s): coverage %.3f below %.4f", c, k.class, r.cover, lo)
	}
	if cover > hi+1e-12 {
		t.Errorf("%s (%s): coverage %.3f over %d runs above %.4f", c, k.class, cover, n, hi)
	}
	if c.G >= gridFew && math.Abs(r.signal-r.reject) > 0.005 {
		t.Errorf("%s: signal %.3f but the test rejects in %.3f: the interval and the test disagree", c, r.signal, r.reject)
	}
	if c.delta > 0 && c.G >= gridFew && (r.predicted >= 0.5 || c.m == 1) {
		const short, over = 0.07, 0.11
		if r.signal < r.predicted-short || r.signal > r.predicted+over {
			t.Errorf("%s: verdict power %.3f against %.3f predicted by the printed components", c, r.signal, r.predicted)
		}
	}
}

// gridClaim is a range (and a median) over a class of cells of
// TestCoveragePowerGrid that this file, the README and
// summary.PairedDropCoverageMeasured print, in percent (or points): the
// class must hold cells cells (when not 0) and its smallest and largest
// values and median must round to lo, hi and median at 0.1 (NaN: not
// printed).
type gridClaim struct {
	what           string
	in             func(x gridCellResult) bool
	stat           func(x gridCellResult) float64
	cells          int
	lo, hi, median float64
}

// logged is a share as checkCell logs it (%.3f), in percent: the grid's
// table, over which the printed ranges and medians are taken.
func logged(x float64) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%.3f", x), 64)
	return 100 * v
}

// gridClaims are the printed ranges and medians of TestCoveragePowerGrid,
// over the cells' shares as logged (logged; a difference of two shares is
// the difference of the logged ones).
func gridClaims() []gridClaim {
	nan := math.NaN()
	from20 := func(x gridCellResult) bool { return x.c.G >= gridFew }
	cover := func(x gridCellResult) float64 { return logged(x.r.cover) }
	coverT := func(x gridCellResult) float64 { return logged(x.r.coverT) }
	coverSF := func(x gridCellResult) float64 { return logged(x.r.coverSF) }
	coverMW := func(x gridCellResult) float64 { return logged(x.r.coverMW) }
	signal := func(x gridCellResult) float64 { return logged(x.r.signal) }
	gain := func(x gridCellResult) float64 { return logged(x.r.signal) - logged(x.r.predicted) }
	floor := func(x gridCellResult) float64 { return logged(x.floor) }
	tied := func(x gridCellResult) bool { return from20(x) && x.r.degenerate > 0.02 }
	nominal := func(x gridCellResult) bool { return from20(x) && !tied(x) && !skewCell(x.c) }
	skew := func(x gridCellResult) bool { return from20(x) && skewCell(x.c) }
	power := func(x gridCellResult) bool {
		return from20(x) && x.c.delta > 0 && x.c.m > 1 && x.r.predicted >= 0.5
	}
	six1 := func(x gridCellResult) bool { return x.c.G < gridFew && x.c.m == 1 }
	six5 := func(x gridCellResult) bool { return x.c.G < gridFew && x.c.m > 1 }
	sixFloor := func(x gridCellResult) bool { return x.c.G < gridFew && x.floorOK }
	noDrop := func(x gridCellResult) bool { return x.c.delta == 0 }
	return []gridClaim{
		{"coverage from 20 templates", from20, cover, 216, 92.7, 99.8, 95.6},
		{"coverage, nominal cells", nominal, cover, 146, 92.7, 97.8, 95.3},
		{"coverage, every mean equal in > 2% of runs", tied, cover, 50, 94.3, 99.8, nan},
		{"coverage over the runs with SE > 0, every mean equal in > 2% of runs", tied,
			func(x gridCellResult) float64 { return logged(x.r.coverND) }, 50, 92.3, 99.2, nan},
		{"coverage, base 20%, ρ ≥ 0.5, a drop", skew, cover, 24, 94.4, 99.3, nan},
		{"sign-flip inversion alone, base 20%, ρ ≥ 0.5, a drop", skew, coverSF, 24, 86.2, 96.5, nan},
		{"cluster-t at 20 templates, base 20%, ρ ≥ 0.5, a drop",
			func(x gridCellResult) bool { return skew(x) && x.c.G == gridFew }, coverT, 12, 86.5, 91.2, nan},
		{"coverage floor ≥ 97%, no drop in any template, from 20 templates",
			func(x gridCellResult) bool { return from20(x) && x.floorOK && x.floor >= 0.97 }, nil, 26, nan, nan, nan},
		{"false signals", noDrop, signal, 162, 0, 4.5, 1.8},
		{"false signals from 20 templates", func(x gridCellResult) bool { return from20(x) && noDrop(x) }, signal, 108, 0.3, 4.5, 2.2},
		{"power − prediction, one pair, from 20 templates",
			func(x gridCellResult) bool { return from20(x) && x.c.delta > 0 && x.c.m == 1 }, gain, 0, -6.1, 5.3, nan},
		{"power − prediction, 5–10 pairs, prediction ≥ 50%", power, gain, 0, -4.6, 9.3, nan},
		{"power − prediction, 5–10 pairs, prediction ≥ 50%, 68 templates",
			func(x gridCellResult) bool { return power(x) && x.c.G == 68 }, gain, 0, -0.1, 1.8, nan},
		{"power − prediction, 5–10 pairs, prediction ≥ 50%, 20 templates",
			func(x gridCellResult) bool { return power(x) && x.c.G == gridFew }, gain, 0, -4.6, 9.3, 3.7},
		{"power at 20 × 5, base 80%, ρ = 0.9, equal drop",
			func(x gridCellResult) bool { return x.c == gridCell{20, 5, 0.8, 0.9, 0.1, false} }, signal, 1, 89.5, 89.5, nan},
		{"prediction at 20 × 5, base 80%, ρ = 0.9, equal drop",
			func(x gridCellResult) bool { return x.c == gridCell{20, 5, 0.8, 0.9, 0.1, false} },
			func(x gridCellResult) float64 { return logged(x.r.predicted) }, 1, 80.2, 80.2, nan},
		{"power where the median printed MDE is 9–11 pp",
			func(x gridCellResult) bool {
				m, _ := strconv.ParseFloat(fmt.Sprintf("%.1f", x.r.mde), 64)
				return from20(x) && x.c.delta > 0 && m >= 9 && m <= 11
			}, signal, 12, 72.1, 89.5, 82.5},
		{"coverage below 20 templates, one pair", six1, cover, 36, 99.8, 100, nan},
		{"cluster-t below 20 templates, one pair", six1, coverT, 36, 4.5, 79.5, nan},
		{"sign-flip inversion below 20 templates, one pair", six1, coverSF, 36, 4.5, 65.5, nan},
		{"coverage below 20 templates, 5–10 pairs", six5, cover, 72, 94.0, 100, 99.4},
		{"MOVER-Wilson alone below 20 templates, 5–10 pairs", six5, coverMW, 72, 87.3, 100, nan},
		{"cluster-t below 20 templates, 5–10 pairs", six5, coverT, 72, 20.5, 97.5, nan},
		{"sign-flip inversion below 20 templates, 5–10 pairs", six5, coverSF, 72, 20.5, 100, nan},
		{"floors below 20 templates", sixFloor, floor, 54, 95.7, 100, nan},
		{"floors below 97% below 20 templates",
			func(x gridCellResult) bool { return sixFloor(x) && x.floor < 0.97 }, floor, 5, 95.7, 96.8, nan},
		{"coverage − floor where the floor is below 97%",
			func(x gridCellResult) bool { return sixFloor(x) && x.floor < 0.97 }, func(x gridCellResult) float64 { return cover(x) - floor(x) }, 5, nan, 4.3, nan},
		{"coverage below 20 templates, no floor", func(x gridCellResult) bool { return x.c.G < gridFew && !x.floorOK }, cover, 54, 94.0, 100, 99.0},
	}
}

// checkGridClaims asserts gridClaims on the measured cells: each class's
// size, and its range and median to the printed 0.1.
func checkGridClaims(t *testing.T, all []gridCellResult) {
	t.Helper()
	near := func(got, want float64) bool { return math.IsNaN(want) || math.Abs(got-want) <= 0.05+1e-9 }
	for _, g := range gridClaims() {
		var xs []float64
		for _, x := range all {
			if g.in(x) {
				if g.stat != nil {
					xs = append(xs, g.stat(x))
				} else {
					xs = append(xs, 0)
				}
			}
		}
		if len(xs) == 0 || (g.cells > 0 && len(xs) != g.cells) {
			t.Errorf("%s: %d cells, printed %d", g.what, len(xs), g.cells)
			continue
		}
		slices.Sort(xs)
		n := len(xs)
		lo, hi, med := xs[0], xs[n-1], (xs[(n-1)/2]+xs[n/2])/2
		t.Logf("%s: %d cells, %.2f to %.2f, median %.2f", g.what, n, lo, hi, med)
		if g.stat != nil && (!near(lo, g.lo) || !near(hi, g.hi) || !near(med, g.median)) {
			t.Errorf("%s: measured %.2f to %.2f (median %.2f), printed %.1f to %.1f (median %.1f)", g.what, lo, hi, med, g.lo, g.hi, g.median)
		}
	}
}

// TestIntervalAgreesWithTestClustered is the case the issue measured:
// strongly clustered templates (ρ = 0.9), base accuracy 80%, a true drop of
// 4.3 pp, 20 templates × 5 pairs (drawGrid, 2000 runs, fixed seed). The
// reported interval (whose lower limit is that of the inverted sign-flip
// test on the template means) must exclude 0 from above in as many runs
// as the sign-flip test rejects with the estimate above 0 (within half a
// point; measured: 17.6% both), so the verdict's power is the test's. MOVER-Wilson, reported there
// before, excluded 0 far less often than the test rejected (asserted: less
// than half as often; measured 1.8%), which made the verdict's real power
// far lower than the printed MDE said; cluster-t on the same means
// excluded 0 far more often (44.1%) than the test rejected, so it is not
// reported there either. About a second.
func TestIntervalAgreesWithTestClustered(t *testing.T) {
	const runs = 2000
	c := gridCell{G: 20, m: 5, mu: 0.8, rho: 0.9, delta: 0.043}
	rng := rand.New(rand.NewPCG(43, 30))
	beta := &distuv.Beta{Alpha: c.mu * (1 - c.rho) / c.rho, Beta: (1 - c.mu) * (1 - c.rho) / c.rho, Src: rng}
	n := float64(c.G * c.m)
	var rep, ct, mwEx, test float64
	for range runs {
		run := drawGrid(rng, c, beta)
		d := ratioOf(run.groups).EqualWeights()
		est, _ := d.Value()
		inf, _ := d.Influence()
		se, g, _ := inf.CR1()
		if se <= 1e-12 {
			se = 0
		}
		mw, mwOK := PairedMOVERWilson(run.base.EqualWeights(), run.vari.EqualWeights(), n, n, run.phi, 0.95)
		sf, sfOK := SignFlipInterval(run.dbar, 0.95, ExactMaxClusters, 999, tieU(rng, c.G, gridFew), rng)
		if reportedInterval(se, g, mw, mwOK, sf, sfOK, run.dbar, gridFew).Above(0) {
			rep++
		}
		if lo, _, ok := ClusterT(est, se, g, 0.95); ok && se > 0 && lo > 0 {
			ct++
		}
		if mwOK && mw.Lo > 0 {
			mwEx++
		}
		if est > 0 && sf.Test.P <= 0.05 {
			test++
		}
	}
	rep, ct, mwEx, test = rep/runs, ct/runs, mwEx/runs, test/runs
	t.Logf("G = 20, m = 5, base 80%%, ρ = 0.9, drop 4.3 pp: the reported interval excludes 0 in %.3f of runs, cluster-t in %.3f, MOVER-Wilson in %.3f; the sign-flip test rejects in %.3f (%d runs)", rep, ct, mwEx, test, runs)
	if math.Abs(rep-test) > 0.005 {
		t.Errorf("the reported interval excludes 0 in %.3f but the test rejects in %.3f", rep, test)
	}
	if mwEx >= test/2 {
		t.Errorf("MOVER-Wilson excludes 0 in %.3f, the test rejects in %.3f: the contrast that motivated cluster-t is gone", mwEx, test)
	}
}

// informativeComponents returns the variance components of the pairs of
// the informative templates (right answers > 0 on either side, as
// InformativeClusters counts them; all templates when none is) and their
// count, as the summary passes them to PairedDropMDEInformed.
func informativeComponents(groups [][]float64, right []float64) (Components, int, bool) {
	var inf [][]float64
	for g, x := range groups {
		if right[g] > 0 {
			inf = append(inf, x)
		}
	}
	if len(inf) == 0 {
		inf = groups
	}
	c, ok := VarianceComponents(inf)
	return c, InformativeClusters(right), ok
}
