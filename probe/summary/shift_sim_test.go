package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// shiftCell is one cell of the entropy and DDC-margin shift simulation: G
// templates of m pairs, and scale 0 (no shift) or 1 (a shift of
// shiftTrue[k] in measure k on average, answer-token entropy, all-token
// entropy and DDC margin).
type shiftCell struct {
	G, m  int
	scale float64
}

func (c shiftCell) String() string {
	return fmt.Sprintf("G=%d m=%d shift=%s", c.G, c.m, map[bool]string{true: "0", false: "1"}[c.scale == 0])
}

// shiftTrue is the mean true shift of each measure at scale 1: 0.1 bits
// of answer-token and of all-token entropy, 0.01 of DDC margin (cosine).
var shiftTrue = [3]float64{0.1, 0.1, 0.01}

// shiftStrata names the three strata of each measure: all pairs, pairs
// both right, pairs both wrong.
var shiftStrata = [3]string{"all", "both right", "both wrong"}

// drawShiftPairs draws one variant's pairs of cell c. Template g has an
// accuracy p_g ~ U(0.1, 0.9); a pair's two sides share one right/wrong
// draw with probability 0.7, else draw their own (the sides exchangeable:
// no accuracy drop, so entropy's rise with wrong answers adds no mean
// shift, only spread). The entropies are skewed and correlated within a
// template and within a pair:
//
//	all-token entropy = exp(a_g + 0.4 Z_i + 0.25 Z_s) + 0.3·wrong,  a_g ~ N(ln 0.5, 0.5)
//	answer-token      = exp(b_g + 0.8 Z'_i + 0.8 Z'_s) + 0.6·wrong, b_g ~ N(ln 0.2, 0.8)
//
// (bits; Z_i shared by the pair's sides, Z_s each side's own), mostly 0.1
// to 2 bits with a long right tail; the DDC margin is bounded, c_g +
// U(−0.04, 0.04) per pair + U(−0.03, 0.03) per side, c_g ~ U(0.05, 0.15).
// The variant side adds the template's shift δ_g = scale · shiftTrue ·
// U(0, 2) (templates differ in their shift; mean shiftTrue), independent
// of right and wrong, so the true shift is scale·shiftTrue in every
// stratum.
func drawShiftPairs(rng *rand.Rand, c shiftCell) []*pairUnit {
	var pairs []*pairUnit
	for g := range c.G {
		pg := 0.1 + 0.8*rng.Float64()
		ag, bg := math.Log(0.5)+0.5*rng.NormFloat64(), math.Log(0.2)+0.8*rng.NormFloat64()
		cg := 0.05 + 0.1*rng.Float64()
		var d [3]float64
		for k := range d {
			d[k] = c.scale * shiftTrue[k] * 2 * rng.Float64()
		}
		for range c.m {
			rb := rng.Float64() < pg
			rv := rb
			if rng.Float64() >= 0.7 {
				rb, rv = rng.Float64() < pg, rng.Float64() < pg
			}
			zi, zj, ci := rng.NormFloat64(), rng.NormFloat64(), cg+0.08*(rng.Float64()-0.5)
			side := func(right bool) (ans, all, ddc float64) {
				w := b2f(!right)
				ans = math.Exp(bg+0.8*zj+0.8*rng.NormFloat64()) + 0.6*w
				all = math.Exp(ag+0.4*zi+0.25*rng.NormFloat64()) + 0.3*w
				return ans, all, ci + 0.06*(rng.Float64()-0.5)
			}
			a0, e0, m0 := side(rb)
			a1, e1, m1 := side(rv)
			q := &pairUnit{tmpl: g, copies: 1, b: b2f(rb), v: b2f(rv)}
			q.both, q.bw = b2f(rb && rv), b2f(!rb && !rv)
			q.bo, q.vo = b2f(rb && !rv), b2f(!rb && rv)
			q.ans = shiftAcc{n: 1, base: a0, vari: a1 + d[0]}
			q.all = shiftAcc{n: 1, base: e0, vari: e1 + d[1]}
			q.ddc = shiftAcc{n: 1, base: m0, vari: m1 + d[2]}
			pairs = append(pairs, q)
		}
	}
	return pairs
}

