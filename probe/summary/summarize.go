package summary

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
)

// Summarize computes the statistics of a run from its trials.
//
// Trials are grouped by model (ModelPath, or ModelName when the path is
// empty) and variant; skipped trials (SkipReason ≠ "") are counted and left
// out of every statistic; nothing is filtered to items the model solved in
// the base variant. Trials of one model × variant × template with the same
// question are one unit (see Summary). Pairs match a variant trial with the
// base trial of the same model, template and instance index.
//
// Every accuracy, drop, share and shift gets (see Estimate):
//
//   - the CR1 cluster-robust standard error over templates (Miller 2024,
//     arXiv:2411.00640; stats.Influence.CR1), by the delta method for a
//     difference or ratio of accuracies;
//   - the cluster-t interval on G − 1 degrees of freedom (stats.ClusterT),
//     clipped to the statistic's range;
//   - the joint cluster-bootstrap percentile interval: the clusters are the
//     templates with at least one scored trial, sorted by ID; each of the B
//     resamples draws len(templates) indices with replacement (r.IntN, in
//     order, from rand.New(rand.NewPCG(uint64(p.Seed), BootstrapStream)))
//     and this one resample is used for every model, variant and statistic
//     (stats.JointBootstrap);
//   - a reported interval: cluster-t below p.FewTemplates templates,
//     bootstrap from there on, a Wilson fallback when the clustered ones are
//     degenerate; for the paired drop (the equal-weight mean of the
//     template means; see pairedDrop) MOVER-Wilson with the sign-flip
//     test's lower limit where lower, below p.FewTemplates templates or
//     when degenerate, the inverted sign-flip test with the skew-corrected
//     t's upper limit where higher from there, with
//     Paired.IntervalCoverage saying how well such an interval covered in
//     simulation.
//
// Every paired statistic (paired drop, shifts, differences between models)
// gets a sign-flip permutation test over templates (stats.SignFlip; exact
// up to p.PermutationExact templates, else p.PermutationDraws Monte Carlo
// draws from rand.NewPCG(uint64(p.Seed), PermutationStream)). Holm's
// adjustment runs across the variants of a model for each quantity, or, for
// the drop with p.Primary set, the primary variant stands alone and the
// others are adjusted among themselves; between models, across all the
// differences of a model pair. Verdicts: stats.ClassifyDrop on the paired
// drop's reported interval and adjusted p. The minimum detectable drop
// (Power) uses the observed variance components of the per-pair differences
// (stats.VarianceComponents, stats.MDE).
//
// The result is a deterministic function of trials and p, and of the set
// of trials, not their order, except for the order of the models (that of
// their first trial): trials are summed, and the Monte Carlo draws taken,
// in canonicalOrder, so that a results.csv whose rows were reordered
// (merged shards, a resumed run, a sorted file) gives the same summary to
// the last bit. Zero fields of p take the defaults of DefaultParams. It returns an error for invalid
// params, a primary variant that is base or not in the trials, or when two
// trials share model, template, variant and instance.
func Summarize(trials []results.Trial, p Params) (*Summary, error) {
	p, err := checkParams(p)
	if err != nil {
		return nil, err
	}
	describeMethods(&p)
	trials = canonicalOrder(trials)
	sm := &summarizer{p: p, alpha: p.Alpha, trials: trials, s: &Summary{Params: p, Trials: len(trials)}}
	if err := sm.index(); err != nil {
		return nil, err
	}
	sm.collect()
	sm.es = &estimates{p: &sm.p}
	sm.ts = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(p.Seed), PermutationStream))}
	sm.mdata = make([]modelData, len(sm.models))
	for mi := range sm.models {
		sm.summarizeModel(mi)
	}
	sm.stabilityExcesses()
	sm.betweenModels()
	sm.errorAnatomies()
	// Difficulty: registered before the bootstrap runs.
	for mi, m := range sm.models {
		m.Difficulty = difficulty(sm.cells[mi], sm.s.Variants, sm.accuracy, func(ps []*pairUnit, variant string) (*Estimate, *Test, float64, float64) {
			return sm.groupDrop(ps, sm.tieU(mi, variant))
		})
	}
	sm.answerLogProbShifts()
	sm.es.finish(sm.G)
	sm.rateIntervals()
	sm.verdicts()
	sm.selection()
	sm.levelDifferences()
	s := sm.s
	s.Documents = documentsSummary(trials, s)
	s.Calculator = calculatorSummary(trials, s)
	s.Effort = effortSummaries(trials, s)
	s.Paper = paperViews(trials, s)
	return s, nil
}

// canonicalOrder returns a copy of trials sorted by model (in the order of
// each model's first trial), then template, variant and instance (the key
// Summarize requires unique), so that floating-point sums and random
// draws do not depend on the order of the rows.
func canonicalOrder(trials []results.Trial) []results.Trial {
	rank := map[string]int{}
	mr := make([]int, len(trials))
	for i := range trials {
		k := modelKey(&trials[i])
		r, ok := rank[k]
		if !ok {
			r = len(rank)
			rank[k] = r
		}
		mr[i] = r
	}
	idx := make([]int, len(trials))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := &trials[i], &trials[j]
		return cmp.Or(cmp.Compare(mr[i], mr[j]), strings.Compare(a.TemplateID, b.TemplateID),
			strings.Compare(a.Variant, b.Variant), cmp.Compare(a.Instance, b.Instance))
	})
	out := make([]results.Trial, len(trials))
	for k, i := range idx {
		out[k] = trials[i]
	}
	return out
}

