package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
	runs                   int
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
	if len(mdes) > 0 {
		res.predicted = pred / float64(len(mdes))
		slices.Sort(mdes) // +Inf where too few templates are informative
		n := len(mdes)
		res.mde = (mdes[(n-1)/2] + mdes[n/2]) / 2
	}
	return res
}

// coverageBounds returns the band the reported interval's coverage of
// cell c (measured r) must fall in, before the Monte Carlo tolerance:
// 93–97% where the interval holds, and above 97% only where stated:
//
//   - below 20 templates MOVER-Wilson (with the non-randomized sign-flip
//     lower limit) is reported, and no exact interval that is not
//     randomized can cover much less there: up to max(97%, floor + 3
//     points), the floor that of any interval that reads the template
//     means, ignores their order, is not randomized and covers 93% under
//     every null of its kind: with one pair per template onePairFloor (the
//     means are independent −1/0/+1: every trinomial with the drop), with
//     more pairs and the same drop of 0 in every template coverageFloor
//     (every mean symmetric about 0: the sign-flip orbits); with more
//     pairs and a drop, or a drop of 0 that differs between templates, no
//     such floor is computed and there is no upper bound;
//   - where every template mean is equal in more than 2% of runs (SE 0:
//     MOVER-Wilson reported; with every mean 0 no interval of positive
//     width can leave 0 out without excluding it by a coin), no upper
//     bound;
//   - up to 99% where the skew-corrected upper limit binds (base 20%, ρ ≥
//     0.5 and a drop: see TestCoveragePowerGrid).
func coverageBounds(c gridCell, r gridResult) (lo, hi float64) {
	lo, hi = 0.93, 0.97
	switch {
	case c.G < gridFew && c.m == 1:
		pp, pm := onePairProbs(c)
		if f, ok := onePairFloor(c.G, pp, pm, floorA, 400, 40); ok {
			return lo, max(hi, f+0.03)
		}
		return lo, 1
	case c.G < gridFew && c.delta == 0 && !c.het:
		return lo, max(hi, r.floor+0.03)
	case c.G < gridFew, r.degenerate > 0.02:
		hi = 1
	case c.delta > 0 && c.mu == 0.2 && c.rho >= 0.5:
		hi = 0.99
	}
	return lo, hi
}

