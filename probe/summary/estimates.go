package summary

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fragility/fragility/probe/stats"
)

// estimates registers estimates whose bootstrap intervals are computed in
// one joint bootstrap at the end.
type estimates struct {
	p     *Params
	items []*pendingEstimate
}

type pendingEstimate struct {
	e        *Estimate
	boot     stats.Statistic
	lo, hi   float64 // the statistic's range, for clipping cluster-t
	fallback *Interval
	clusterT bool // report cluster-t at every number of templates (addClusterT)
	minG     int  // below this many templates no interval is reported (addHeavyTailed)
}

// add returns the estimate of a statistic with value v, its cluster
// influence (in the unit of v), its bootstrap statistic, the range [lo, hi]
// it can take, and the interval to report when the clustered ones are
// degenerate (may be nil).
func (es *estimates) add(v float64, inf stats.Influence, boot stats.Statistic, lo, hi float64, fallback *Interval) *Estimate {
	e := &Estimate{Value: v, Clusters: inf.Clusters()}
	if se, g, ok := inf.CR1(); ok {
		// An SE at the level of rounding error (every template gave the
		// same value, up to the last bits) is 0.
		if se <= 1e-12*max(1, math.Abs(v)) {
			se = 0
		}
		e.SE = &se
		if l, h, ok := stats.ClusterT(v, se, g, es.p.Confidence); ok && se > 0 {
			e.ClusterT = &Interval{Lo: max(lo, l), Hi: min(hi, h), Method: MethodClusterT}
		}
	}
	es.items = append(es.items, &pendingEstimate{e: e, boot: boot, lo: lo, hi: hi, fallback: fallback})
	return e
}

// addClusterT is add for an estimate whose reported interval is cluster-t
// at every number of templates, never the bootstrap percentile (which is
// still computed and recorded): the answer log-probability shift, whose
// heavy-tailed per-pair shifts (most near 0, a few of −5 to −20 nats) the
// percentile bootstrap under-covers from 20 templates (87.6–92.0% at 20,
// 91.9–94.7% at 68, where cluster-t covers 93.5–98.5% and 94.4–95.5%;
// TestAnswerLogProbCoverageGrid), and the entropy and DDC-margin shifts
// and their within-stratum versions, whose skewed per-pair shifts it
// under-covers likewise (89.5–93.0% at 20 templates, 89.5–96.3% at 68,
// where cluster-t covers 92.7–99.0%; TestShiftCoverageGrid).
func (es *estimates) addClusterT(v float64, inf stats.Influence, boot stats.Statistic, lo, hi float64, fallback *Interval) *Estimate {
	e := es.add(v, inf, boot, lo, hi, fallback)
	es.items[len(es.items)-1].clusterT = true
	return e
}

// addHeavyTailed is addClusterT for the answer log-probability shift,
// whose interval is withheld (CI nil, NoCI saying why) below
// Params.FewTemplates templates: its per-pair shifts are mostly near 0 with
// a few collapses of −5 to −20 nats, and a shift that lives in those
// collapses is missed by any interval built from a handful of templates
// that hold none (TestAnswerLogProbCoverageGrid: cluster-t covered 78.6% at
// 6 templates of one pair and 92.9% with 5; Cameron & Miller 2015, §VI, on
// few clusters). The estimate, its SE and its sign-flip test stay.
func (es *estimates) addHeavyTailed(v float64, inf stats.Influence, boot stats.Statistic) *Estimate {
	e := es.addClusterT(v, inf, boot, math.Inf(-1), math.Inf(1), nil)
	es.items[len(es.items)-1].minG = es.p.FewTemplates
	return e
}

// finish runs the joint bootstrap over g templates and sets every
// estimate's Bootstrap and reported CI.
func (es *estimates) finish(g int) {
	fs := make([]stats.Statistic, len(es.items))
	for i, it := range es.items {
		fs[i] = it.boot
	}
	var reps [][]float64
	if g > 0 && len(fs) > 0 {
		reps = stats.JointBootstrap(g, es.p.BootstrapResamples, rand.New(rand.NewPCG(uint64(es.p.Seed), BootstrapStream)), fs)
	}
	for i, it := range es.items {
		e := it.e
		if reps != nil {
			if lo, hi, ok := stats.Percentile(reps[i], es.p.Confidence); ok {
				e.Bootstrap = &Interval{Lo: lo, Hi: hi, Method: MethodBootstrap, Replicates: len(reps[i])}
			}
		}
		degenerate := e.SE == nil || *e.SE == 0 || e.ClusterT == nil
		switch {
		case e.MOVERWilson != nil:
			e.Degenerate = degenerate
			e.CI = pairedDropCI(e, degenerate, es.p.FewTemplates)
		case degenerate:
			e.Degenerate = true
			e.CI = it.fallback
		case e.Clusters < es.p.FewTemplates || e.Bootstrap == nil || it.clusterT:
			e.CI = e.ClusterT
		default:
			e.CI = e.Bootstrap
		}
		if e.Clusters < it.minG && !e.Degenerate {
			e.CI = nil
			e.NoCI = fmt.Sprintf("fewer than %d templates", it.minG)
		}
	}
}