// checkParams fills the zero fields of p from DefaultParams and checks the
// rest; the errors are Summarize's.
func checkParams(p Params) (Params, error) {
	d := DefaultParams(p.Seed)
	for _, f := range []struct{ dst, def *int }{{&p.BootstrapResamples, &d.BootstrapResamples}, {&p.FewTemplates, &d.FewTemplates},
		{&p.PermutationExact, &d.PermutationExact}, {&p.PermutationDraws, &d.PermutationDraws}} {
		if *f.dst == 0 {
			*f.dst = *f.def
		}
	}
	for _, f := range []struct{ dst, def *float64 }{{&p.Confidence, &d.Confidence}, {&p.Power, &d.Power}, {&p.NegligibleDropPP, &d.NegligibleDropPP},
		{&p.StrongDropPP, &d.StrongDropPP}, {&p.EntropyShiftBits, &d.EntropyShiftBits}, {&p.DDCMarginShift, &d.DDCMarginShift},
		{&p.ShiftMarginSD, &d.ShiftMarginSD}, {&p.UnstableAnswerPct, &d.UnstableAnswerPct}} {
		if *f.dst == 0 {
			*f.dst = *f.def
		}
	}
	switch {
	case p.BootstrapResamples < 1:
		return p, fmt.Errorf("probe: bootstrap resamples must be at least 1, got %d", p.BootstrapResamples)
	case !(p.Confidence > 0 && p.Confidence < 1):
		return p, fmt.Errorf("probe: confidence level must be in (0, 1), got %v", p.Confidence)
	case !(p.Power > 0 && p.Power < 1):
		return p, fmt.Errorf("probe: power must be in (0, 1), got %v", p.Power)
	case p.NegligibleDropPP < 0 || p.StrongDropPP < p.NegligibleDropPP || p.EntropyShiftBits < 0 || p.DDCMarginShift < 0 || p.ShiftMarginSD < 0 || p.UnstableAnswerPct < 0 || p.Temperature < 0:
		return p, errors.New("probe: thresholds must be ≥ 0 with strong ≥ negligible")
	case p.FewTemplates < 0 || p.PermutationExact < 0 || p.PermutationExact > 30 || p.PermutationDraws < 1:
		return p, errors.New("probe: few-templates limit ≥ 0, exact sign-flip limit in [0, 30] and Monte Carlo draws ≥ 1 required")
	case p.Primary == BaseVariant:
		return p, errors.New("probe: the primary variant cannot be base (it is what the others are compared with)")
	}
	return p, nil
}