// shiftResult is what one cell measured, as shares of its runs, per
// measure k and stratum s (shiftStrata): the coverage of the reported
// interval (Estimate.CI) over the runs that report one, reported the share
// of runs that do (a stratum with no pair, or with pairs from one template
// only, has none), the coverage of the cluster-t and bootstrap percentile
// intervals over all runs (a run without one counted as not covered), and
// the runs where the shift is meaningful (shiftFlags: reported interval
// beyond ±margin and Holm-adjusted test at α); any is the runs where any of
// the nine is.
type shiftResult struct {
	cover, coverT, coverBoot, meaningful [3][3]float64
	reported                             [3][3]float64 // runs with a reported interval
	any                                  float64
}

// simulateShifts runs cell c runs times from a fixed seed through the
// summary's own code: shifts (estimates, influence, sign-flip tests,
// margins, strata), adjustShifts (Holm across the measures, and across the
// strata and measures), the joint bootstrap (estimates.finish) and
// shiftFlags, one variant per run.
func simulateShifts(c shiftCell, runs int, seed uint64) shiftResult {
	rng := rand.New(rand.NewPCG(seed, 40))
	var res shiftResult
	var ts, tsStr *tests
	for range runs {
		sm := simSummarizer(c.G)
		if ts == nil {
			ts = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(seed, PermutationStream))}
			tsStr = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(seed, StrataStream))}
		}
		sm.ts, sm.tsStr = ts, tsStr
		vs := &VariantSummary{}
		var mt modelTests
		sm.shifts(vs, drawShiftPairs(rng, c), &mt)
		sm.adjustShifts(mt)
		sm.es.finish(c.G)
		sm.shiftFlags(vs)
		any := false
		for k, sh := range []*Shift{vs.AnswerEntropyShift, vs.EntropyShift, vs.DDCMarginShift} {
			truth := c.scale * shiftTrue[k]
			in := func(iv *Interval) bool { return iv != nil && iv.Lo <= truth && truth <= iv.Hi }
			for s, st := range []*Stratum{{Shift: sh.Shift, Meaningful: sh.Meaningful}, sh.BothRight, sh.BothWrong} {
				if st == nil || st.Shift == nil {
					continue // no pair of this kind: no interval
				}
				res.reported[k][s] += b2f(st.Shift.CI != nil)
				res.cover[k][s] += b2f(in(st.Shift.CI))
				res.coverT[k][s] += b2f(in(st.Shift.ClusterT))
				res.coverBoot[k][s] += b2f(in(st.Shift.Bootstrap))
				res.meaningful[k][s] += b2f(st.Meaningful)
				any = any || st.Meaningful
			}
		}
		res.any += b2f(any)
	}
	f := float64(runs)
	for k := range 3 {
		for s := range 3 {
			if res.reported[k][s] > 0 {
				res.cover[k][s] /= res.reported[k][s] // over the runs with an interval
			}
			res.coverT[k][s] /= f
			res.coverBoot[k][s] /= f
			res.meaningful[k][s] /= f
			res.reported[k][s] /= f
		}
	}
	res.any /= f
	return res
}