// TestCoveragePowerGrid is the coverage and power simulation of the paired
// drop as the summary reports it (the equal-weight mean of the template
// means; its interval PairedDropInterval: from 20 templates the inverted
// sign-flip test on those means (SignFlipInterval), randomized at ties with
// a uniform u from the run's stream (tieU), with its upper limit raised to
// the skew-corrected t's (SkewCorrectedT) where that is higher; below 20
// or when every template mean is equal MOVER-Wilson, its lower limit
// lowered to the non-randomized sign-flip inversion's where that is
// defined; the verdict's signal = interval above 0 (an open limit at 0
// counts) AND the sign-flip test at α = 0.05, as stats.ClassifyDrop reads
// them with a single variant): drawn-reference pairs (drawGrid), 6, 20 and
// 68 templates × 1, 5 and 10 pairs, base accuracy 20, 60 and 80%,
// intra-template correlation ρ of 0.1, 0.5 and 0.9, true drop 0 and 10 pp,
// with and without a drop that differs between templates: 324 cells of
// 400 runs each (1,600 in the 36 cells at 20 templates with 5–10 pairs and
// a drop, where the power is compared with its prediction), fixed seeds,
// 999 Monte Carlo sign vectors above 16 templates; 60–80 s on a shared
// 2-core machine.
//
// The Monte Carlo SE of a coverage near 95% over 400 runs is 1.1 points,
// so every band is widened by tol = 2 SE = 2.2 points. Measured at these
// seeds, and asserted:
//
//   - coverage within coverageBounds ± tol. From 20 templates 92.7–99.8%
//     (median 95.6%) over the 216 cells: 92.7–97.8% (median 95.3%) in the
//     149 cells where every template mean is equal in at most 2% of runs
//     and the skew-corrected limit does not bind, the band 93–97% within
//     the Monte Carlo error; 94.3–99.8% in the 47 cells where every
//     template mean is equal in more than 2% of runs (one pair per
//     template or ρ = 0.9: MOVER-Wilson is reported there, and with every
//     mean 0 no interval of positive width leaves 0 out without a coin
//     excluding it); 94.4–99.3% at base 20% with ρ ≥ 0.5 and a 10 pp drop
//     (the drop sits in the few templates whose base is near 100%: the
//     template means are right-skewed, and a run with fewer of those
//     templates than the population puts the sign-flip inversion wholly
//     below the drop, 86.2–96.5% alone; cluster-t 86.5–91.2% at 20: the
//     skew-corrected upper limit closes the gap from above).
//     The non-randomized test (u = 1, every tie counted against the drop)
//     covered 93.2–100% (median 97.3%) from 20 templates, above 97% + tol
//     in 29 of the 54 cells with the same drop of 0 in every template;
//     there, with few non-zero template means or many tied ones (means of
//     0/1 outcomes are multiples of 1/m), its orbit has too few classes
//     for any non-randomized interval that reads the template means and
//     ignores their order to cover less (coverageFloor, logged: 97% or
//     more in 25 of those cells), which is why the test is randomized. A
//     mid-p test (Lancaster 1961, "Significance tests in discrete
//     distributions", JASA 56:223–234) also covered less but is not exact
//     (with 5 equal non-zero template means it rejects 6.25% of the orbit
//     at α = 5%; false signals up to 4.0%); breaking the ties by the count
//     of means of each sign raised the power by at most 4.3 points. Below
//     20 templates the reported interval (MOVER-Wilson with its lower limit
//     lowered to the sign-flip inversion's) is conservative with one pair
//     per template (99.8–100%; cluster-t 4.5–79.5% and the exact sign-flip
//     inversion 4.5–65.5%, both often of zero width) and covers 94.0–100%
//     with 5–10 (median 99.4%; MOVER-Wilson alone 87.3–100%, cluster-t
//     20.5–97.5%, sign-flip inversion 20.5–100%). Little of that is the
//     interval's own: in the 54 cells at 6 templates where a floor is
//     computed (coverageBounds: one pair per template, onePairFloor; a
//     drop of 0 in every template, coverageFloor), no exact interval that
//     reads the template means, ignores their order and is not randomized
//     can cover less than 95.7–100%, and less than 97% in only 5 of them
//     (floors 95.7–96.9%, all with one pair and a drop), where the
//     reported interval covers at most 4.3 points above the floor; in the
//     other 54 (5–10 pairs with a drop, or a drop of 0 that differs
//     between templates) it covers 94.0–100% (median 99.0%) and no floor
//     is computed. Before the effective
//     sample size of a proportion of 0 or 1 took the clusters into account
//     (pairedEffectiveN) and before the sign-flip lower limit, MOVER-Wilson
//     covered 70.8–93.2% at base 20%, ρ = 0.9 and a 10 pp drop and 88.2%
//     at 6 templates × 5 pairs there.
//   - the verdict agrees with the test from 20 templates: the share of runs
//     with a signal is within half a point of the share where the sign-flip
//     test rejects with the estimate above 0 (measured: equal in every
//     cell, as the interval inverts that test on the same sign vectors and
//     u, an open limit at 0 where only the tie at 0 is rejected).
//   - false signals: with no true drop at most 2.5% + tol of runs give a
//     signal (measured 0–4.5%, median 1.8%; 0.3–4.5% from 20 templates).
//   - power against the printed MDE, from 20 templates: the prediction is
//     the mean over runs of PairedDropPowerInformed at the true drop from
//     each run's informative templates (those solved in some pair on either
//     side) and the variance components of their pairs
//     (informativeComponents), as the summary passes them (the function
//     whose inverse, PairedDropMDEInformed, the summary prints; 80% where
//     the printed MDE equals the true drop); from 20 templates it is that
//     of the randomized test (no continuity correction; the randomized sign
//     test with one pair per template). In every cell with one pair per
//     template, and with 5 or 10 pairs where the prediction is 50% or
//     more, the verdict's power is within 7 points below and 11 above it
//     (measured −6.1 to +5.3 points with one pair; −4.6 to +9.3 with 5–10
//     pairs: −0.1 to +1.8 at 68 templates, −4.6 to +9.3, median +3.7, at
//     20, where the central t on G' − 1 degrees of freedom is conservative
//     for the randomized sign-flip test, as Efron (1969, "Student's t-test
//     under symmetry conditions", JASA 64:1278–1302) showed the t-test to
//     be under the sign-flip symmetry, the largest at 20 × 5, base 80%, ρ =
//     0.9, 89.5% against 80.2%; normal quantiles instead were −11.6 to
//     +4.9 off there, median −1.1; 72.1–89.5%, median 82.5%, in the cells
//     whose median printed MDE is 9–11 pp). The 400 runs give a Monte
//     Carlo SE of 2.5 points at 50%, the 1,600 at 20 templates 1.25; with
//     400 there the range was −5.1 to +10.2. With the non-randomized test the
//     prediction counted the lattice's continuity correction (latticeShift)
//     and was −2.5 to +8.1 points off; before it rested on the informative
//     templates' own components it was −11.5 to +12.6 points off. Where
//     fewer templates are informative than the non-randomized test needs to
//     reach α at all (SignFlipMinClusters) the power is taken as 0 and the
//     printed MDE +Inf. Below 20 templates it is not checked: the printed
//     MDE is far above the 10 pp drop there.
func TestCoveragePowerGrid(t *testing.T) {
	const runs, powerRuns = 400, 1600
	tol := 2 * math.Sqrt(0.95*0.05/runs)
	cells := 0
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
							checkCell(t, c, simulateCell(c, n, 999, seed), tol)
							cells++
						}
					}
				}
			}
		}
	}
	t.Logf("%d cells of %d runs", cells, runs)
}