// describeMethods sets α and the fields of p that say, for the reader of
// summary.json, what is computed and how.
func describeMethods(p *Params) {
	alpha := p.alpha()
	p.Alpha = alpha
	p.RNG = fmt.Sprintf("math/rand/v2 rand.New(rand.NewPCG(%d, %#x)); per resample, IntN(len(templates)) drawn len(templates) times. Monte Carlo sign flips: rand.NewPCG(%d, %#x), one bit of Uint64 per template",
		uint64(p.Seed), BootstrapStream, uint64(p.Seed), PermutationStream)
	p.UnitOfAnalysis = "a distinct prompt: trials of one model × variant × template with the same question are one unit (outcome: share of its copies right), and identical (base, variant) prompt pairs are one pair; cluster: the template"
	p.AccuracyInterval = "Wilson score interval over the distinct prompts (Wilson 1927), next to the clustered intervals"
	p.ClusterRobust = "CR1 cluster-robust standard error over templates, factor G/(G−1) (Miller 2024, arXiv:2411.00640; Cameron & Miller 2015); delta method for differences and ratios"
	p.Bootstrap = "joint cluster bootstrap over templates, one resample shared by every model, variant and statistic per iteration; percentile interval (Efron & Tibshirani 1993)"
	p.ReportedInterval = fmt.Sprintf("paired drops (the mean over templates of each template's mean paired difference, templates weighted equally): from %d templates the inverted sign-flip test on the template means (the drops δ that the sign-flip test of the means minus δ does not reject, on the same sign vectors as the drop's test, so that the interval excludes 0 exactly when that test rejects; Fisher 1935, Pitman 1937, Garthwaite 1996), the test randomized at ties (the sign vectors whose statistic ties the observed one count by a uniform u drawn from the sign-flip stream, recorded as tie_u, for a test of level exactly α: Lehmann & Romano 2005 §15.2.1; where the tie at a limit is rejected and the drops beside it are not, that limit is open, lo_open/hi_open, printed as a round bracket) with its upper limit raised to that of the skew-corrected t interval of the means where higher (Johnson 1978, Hall 1992: template means skewed by a drop carried by the few templates a model solves put the sign-flip interval below the drop; the lower limit, and so the verdict, is the sign-flip test's), MOVER-Wilson below %d and whenever every template mean is equal (Wilson limits of base and variant accuracy, each an equal-weight mean of template means, on their Korn–Graubard effective sample sizes, the other side's design effect or the number of templates for an accuracy of 0 or 100%%, with t on G−1 degrees of freedom, combined by MOVER with their cluster-robust correlation; Newcombe 1998, Korn & Graubard 1998, Zou & Donner 2008), its lower limit lowered to the inverted sign-flip test's (not randomized) where that is defined and lower (which leaves the verdict, which needs the sign-flip test too, unchanged); the entropy and DDC-margin shifts (also within pairs both right and both wrong): cluster-t on G−1 degrees of freedom at every number of templates, the answer log-probability shift from %d templates and none below (a shift carried by a few collapsed answers is missed by any interval from fewer; the percentile bootstrap under-covers these heavy-tailed and skewed shifts); the stability verdict's changed share: Korn–Graubard (Clopper–Pearson on the effective sample size from the CR1 variance with a Satterthwaite degrees-of-freedom factor, Kish's effective number of templates when the share does not vary between templates; Korn & Graubard 1998); everything else: cluster-t on G−1 degrees of freedom below %d templates, bootstrap percentile from %d; Wilson when the clustered intervals are degenerate (no variation between templates)", p.FewTemplates, p.FewTemplates, p.FewTemplates, p.FewTemplates, p.FewTemplates)
	p.PairedDropCoverage = PairedDropCoverageMeasured
	p.PermutationTest = fmt.Sprintf("sign-flip permutation test over templates of the per-template mean paired differences (paired drops) or per-template sums of paired differences (shifts, differences between models); exact (all 2^G sign vectors) up to %d templates, else %d Monte Carlo draws with p = (1+hits)/(draws+1); a paired drop's test from %d templates is randomized at ties: p = (above + u·ties)/2^G, or (above + u·(ties+1))/(draws+1), with u uniform on (0, 1] from the same stream (Lehmann & Romano 2005 §15.2.1; Dufour 2006), of level exactly α where the non-randomized p, kept as p_non_randomized, is conservative when template means tie; a drop estimated at exactly 0 is never rejected", p.PermutationExact, p.PermutationDraws, p.FewTemplates)
	across := "; with several models, each model's verdict test (its within-model adjusted p) Holm-adjusted across the models; differences between models Holm-adjusted across every difference of every model pair (one family)"
	if p.Primary != "" {
		p.Multiplicity = fmt.Sprintf("drops: primary variant %s tested alone at α = %s and its verdict is the model's; other variants Holm-adjusted among themselves (secondary); shifts: Holm across the three measures and all variants of a model, the within-stratum shifts (both right, both wrong) in a family of their own", p.Primary, fnum(alpha, 2)) + across
	} else {
		p.Multiplicity = "drops: Holm across the variants of each model; the verdict is the most severe adjusted one, and its variant's paired drop also gets a cluster-t interval at 1 − α/k for having been picked among k (Bonferroni); shifts: Holm across the three measures and all variants of a model, the within-stratum shifts (both right, both wrong) in a family of their own" + across
	}
	p.ShiftMargin = shiftMethod(p)
	p.Stability = fmt.Sprintf("read on solved problems against the placebo (the same problem asked in other tokens): for each variant that keeps the problem's answer, the excess = its share of solved reference instances whose answer changed − the placebo's on the same instances, paired per template and instance, templates weighted equally, with the paired drop's intervals and sign-flip test; answers unstable when some variant's interval lies above 0 and its test, Holm-adjusted across the variants, reaches α; stable when every variant's interval lies below %s pp (intersection-union, Berger 1982); not assessed without a placebo, under sampling, or at the floor; the change rate of wrong answers is reported apart and no verdict reads it", fnum(p.UnstableAnswerPct, 1))
	p.MDE = fmt.Sprintf("(G'/G)·((t_{1−α/2,G'−1} + t_{%s,G'−1})·√((σ²_b + σ²_w/m)/G') + 1/(m·G')) with α divided by the Holm family size (Bloom 1995; Donner & Klar 2000), on the G' templates with a right answer on either side in some pair, with the variance components (ANOVA) of their per-pair differences and m the harmonic mean of their distinct pairs per template (a template never solved has a mean difference of 0, cannot show a drop and does not move the sign-flip test, as the sign test discards ties: Conover 1999; none when G' is below the templates the test needs to reach α); below %d templates the last term is the continuity correction of the non-randomized sign-flip test's lattice of span 2/m (Cox 1970; without it and on all templates' components the t formula was 11.5 points too high to 12.6 too low against the verdict's power in simulation), from %d templates, where the test is randomized at ties, there is none; with one pair per template (template means of −1, 0 or 1), G'/G times the drop at which the exact power of the sign-flip test, the sign test on the templates whose pair is discordant (randomized from %d templates), reaches %s (the t formula overstated that power by 5–26 points in simulation)", fnum(p.Power, 2), p.FewTemplates, p.FewTemplates, p.FewTemplates, fnum(100*p.Power, 0)+"%")
	p.ExtractionRules = answer.ExtractionRulesVersion
}