// pairedDropCI returns the reported interval of a paired drop e: the one
// stats.PairedDropInterval picks from e's MOVER-Wilson, inverted sign-flip
// and skew-corrected t intervals (the coverage simulation of probe/stats,
// TestCoveragePowerGrid, measures that same function), named by its
// Method; cluster-t from fewT templates where the sign-flip
// inversion is undefined although the template means vary.
// Where the rule reports one of the two intervals unchanged, the result is
// that Interval itself.
func pairedDropCI(e *Estimate, degenerate bool, fewT int) *Interval {
	if !degenerate && e.Clusters >= fewT && e.SignFlip == nil {
		return e.ClusterT
	}
	se := 0.0
	if !degenerate {
		se = *e.SE
	}
	l, m := stats.PairedDropInterval(e.Clusters, fewT, se, limits(e.MOVERWilson), limits(e.SignFlip), limits(e.SkewT))
	switch m {
	case stats.DropMOVERWilson:
		return e.MOVERWilson
	case stats.DropSignFlip:
		return e.SignFlip
	case stats.DropSignFlipSkew:
		return &Interval{Lo: l.Lo, Hi: l.Hi, LoOpen: l.LoOpen, HiOpen: l.HiOpen, Method: MethodSignFlipSkew}
	case stats.DropMOVERWilsonSignFlip:
		return &Interval{Lo: l.Lo, Hi: l.Hi, LoOpen: l.LoOpen, HiOpen: l.HiOpen, Method: MethodMOVERWilsonSignFlip}
	}
	return nil
}

// limits returns iv's limits as stats.Limits (not OK when iv is nil).
func limits(iv *Interval) stats.Limits {
	if iv == nil {
		return stats.Limits{}
	}
	return stats.Limits{Lo: iv.Lo, Hi: iv.Hi, OK: true, LoOpen: iv.LoOpen, HiOpen: iv.HiOpen}
}

// tests collects sign-flip tests for their multiplicity adjustment.
type tests struct {
	p   *Params
	rng *rand.Rand
}

// signFlip tests the ratio's per-template numerators against 0: sums of
// per-pair differences, or for an equal-weight ratio (stats.Ratio.
// EqualWeights, the paired drop) the template means times a common weight,
// which is the sign-flip test of the mean of the template means; nil when
// no template holds data.
func (ts *tests) signFlip(r stats.Ratio) *Test {
	var d []float64
	for g := range r.Num {
		if r.Den[g] > 0 {
			d = append(d, r.Num[g])
		}
	}
	if len(d) == 0 {
		return nil
	}
	res := stats.SignFlip(d, ts.p.PermutationExact, ts.p.PermutationDraws, ts.rng)
	t := &Test{Method: "sign-flip, exact", P: res.P, PAdjusted: res.P, Adjustment: "none", Family: 1,
		Draws: res.Draws, MinP: res.MinP, Templates: res.Clusters}
	if !res.Exact {
		t.Method = "sign-flip, Monte Carlo"
	}
	return t
}

// signFlipCI returns the sign-flip test of an equal-weight ratio's template
// means against 0 (as signFlip, from the same generator state, so the same
// p), the interval of those means, in pp (the means times 100), that
// inverts the test on the same sign vectors (stats.SignFlipInterval),
// clipped to [−100, 100], and the skew-corrected t interval of the same
// means (stats.SkewCorrectedT, MethodSkewT), clipped likewise; each
// interval is nil where undefined (every template mean equal, or fewer
// templates than the test needs to reject; fewer than 3 templates). From
// Params.FewTemplates templates the test is randomized at ties with fixedU
// when that is in (0, 1], else with a uniform drawn from ts's stream.
func (ts *tests) signFlipCI(r stats.Ratio, fixedU float64) (*Test, *Interval, *Interval) {
	var d []float64
	for g := range r.Num {
		if r.Den[g] > 0 {
			d = append(d, 100*r.Num[g]/r.Den[g])
		}
	}
	if len(d) == 0 {
		return nil, nil, nil
	}
	if len(d) < 2 {
		return ts.signFlip(r), nil, nil
	}
	var skew *Interval
	if lo, hi, ok := stats.SkewCorrectedT(d, 1-ts.p.alpha()); ok {
		skew = &Interval{Lo: max(-100, lo), Hi: min(100, hi), Method: MethodSkewT}
	}
	u := 1.0
	switch {
	case len(d) < ts.p.FewTemplates:
	case fixedU > 0 && fixedU <= 1:
		u = fixedU
	default:
		u = 1 - ts.rng.Float64()
	}
	ci, ok := stats.SignFlipInterval(d, 1-ts.p.alpha(), ts.p.PermutationExact, ts.p.PermutationDraws, u, ts.rng)
	res := ci.Test
	t := &Test{Method: "sign-flip, exact", P: res.P, PAdjusted: res.P, Adjustment: "none", Family: 1,
		Draws: res.Draws, MinP: res.MinP, Templates: res.Clusters}
	if !res.Exact {
		t.Method = "sign-flip, Monte Carlo"
	}
	if u < 1 {
		t.Method += ", randomized at ties"
		t.TieU, t.PNonRandomized = u, res.PNonRandomized
	}
	if !ok {
		return t, nil, skew
	}
	return t, &Interval{Lo: max(-100, ci.Lo), Hi: min(100, ci.Hi), LoOpen: ci.LoOpen, HiOpen: ci.HiOpen, Method: MethodSignFlip}, skew
}