// checkCell logs one cell's row and asserts its claims (see
// TestCoveragePowerGrid).
func checkCell(t *testing.T, c gridCell, r gridResult, tol float64) {
	t.Helper()
	t.Logf("%-44s cover %.3f (cluster-t %.3f, MOVER-Wilson %.3f, sign-flip %.3f, SE 0 in %.2f) signal %.3f test %.3f predicted %.3f MDE %.1f pp",
		c, r.cover, r.coverT, r.coverMW, r.coverSF, r.degenerate, r.signal, r.reject, r.predicted, r.mde)
	if c.delta == 0 {
		t.Logf("%-44s coverage floor of a non-randomized interval %.3f (at most 3 non-zero template means in %.3f of runs)", c, r.floor, r.floorK3)
	}
	lo, hi := coverageBounds(c, r)
	if c.G < gridFew {
		t.Logf("%-44s coverage upper bound %.3f", c, hi)
	}
	if r.cover < lo-tol || r.cover > hi+tol {
		t.Errorf("%s: coverage %.3f outside [%.3f, %.3f]", c, r.cover, lo-tol, hi+tol)
	}
	if c.G >= 20 && math.Abs(r.signal-r.reject) > 0.005 {
		t.Errorf("%s: signal %.3f but the test rejects in %.3f: the interval and the test disagree", c, r.signal, r.reject)
	}
	if c.delta == 0 && r.signal > 0.025+tol {
		t.Errorf("%s: false signals in %.3f of runs", c, r.signal)
	}
	if c.delta > 0 && c.G >= 20 && (r.predicted >= 0.5 || c.m == 1) {
		const short, over = 0.07, 0.11
		if r.signal < r.predicted-short || r.signal > r.predicted+over {
			t.Errorf("%s: verdict power %.3f against %.3f predicted by the printed components", c, r.signal, r.predicted)
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