// modelTests are the tests of one model's variants that are adjusted
// together (Holm), one list per quantity.
type modelTests struct {
	drop         []*Test
	shifts       []*Test           // every measure's shift test, all variants (one Holm family)
	strata       []*Test           // the shift tests within both-right and within both-wrong pairs (one Holm family)
	dropVariants []*VariantSummary // the variant of each drop test
}

// baseSide is the base variant's accuracy of one model, for the drops.
type baseSide struct {
	r stats.Ratio
	k float64
	n int
}

// summarizeModel computes every variant of model mi: accuracy, drop
// against base, the paired table and drop with its test and power, and the
// shifts; then the multiplicity adjustments across its variants.
func (sm *summarizer) summarizeModel(mi int) {
	md := modelData{units: map[string]float64{}, uTmpl: map[string]int{}, pairs: map[string]float64{}, pTmpl: map[string]int{}}
	var hasBase bool
	if bi, ok := sm.vIdx[BaseVariant]; ok {
		hasBase = sm.cells[mi][bi] != nil
	}
	sides := map[string]baseSide{} // accuracy of each variant, for the drops of those it is the reference of
	var mt modelTests
	tmplOfModel := map[int]bool{}
	for vi := range sm.s.Variants {
		c := sm.cells[mi][vi]
		if c == nil {
			continue
		}
		vs := c.vs
		units := make([]*unit, len(c.unitOrder))
		for i, k := range c.unitOrder {
			units[i] = c.units[k]
			md.units[vs.Variant+"\x00"+k] = units[i].y()
			md.uTmpl[vs.Variant+"\x00"+k] = units[i].tmpl
		}
		vs.N = len(units)
		vs.Copies = vs.Scored - vs.N
		vs.Templates = len(c.tmplSeen)
		sm.models[mi].N += vs.N
		sm.models[mi].Copies += vs.Copies
		for g := range c.tmplSeen {
			tmplOfModel[g] = true
		}
		var r stats.Ratio
		vs.AccuracyPct, r, vs.K, _ = sm.accuracy(units)
		sides[vs.Variant] = baseSide{r, vs.K, vs.N}
		if vs.Variant == BaseVariant {
			continue
		}
		vs.Primary = vs.Variant == sm.p.Primary
		ref := cmp.Or(vs.Paired.Reference, BaseVariant)
		if base, ok := sides[ref]; ok && hasBase && vs.N > 0 && base.n > 0 {
			sm.unpairedDrop(vs, base, r)
		}
		pairs := make([]*pairUnit, len(c.pairOrder))
		for i, k := range c.pairOrder {
			pairs[i] = c.pairs[k]
			md.pairs[vs.Variant+"\x00"+k] = pairs[i].d()
			md.pTmpl[vs.Variant+"\x00"+k] = pairs[i].tmpl
		}
		vs.Paired.Pairs = len(pairs)
		vs.Paired.Copies = vs.Paired.PairTrials - vs.Paired.Pairs
		if len(pairs) > 0 {
			dr := sm.paired(vs, pairs)
			if md.dropR == nil {
				md.dropR = map[string]stats.Ratio{}
			}
			md.dropR[vs.Variant] = dr
			mt.drop = append(mt.drop, vs.Paired.Test)
			mt.dropVariants = append(mt.dropVariants, vs)
		}
		sm.shifts(vs, pairs, &mt)
	}
	sm.adjustModel(mt)
	sm.models[mi].Templates = len(tmplOfModel)
	sm.mdata[mi] = md
}

// unpairedDrop sets the variant's drop and relative drop against its
// reference (base, or the variant it was drawn on) from the two
// accuracies (not paired), by the delta method.
func (sm *summarizer) unpairedDrop(vs *VariantSummary, base baseSide, r stats.Ratio) {
	bv, _ := base.r.Value()
	vv, _ := r.Value()
	ib, iv := sm.influence(base.r, 1), sm.influence(r, 1)
	br, vr := base.r, r
	vs.DropPP = sm.es.add(100*(bv-vv), ib.Combine(100, iv, -100), func(idx []int) (float64, bool) {
		b, ok1 := br.At(idx)
		v, ok2 := vr.At(idx)
		return 100 * (b - v), ok1 && ok2
	}, -100, 100, sm.wilsonDiff(base.k, float64(base.n), vs.K, float64(vs.N)))
	if bv > 0 {
		// rel = 100·(1 − v/b): ∂/∂b = 100·v/b², ∂/∂v = −100/b.
		vs.RelativeDropPct = sm.es.add(100*(bv-vv)/bv, ib.Combine(100*vv/(bv*bv), iv, -100/bv), func(idx []int) (float64, bool) {
			b, ok1 := br.At(idx)
			v, ok2 := vr.At(idx)
			return 100 * (b - v) / b, ok1 && ok2 && b > 0
		}, math.Inf(-1), 100, nil)
	}
}