// TestShiftCoverageGrid is the coverage simulation of the entropy and
// DDC-margin shifts' reported intervals (over all pairs, within pairs both
// right and within pairs both wrong) and the false-positive rate of their
// "meaningful" rule with Holm, through the summary's own code
// (simulateShifts): 6, 20 and 68 templates × 1, 5 and 10 pairs, no shift
// and a shift of 0.1 bits (entropies) and 0.01 (DDC margin)
// (drawShiftPairs), 18 cells of 400 runs, fixed seeds, the summary's
// defaults (2,000 bootstrap resamples; exact sign flips up to 16
// templates, else 9,999 Monte Carlo ones); about 75 s on a shared 2-core
// machine.
//
// Before, the reported interval was the bootstrap percentile from 20
// templates: over all pairs it covered 89.5–93.0% at 20 templates and
// 91.2–96.3% at 68, within a stratum at 68 templates 89.5–96.3% (skewed
// entropies, and a jump of the shift wherever one side's answer is
// wrong). Cluster-t on G − 1 degrees of freedom is now reported at every
// number of templates (stratum calls estimates.addClusterT).
//
// Measured at these seeds, and asserted (bands widened by 2 Monte Carlo
// SE, 2.6 points near 93% at 400 runs):
//
//   - where an interval is reported, it covers: from 20 templates
//     92.7–99.0% in every measure and stratum; at 6 templates over all
//     pairs 93.5–99.0%, within strata 91.7–98.5% (92.3–98.5% with one pair
//     per template). Asserted 93–99% in every cell.
//   - at 6 templates of one pair each a stratum (both right or both
//     wrong) holds pairs of at least two templates, and so has an
//     interval, in only 78.2–84.8% of runs (the others report the shift
//     with no interval); everywhere else in every run (asserted). Before,
//     those runs were counted as missed, which put the strata's coverage
//     there at 72.3–83.5%.
//   - false positives with no shift: any of the nine shifts (three
//     measures × all pairs, both right, both wrong; Holm within each of
//     the two families) is meaningful in at most 1.0% of runs (asserted:
//     at most 5%); at 6 templates none can be (the smallest exact p,
//     2^(1−6), times the family exceeds α).
//   - with a shift of 0.1 bits / 0.01, a single shift is meaningful in up
//     to 29.2% of runs at 20 templates and 56.2% at 68, any of the nine in
//     15.0–46.3% and 16.3–70.8%: not asserted.
func TestShiftCoverageGrid(t *testing.T) {
	const runs = 400
	se := func(p float64) float64 { return 2 * math.Sqrt(p*(1-p)/runs) }
	names := [3]string{"answer-token entropy", "all-token entropy", "DDC margin"}
	for gi, G := range []int{6, 20, 68} {
		for mi, m := range []int{1, 5, 10} {
			for di, scale := range []float64{0, 1} {
				c := shiftCell{G, m, scale}
				t.Run(fmt.Sprint(c), func(t *testing.T) {
					t.Parallel() // each cell has its own seed: the same numbers in any order
					r := simulateShifts(c, runs, uint64((gi*3+mi)*2+di))
					for k := range 3 {
						for s := range 3 {
							t.Logf("%-18s %-20s %-10s cover %.3f (cluster-t %.3f, bootstrap %.3f) with an interval %.3f meaningful %.3f",
								c, names[k], shiftStrata[s], r.cover[k][s], r.coverT[k][s], r.coverBoot[k][s], r.reported[k][s], r.meaningful[k][s])
							// strata of 6 pairs often hold one template only, and so
							// no interval
							if r.reported[k][s] < 1 && (G >= 20 || m > 1 || s == 0) {
								t.Errorf("%s %s %s: an interval in only %.3f of runs", c, names[k], shiftStrata[s], r.reported[k][s])
							}
							if r.cover[k][s] < 0.93-se(0.93) || r.cover[k][s] > 0.99+se(0.99) {
								t.Errorf("%s %s %s: coverage %.3f outside [%.3f, %.3f]", c, names[k], shiftStrata[s], r.cover[k][s], 0.93-se(0.93), 0.99+se(0.99))
							}
						}
					}
					t.Logf("%-18s any meaningful %.3f", c, r.any)
					if scale == 0 && r.any > 0.05+se(0.05) {
						t.Errorf("%s: with no shift, some shift meaningful in %.3f of runs", c, r.any)
					}
				})
			}
		}
	}
}