// adjust applies Holm across the tests (nil entries skipped) and records
// the adjustment's name and family size.
func adjust(alpha float64, name string, ts ...*Test) {
	var live []*Test
	var ps []float64
	for _, t := range ts {
		if t != nil {
			live = append(live, t)
			ps = append(ps, t.P)
		}
	}
	adj := stats.Holm(ps)
	for i, t := range live {
		t.PAdjusted = adj[i]
		t.Family = len(live)
		t.Adjustment = name
		if len(live) == 1 && name == "holm" {
			t.Adjustment = "none (a single test)"
		}
		t.Reachable = t.MinP*float64(t.Family) <= alpha*(1+1e-12)
	}
}

// influence returns the ratio's cluster influence scaled by scale, or an
// all-absent one over the G templates when it has none.
func (sm *summarizer) influence(r stats.Ratio, scale float64) stats.Influence {
	x, ok := r.Influence()
	if !ok {
		return stats.Influence{E: make([]float64, sm.G), Present: make([]bool, sm.G)}
	}
	return x.Combine(scale, x, 0)
}

// scaled is the bootstrap statistic of the ratio times scale.
func scaled(r stats.Ratio, scale float64) stats.Statistic {
	return func(idx []int) (float64, bool) {
		v, ok := r.At(idx)
		return scale * v, ok
	}
}

// wilsonPct is the Wilson score interval of k/n at confidence c, in
// percent (MethodWilson), or nil when undefined.
func wilsonPct(k, n float64, c float64) *Interval {
	if lo, hi, ok := stats.Wilson(k, n, c); ok {
		return &Interval{Lo: 100 * lo, Hi: 100 * hi, Method: MethodWilson}
	}
	return nil
}

// wilsonDiff is MethodWilsonDifference for shares k1/n1 − k2/n2, in pp:
// [L₁ − U₂, U₁ − L₂] from Wilson score intervals (Wilson 1927) at
// 1 − α/2 each, which hold together with probability ≥ 1 − α by
// Bonferroni's inequality: conservative beside Newcombe's (1998, Statistics
// in Medicine 17:873–890) square-and-add hybrid, and used only where the
// clustered intervals are degenerate.
func (sm *summarizer) wilsonDiff(k1, n1, k2, n2 float64) *Interval {
	a, b := wilsonPct(k1, n1, 1-sm.alpha/2), wilsonPct(k2, n2, 1-sm.alpha/2)
	if a == nil || b == nil {
		return nil
	}
	return &Interval{Lo: a.Lo - b.Hi, Hi: a.Hi - b.Lo, Method: MethodWilsonDifference}
}

// accuracy returns the accuracy estimate of a set of units (percent), its
// ratio over the templates, the units right (k) and the units (n).
func (sm *summarizer) accuracy(units []*unit) (*Estimate, stats.Ratio, float64, int) {
	r := stats.NewRatio(sm.G)
	var k float64
	for _, u := range units {
		r.Add(u.tmpl, u.y())
		k += u.y()
	}
	n := len(units)
	if n == 0 {
		return nil, r, 0, 0
	}
	v := 100 * k / float64(n)
	w := wilsonPct(k, float64(n), sm.p.Confidence)
	e := sm.es.add(v, sm.influence(r, 100), scaled(r, 100), 0, 100, w)
	e.Wilson = w
	return e, r, k, n
}