// paired sets the variant's paired table (the four cells with their
// shares), answer stability and recall, paired drop, sign-flip test and
// power from its pairs, and returns the ratio of per-pair differences.
func (sm *summarizer) paired(vs *VariantSummary, pairs []*pairUnit) stats.Ratio {
	pr := vs.Paired
	pr.BothCorrect = sm.share(pairs, func(q *pairUnit) float64 { return q.both })
	pr.BaseOnly = sm.share(pairs, func(q *pairUnit) float64 { return q.bo })
	pr.VariantOnly = sm.share(pairs, func(q *pairUnit) float64 { return q.vo })
	pr.BothWrong = sm.share(pairs, func(q *pairUnit) float64 { return q.bw })
	pr.AnswerChanged, pr.AnswerLeftOut = sm.answerChanged(pairs)
	if pr.AnswerChanged != nil {
		pr.LossAmongSolved, pr.WrongChanged = sm.changedBy(pairs, true), sm.changedBy(pairs, false)
		for _, q := range pairs {
			if isSolved(q) {
				pr.LossNoAnswer += noAnswer(q)
			}
		}
	}
	pr.OriginalRecalled = sm.rate(pairs, func(q *pairUnit) bool { return !q.sameAnswer }, func(q *pairUnit) float64 { return q.recalled / float64(q.copies) })
	var dr stats.Ratio
	pr.PairedDropPP, dr, pr.Test, _, _ = sm.testedDrop(pairs, sm.ts, 0)
	pr.Power = power(pairs, sm.G, sm.p, pr.Reference != "")
	sm.finishedPairs(pr, pairs)
	return dr
}

// FinishedStream is the PCG stream of the Monte Carlo sign flips of the
// paired drops on pairs finished on both sides ("fini" in ASCII): their
// own stream, so that adding them left every other test's draws as they
// were.
const FinishedStream uint64 = 0x66696e69

// finishedPairs sets the budget's part of pr: the cut shares of both sides,
// whether they differ by more than the negligible margin, and the paired
// drop on the pairs finished on both sides.
func (sm *summarizer) finishedPairs(pr *Paired, pairs []*pairUnit) {
	var fin []*pairUnit
	var cb, cv float64
	for _, q := range pairs {
		cb += q.cutB / float64(q.copies)
		cv += q.cutV / float64(q.copies)
		if q.finished() {
			fin = append(fin, q)
		}
	}
	n := float64(len(pairs))
	pr.CutReferencePct, pr.CutVariantPct = 100*cb/n, 100*cv/n
	pr.BudgetConfounded = math.Abs(pr.CutVariantPct-pr.CutReferencePct) > sm.p.NegligibleDropPP
	pr.FinishedPairs = len(fin)
	if len(fin) == 0 || len(fin) == len(pairs) {
		return
	}
	if sm.tsFin == nil {
		sm.tsFin = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), FinishedStream))}
	}
	pr.FinishedDropPP, _, pr.FinishedTest, _, _ = sm.testedDrop(fin, sm.tsFin, 0)
	if pr.FinishedTest != nil {
		pr.FinishedTest.Adjustment = "none (the pairs finished on both sides, beside the verdict's test)"
	}
}

// share returns the count of pairs that count gives (per pair, over its
// copies) and its share of the pairs in percent, with the cluster-robust,
// bootstrap and Wilson intervals (the reported one as every estimate's).
func (sm *summarizer) share(pairs []*pairUnit, count func(*pairUnit) float64) Cell {
	return sm.shareOf(pairs, func(q *pairUnit) float64 { return count(q) / float64(q.copies) })
}

// shareOf is share with each pair's own share in [0, 1] given by frac: the
// pair counts frac(q) of one pair.
func (sm *summarizer) shareOf(pairs []*pairUnit, frac func(*pairUnit) float64) Cell {
	var c Cell
	r := stats.NewRatio(sm.G)
	for _, q := range pairs {
		share := frac(q)
		r.Add(q.tmpl, share)
		c.Count += share
	}
	n := float64(len(pairs))
	w := wilsonPct(c.Count, n, sm.p.Confidence)
	c.SharePct = sm.es.add(100*c.Count/n, sm.influence(r, 100), scaled(r, 100), 0, 100, w)
	c.SharePct.Wilson = w
	return c
}

// answerChanged is answer stability (Paired.AnswerChanged) of a variant
// whose every pair keeps its answer (noop, noop-seeming, names, paraphrase,
// a document item's rewordings): over the pairs in which both sides gave an
// answer (an extracted number or text) in some copy, the share of those
// copies whose extracted answers differ, and the number of pairs left out
// (Paired.AnswerLeftOut). A pair with no answer on a side (cut by the
// output budget, or a response without a number) says nothing about
// whether the model gives the same answer to the same problem, and
// counting it as unchanged would call a model that answers nothing stable.
// The rate is nil when some pair of the variant changes its answer (a
// variant that re-draws values, symbolic or numbers, asks a different
// problem even where a draw happens to keep the answer: its pairs have
// OriginalRecalled instead; left out 0) or when no pair has an answer on
// both sides.
func (sm *summarizer) answerChanged(pairs []*pairUnit) (*Rate, int) {
	for _, q := range pairs {
		if !q.sameAnswer {
			return nil, 0
		}
	}
	answered := func(q *pairUnit) bool { return q.answered > 0 }
	left := 0
	for _, q := range pairs {
		if !answered(q) {
			left++
		}
	}
	return sm.rate(pairs, answered, func(q *pairUnit) float64 { return q.changed / q.answered }), left
}

// changedBy is the share of pairs whose answer changed. solved true:
// Paired.LossAmongSolved, over every pair whose reference was answered
// right in every copy, a copy with no variant answer counted as lost
// (lost). solved false: Paired.WrongChanged, over the pairs whose
// reference was answered wrong in every copy and that both sides answered.
// nil when there are none.
func (sm *summarizer) changedBy(pairs []*pairUnit, solved bool) *Rate {
	if solved {
		return sm.rate(pairs, isSolved, lost)
	}
	of := func(q *pairUnit) bool { return q.b == 0 && q.answered > 0 }
	return sm.rate(pairs, of, func(q *pairUnit) float64 { return q.changed / q.answered })
}

// isSolved reports whether q's reference was answered right in every copy.
func isSolved(q *pairUnit) bool { return q.b == float64(q.copies) }

// noAnswer is, for a solved pair (whose reference side always answered),
// the share of copies whose variant side gave no answer.
func noAnswer(q *pairUnit) float64 { return (float64(q.copies) - q.answered) / float64(q.copies) }

// lost is, for a solved pair, the share of copies whose variant lost the
// solved problem: another answer, or none (noAnswer).
func lost(q *pairUnit) float64 { return q.changed/float64(q.copies) + noAnswer(q) }

// rate is shareOf over the pairs of one kind (those for which of is true),
// frac each pair's share; nil when no pair is of that kind.
func (sm *summarizer) rate(pairs []*pairUnit, of func(*pairUnit) bool, frac func(*pairUnit) float64) *Rate {
	var some []*pairUnit
	for _, q := range pairs {
		if of(q) {
			some = append(some, q)
		}
	}
	if len(some) == 0 {
		return nil
	}
	perTemplate := make([]float64, sm.G)
	r := stats.NewRatio(sm.G)
	for _, q := range some {
		perTemplate[q.tmpl]++
		r.Add(q.tmpl, frac(q))
	}
	rt := &Rate{Pairs: len(some), Cell: sm.shareOf(some, frac), KishTemplates: stats.KishN(perTemplate)}
	if inf, ok := r.Influence(); ok {
		rt.VarianceDF = varianceDF(inf)
	}
	return rt
}

// rateIntervals sets the reported interval of every rate (Paired.
// AnswerChanged and OriginalRecalled) to its Korn–Graubard interval at the
// run's confidence (changedInterval, the stability verdict's method), in
// place of the cluster-t or bootstrap percentile interval of the other
// shares, which a share of clustered pairs near 0 or 1 defeats
// (TestStabilityCoverageGrid: cluster-t covered 49.8% where this covers
// 95.9% or more).
func (sm *summarizer) rateIntervals() {
	for _, cells := range sm.cells {
		for _, c := range cells {
			if c == nil || c.vs.Paired == nil {
				continue
			}
			pr := c.vs.Paired
			for _, r := range []*Rate{pr.AnswerChanged, pr.LossAmongSolved, pr.WrongChanged, pr.OriginalRecalled} {
				if r == nil || r.SharePct == nil {
					continue
				}
				if iv := changedInterval(r, sm.p.Confidence); iv != nil {
					r.SharePct.CI = iv
				}
			}
		}
	}
}

// varianceDF is the Satterthwaite degrees of freedom of a CR1 variance,
// the sum over templates of the squared influences u_g = e_g²:
//
//	ν = (Σ_g u_g)² / Σ_g u_g²
//
// (Satterthwaite 1946, "An approximate distribution of estimates of
// variance components", Biometrics Bulletin 2:110–114; each template's
// term taken with one degree of freedom), at most G − 1 and at least 1; 0
// when the variance is 0. It is G − 1 (capped) when the templates
// contribute evenly and near 1 when one template carries the variance (a
// share whose few changes all fall in one template), where the CR1 SE
// itself is unreliable (Imbens & Kolesár 2016, "Robust standard errors in
// small samples: some practical advice", Review of Economics and
// Statistics 98:701–712).
func varianceDF(inf stats.Influence) float64 {
	var s1, s2 float64
	g := 0
	for i, e := range inf.E {
		if inf.Present[i] {
			u := e * e
			s1 += u
			s2 += u * u
			g++
		}
	}
	if !(s2 > 0) || g < 2 {
		return 0
	}
	return max(1, min(float64(g-1), s1*s1/s2))
}