// testedDrop is pairedDrop with the sign-flip test of the drop's template
// means (from ts) and the two intervals that pairedDropCI chooses between
// besides MOVER-Wilson: the test's inversion (Estimate.SignFlip) and the
// skew-corrected t interval (Estimate.SkewT), both from tests.signFlipCI.
// Every paired drop whose reported interval follows the paired-drop rule
// (stats.PairedDropInterval) is built here: a variant's (paired) and the
// one within each difficulty group (groupDrop).
func (sm *summarizer) testedDrop(pairs []*pairUnit, ts *tests, u float64) (*Estimate, stats.Ratio, *Test, float64, float64) {
	e, dr, bo, vo := sm.pairedDrop(pairs)
	t, sf, skew := ts.signFlipCI(dr, u)
	if e != nil {
		e.SignFlip, e.SkewT = sf, skew
	}
	return e, dr, t, bo, vo
}

// GroupStream is the PCG stream of the Monte Carlo sign flips of the paired
// drops within difficulty groups ("grup" in ASCII): their own stream, so
// that adding them left every other test's draws as they were.
const GroupStream uint64 = 0x67727570

// groupDrop is the paired drop of the pairs of one difficulty group
// (testedDrop, its sign flips from GroupStream), with the pairs base (or
// reference) right → variant wrong and the reverse: its reported interval
// follows the rule of the variant's own paired drop (pairedDropCI), on the
// group's templates; its test is returned with it (the interval excludes
// 0 exactly where it rejects), unadjusted for the number of groups.
//
// u is the tie-breaking uniform of the variant's own paired drop (its
// Test.TieU; 0 to draw one): a group's test breaks ties with the same u, so
// that a group holding every template of the variant gets the variant's p
// (up to the Monte Carlo draws above Params.PermutationExact templates)
// instead of a second coin on the same data.
func (sm *summarizer) groupDrop(pairs []*pairUnit, u float64) (*Estimate, *Test, float64, float64) {
	if sm.tsGroup == nil {
		sm.tsGroup = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), GroupStream))}
	}
	e, _, t, bo, vo := sm.testedDrop(pairs, sm.tsGroup, u)
	if t != nil {
		t.Adjustment = "none (one of the difficulty groups, not adjusted for their number)"
	}
	return e, t, bo, vo
}

// pairedDrop returns the paired drop of a set of pairs (pp), its
// equal-weight ratio of per-pair differences, and the pairs base right →
// variant wrong (bo) and the reverse (vo).
//
// The estimand is the mean over templates of each template's mean paired
// difference, every template weighted equally (stats.Ratio.EqualWeights):
//
//	drop = (1/G) · Σ_g (1/n_g) · Σ_{i∈g} (y_ref,gi − y_var,gi)
//
// over the G templates with pairs, n_g the distinct pairs of template g.
// A pooled mean over pairs would weight a template by its number of
// distinct pairs, which changes when duplicate draws collapse. The same
// template means give the CR1 SE and cluster-t interval (s/√G of the
// template means), the cluster bootstrap, the sign-flip test
// (tests.signFlipCI) and its inversion, and the MOVER-Wilson interval (its
// two accuracies as equal-weight means; moverWilson); the reported interval
// is MOVER-Wilson (lower limit at most the sign-flip inversion's) below
// Params.FewTemplates templates and the inverted sign-flip test (upper
// limit at least the skew-corrected t's) from there (see pairedDropCI).
func (sm *summarizer) pairedDrop(pairs []*pairUnit) (*Estimate, stats.Ratio, float64, float64) {
	var bo, vo float64
	for _, q := range pairs {
		bo += q.bo / float64(q.copies)
		vo += q.vo / float64(q.copies)
	}
	r := sm.dropRatio(pairs)
	if len(pairs) == 0 {
		return nil, r, 0, 0
	}
	v, _ := r.Value()
	n := float64(len(pairs))
	e := sm.es.add(100*v, sm.influence(r, 100), scaled(r, 100), -100, 100, sm.wilsonDiff(bo, n, vo, n))
	e.MOVERWilson = moverWilson(pairs, sm.G, sm.p.Confidence)
	return e, r, bo, vo
}

// dropRatio is the equal-weight ratio of the pairs' per-pair differences
// (stats.Ratio.EqualWeights), whose value is the paired drop.
func (sm *summarizer) dropRatio(pairs []*pairUnit) stats.Ratio {
	pooled := stats.NewRatio(sm.G)
	for _, q := range pairs {
		pooled.Add(q.tmpl, q.d())
	}
	return pooled.EqualWeights()
}

// tieU returns the tie-breaking uniform of model mi's paired drop on
// variant (its Test.TieU), 0 when that test is not randomized or absent.
func (sm *summarizer) tieU(mi int, variant string) float64 {
	vi, ok := sm.vIdx[variant]
	if !ok || sm.cells[mi][vi] == nil {
		return 0
	}
	if pr := sm.cells[mi][vi].vs.Paired; pr != nil && pr.Test != nil {
		return pr.Test.TieU
	}
	return 0
}