// adjustModel applies the multiplicity adjustments across one model's
// variants: the primary variant's drop test alone and Holm among the
// others, or Holm across all; Holm for each shift.
func (sm *summarizer) adjustModel(mt modelTests) {
	var primaryTest *Test
	var secondary []*Test
	for i, vs := range mt.dropVariants {
		if vs.Primary {
			primaryTest = mt.drop[i]
		} else {
			secondary = append(secondary, mt.drop[i])
		}
	}
	if primaryTest != nil {
		adjust(sm.alpha, "none: primary variant", primaryTest)
		primaryTest.Family = 1
		adjust(sm.alpha, "holm among secondary variants", secondary...)
	} else {
		adjust(sm.alpha, "holm", mt.drop...)
	}
	sm.adjustShifts(mt)
}

// betweenModels computes the paired differences between every two models
// on the prompts and pairs both were given, Holm-adjusted across every
// difference of every model pair (one family).
func (sm *summarizer) betweenModels() {
	models := sm.models
	for a := 0; a < len(models); a++ {
		for b := a + 1; b < len(models); b++ {
			mp := ModelPair{A: models[a].Label, B: models[b].Label, APath: models[a].Path, BPath: models[b].Path}
			for _, v := range sm.s.Variants {
				if md, r, ok := matchedDifference(v, sm.mdata[a].units, sm.mdata[b].units, sm.mdata[a].uTmpl, sm.G); ok {
					val, _ := r.Value()
					n := float64(md.Units)
					md.DiffPP = sm.es.add(100*val, sm.influence(r, 100), scaled(r, 100), -100, 100, sm.wilsonDiff(md.AHigher, n, md.BHigher, n))
					md.Test = sm.ts.signFlip(r)
					mp.Accuracy = append(mp.Accuracy, *md)
				}
				if v == BaseVariant {
					continue
				}
				if md, r, ok := matchedDifference(v, sm.mdata[a].pairs, sm.mdata[b].pairs, sm.mdata[a].pTmpl, sm.G); ok {
					// Templates weighted equally, as in each model's
					// paired drop (pairedDrop).
					r = r.EqualWeights()
					val, _ := r.Value()
					md.DiffPP = sm.es.add(100*val, sm.influence(r, 100), scaled(r, 100), -200, 200, nil)
					md.Test = sm.ts.signFlip(r)
					mp.Drop = append(mp.Drop, *md)
				}
			}
			sm.s.ModelPairs = append(sm.s.ModelPairs, mp)
		}
	}
	var tl []*Test
	for i := range sm.s.ModelPairs {
		mp := &sm.s.ModelPairs[i]
		for j := range mp.Accuracy {
			tl = append(tl, mp.Accuracy[j].Test)
		}
		for j := range mp.Drop {
			tl = append(tl, mp.Drop[j].Test)
		}
	}
	adjust(sm.alpha, "holm across every model pair", tl...)
	for i := range sm.s.ModelPairs {
		sm.s.ModelPairs[i].Family = len(tl)
	}
}

// matchedDifference returns the difference A − B on variant v over the
// keys both models have (units or pairs, keyed variant \x00 key), with the
// ratio of per-key differences over G templates; ok is false when no key
// is shared.
func matchedDifference(v string, ma, mb map[string]float64, tm map[string]int, G int) (*ModelDifference, stats.Ratio, bool) {
	md := &ModelDifference{Variant: v}
	r := stats.NewRatio(G)
	prefix := v + "\x00"
	var keys []string
	for k := range ma {
		if strings.HasPrefix(k, prefix) {
			if _, ok := mb[k]; ok {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		x, y := ma[k], mb[k]
		r.Add(tm[k], x-y)
		if x > y {
			md.AHigher++
		} else if y > x {
			md.BHigher++
		}
	}
	md.Units = len(keys)
	return md, r, len(keys) > 0
}

// verdicts classifies every variant's drop (stats.ClassifyDrop, or
// VerdictFloor), fills in the minimum detectable drop and the shifts'
// flags, picks each model's verdict, and says which differences between
// models are shown. It runs after the bootstrap, on the reported intervals.
func (sm *summarizer) verdicts() {
	rule := stats.DropRule{Negligible: sm.p.NegligibleDropPP, Strong: sm.p.StrongDropPP, Alpha: sm.alpha}
	for mi, m := range sm.models {
		var base *VariantSummary
		if bi, ok := sm.vIdx[BaseVariant]; ok && sm.cells[mi][bi] != nil {
			base = sm.cells[mi][bi].vs
		}
		floor := base != nil && base.AccuracyPct != nil && base.AccuracyPct.Value < FloorAccuracyPct
		m.VerdictRule = "holm"
		for vi := range sm.s.Variants {
			c := sm.cells[mi][vi]
			if c == nil {
				continue
			}
			vs := c.vs
			if vs.Variant != BaseVariant {
				ref := base
				if r, ok := sm.vIdx[vs.Paired.Reference]; ok && sm.cells[mi][r] != nil {
					ref = sm.cells[mi][r].vs
				}
				if ref != nil && ref.AccuracyPct != nil && ref.AccuracyPct.CI != nil && ref.AccuracyPct.CI.Lo <= 0 {
					// A ratio to a base accuracy that may be 0 has no
					// interval worth printing (the delta method's blows up).
					vs.RelativeDropPct = nil
				}
				sm.variantVerdict(vs, base != nil, floor, rule)
				uninformative(vs, ref)
				if pr := vs.Paired; pr.BudgetConfounded {
					// The budget, not the variant, may carry the difference:
					// a drop where the variant was cut more, its absence
					// where the reference was.
					more := pr.CutVariantPct > pr.CutReferencePct
					if more && stats.IsSignal(vs.Verdict) || !more && vs.Verdict == VerdictNoDrop {
						vs.Verdict = VerdictInconclusive
					}
				}
				if ref != nil && ref.AccuracyPct != nil {
					vs.Paired.IntervalCoverage = intervalCoverage(vs.Paired)
				}
				if vs.Verdict != "" {
					if vs.Primary {
						m.Verdict, m.VerdictVariant, m.VerdictRule = vs.Verdict, vs.Variant, "primary"
					} else if m.VerdictRule != "primary" && moreSevere(vs, m) {
						m.Verdict, m.VerdictVariant = vs.Verdict, vs.Variant
					}
				}
			}
			m.Variants = append(m.Variants, *vs)
		}
		sm.s.Models = append(sm.s.Models, *m)
	}
	for i := range sm.s.ModelPairs {
		for _, ds := range [][]ModelDifference{sm.s.ModelPairs[i].Accuracy, sm.s.ModelPairs[i].Drop} {
			for j := range ds {
				x := &ds[j]
				x.Shown = x.DiffPP != nil && x.DiffPP.CI.Excludes0() && x.Test != nil && x.Test.PAdjusted <= sm.alpha
			}
		}
	}
}

// uninformative sets VerdictUninformative on a variant whose verdict
// shows no drop (inconclusive, or no detectable drop) when no drop was
// detectable: the minimum detectable drop is at or above its reference's
// accuracy ref (a drop cannot exceed it), or unattainable. A signal the
// run did show keeps its verdict.
func uninformative(vs, ref *VariantSummary) {
	if vs.Verdict != VerdictInconclusive && vs.Verdict != VerdictNoDrop {
		return
	}
	pw := vs.Paired.Power
	if pw == nil || ref == nil || ref.AccuracyPct == nil {
		return
	}
	if pw.MDEPP == nil && pw.Templates >= 2 || pw.MDEPP != nil && *pw.MDEPP >= ref.AccuracyPct.Value {
		vs.Verdict = VerdictUninformative
	}
}

// intervalCoverage returns the Paired.IntervalCoverage of pr's paired
// drop.
func intervalCoverage(pr *Paired) string {
	e := pr.PairedDropPP
	if e == nil || e.CI == nil {
		return ""
	}
	switch {
	case (e.CI.Method == MethodMOVERWilson || e.CI.Method == MethodMOVERWilsonSignFlip) && (e.Degenerate || pr.Power == nil || pr.Power.PairsPerTemplate < 1.5):
		return CoverageConservative
	case e.CI.Method == MethodSignFlipSkew || e.CI.Method == MethodSignFlip || e.CI.Method == MethodClusterT:
		return CoverageNominal
	}
	return CoverageApproximate
}

// variantVerdict sets one variant's verdict, minimum detectable drop and
// shift flags.
func (sm *summarizer) variantVerdict(vs *VariantSummary, hasBase, floor bool, rule stats.DropRule) {
	pr := vs.Paired
	if hasBase && pr.PairedDropPP != nil && pr.Test != nil {
		vs.Verdict = stats.ClassifyDrop(limits(pr.PairedDropPP.CI), pr.Test.PAdjusted, rule)
		if floor {
			vs.Verdict = VerdictFloor
		}
	}
	if pr.Power != nil && pr.Test != nil {
		pr.Power.Alpha = sm.alpha / float64(pr.Test.Family)
		pr.Power.Attainable = pr.Test.Reachable
		if pr.Power.Templates >= 2 {
			mde := 100 * stats.PairedDropMDEInformed(pr.Power.Templates, pr.Power.InformativeTemplates, pr.Power.PairsPerTemplate,
				stats.Components{Between: pr.Power.Between, Within: pr.Power.Within}, pr.Power.Alpha, sm.p.Power, sm.p.FewTemplates)
			if math.IsInf(mde, 1) {
				// Too few templates solved in any pair for the sign-flip
				// test to reach Alpha: no drop is detectable.
				pr.Power.Attainable = false
			} else {
				pr.Power.MDEPP = &mde
			}
		}
	}
	if vs.Verdict == VerdictNoDrop && pr.Power != nil && (pr.Power.MDEPP == nil && pr.Power.Templates >= 2 || pr.Power.MDEPP != nil && *pr.Power.MDEPP > sm.p.NegligibleDropPP) {
		// An interval narrower than the run can resolve (the drop the test
		// would detect is above the negligible margin, or none is
		// detectable) rules nothing out.
		vs.Verdict = VerdictInconclusive
	}
	answerLogProbShown(vs, sm.alpha)
	sm.shiftFlags(vs)
}
