package summary

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fragility/fragility/probe/stats"
)

// ShiftMarginSD is the default Params.ShiftMarginSD: a shift is meaningful
// from 0.2 between-template standard deviations of its measure on the
// reference side. 0.2 standard deviations is Cohen's "small" standardized
// effect (Cohen 1988, Statistical Power Analysis for the Behavioral
// Sciences, 2nd ed., §2.2.3): a shift smaller than a fifth of how much the
// measure already differs from one problem to the next is not one a reader
// would call a change of the model's state. The fixed thresholds
// (EntropyShiftThresholdBits, DDCMarginShiftThreshold) stay as floors, so
// that a measure that hardly varies between templates does not make every
// shift meaningful.
const ShiftMarginSD = 0.2

// Stratum is a paired shift within one kind of pair: both answers right,
// or both wrong. Within them the accuracy does not move, so the shift
// there is not the accuracy drop measured again (a wrong answer's entropy
// runs higher than a right one's, so a variant that turns right answers
// wrong raises the mean entropy by itself).
type Stratum struct {
	Pairs       int       `json:"pairs"`        // distinct pairs of this kind with both values defined
	BaseMean    float64   `json:"base_mean"`    // mean over those pairs, reference side
	VariantMean float64   `json:"variant_mean"` // mean over those pairs, variant side
	Shift       *Estimate `json:"shift"`        // VariantMean − BaseMean with its intervals
	// Test is the sign-flip test over templates, Holm-adjusted across both
	// strata, the three measures and the model's variants.
	Test *Test `json:"test"`
	// Meaningful is stats.ShiftMeaningful with the Shift's Threshold.
	Meaningful bool `json:"meaningful"`
}

// shiftMeasure is one per-pair quantity of the shifts.
type shiftMeasure struct {
	dst   *(*Shift)
	f     func(q *pairUnit) shiftAcc
	floor float64
}

// shifts sets the variant's answer-entropy, all-token entropy and
// DDC-margin shifts (mean over pairs of variant − reference) with their
// tests, the same within both-right and within both-wrong pairs, and each
// measure's margin (shiftMargin); the tests join the model's families.
func (sm *summarizer) shifts(vs *VariantSummary, pairs []*pairUnit, mt *modelTests) {
	for _, x := range []shiftMeasure{
		{&vs.AnswerEntropyShift, func(q *pairUnit) shiftAcc { return q.ans }, sm.p.EntropyShiftBits},
		{&vs.EntropyShift, func(q *pairUnit) shiftAcc { return q.all }, sm.p.EntropyShiftBits},
		{&vs.DDCMarginShift, func(q *pairUnit) shiftAcc { return q.ddc }, sm.p.DDCMarginShift},
	} {
		sh := &Shift{ThresholdFloor: x.floor, Threshold: x.floor}
		*x.dst = sh
		st := sm.stratum(pairs, x.f, func(*pairUnit) bool { return true }, sm.ts)
		if st == nil {
			continue
		}
		sh.Pairs, sh.BaseMean, sh.VariantMean, sh.Shift, sh.Test = st.Pairs, st.BaseMean, st.VariantMean, st.Shift, st.Test
		mt.shifts = append(mt.shifts, sh.Test)
		sh.ReferenceSD = sm.referenceSD(pairs, x.f)
		sh.Threshold = math.Max(x.floor, sm.p.ShiftMarginSD*sh.ReferenceSD)
		sh.BothRight = sm.stratum(pairs, x.f, func(q *pairUnit) bool { return q.both == float64(q.copies) }, sm.strataTests())
		sh.BothWrong = sm.stratum(pairs, x.f, func(q *pairUnit) bool { return q.bw == float64(q.copies) }, sm.strataTests())
		for _, s := range []*Stratum{sh.BothRight, sh.BothWrong} {
			if s != nil {
				mt.strata = append(mt.strata, s.Test)
			}
		}
	}
}

// stratum is the paired shift of one measure over the pairs that in
// selects; nil when none of them has the measure defined.
func (sm *summarizer) stratum(pairs []*pairUnit, f func(*pairUnit) shiftAcc, in func(*pairUnit) bool, ts *tests) *Stratum {
	st := &Stratum{}
	r := stats.NewRatio(sm.G)
	var sb, sv float64
	for _, q := range pairs {
		a := f(q)
		if a.n == 0 || !in(q) {
			continue
		}
		st.Pairs++
		b, v := a.base/float64(a.n), a.vari/float64(a.n)
		sb += b
		sv += v
		r.Add(q.tmpl, v-b)
	}
	if st.Pairs == 0 {
		return nil
	}
	st.BaseMean, st.VariantMean = sb/float64(st.Pairs), sv/float64(st.Pairs)
	v, _ := r.Value()
	// Cluster-t at every number of templates: the bootstrap percentile
	// under-covers these skewed shifts from 20 templates
	// (TestShiftCoverageGrid).
	st.Shift = sm.es.addClusterT(v, sm.influence(r, 1), r.At, math.Inf(-1), math.Inf(1), nil)
	st.Test = ts.signFlip(r)
	return st
}

// StrataStream is the PCG stream of the within-stratum shift tests' Monte
// Carlo sign flips ("strt" in ASCII): their own stream, so that adding
// them left every other test's draws as they were.
const StrataStream uint64 = 0x73747274

// strataTests returns the tests of the within-stratum shifts, made on
// first use.
func (sm *summarizer) strataTests() *tests {
	if sm.tsStr == nil {
		sm.tsStr = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), StrataStream))}
	}
	return sm.tsStr
}

// referenceSD is the sample standard deviation (n − 1) across templates of
// the template means of the measure on the reference side of the pairs;
// 0 with fewer than two templates.
func (sm *summarizer) referenceSD(pairs []*pairUnit, f func(*pairUnit) shiftAcc) float64 {
	sum, n := make([]float64, sm.G), make([]int, sm.G)
	for _, q := range pairs {
		if a := f(q); a.n > 0 {
			sum[q.tmpl] += a.base / float64(a.n)
			n[q.tmpl]++
		}
	}
	var means []float64 // in template order, so the sums are deterministic
	for g := range sum {
		if n[g] > 0 {
			means = append(means, sum[g]/float64(n[g]))
		}
	}
	if len(means) < 2 {
		return 0
	}
	var m, ss float64
	for _, x := range means {
		m += x
	}
	m /= float64(len(means))
	for _, x := range means {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(means)-1))
}

// adjustShifts applies Holm across one model's shift tests: one family of
// every measure on every variant, and one of the within-stratum tests.
func (sm *summarizer) adjustShifts(mt modelTests) {
	adjust(sm.alpha, "holm across measures and variants", mt.shifts...)
	adjust(sm.alpha, "holm across strata, measures and variants", mt.strata...)
}

// shiftFlags sets the Meaningful flags of the variant's shifts and their
// strata, on the reported intervals (after the bootstrap).
func (sm *summarizer) shiftFlags(vs *VariantSummary) {
	for _, sh := range []*Shift{vs.AnswerEntropyShift, vs.EntropyShift, vs.DDCMarginShift} {
		if sh == nil {
			continue
		}
		if sh.Shift != nil && sh.Test != nil && sh.Shift.CI != nil {
			sh.Meaningful = stats.ShiftMeaningful(sh.Shift.CI.Lo, sh.Shift.CI.Hi, true, sh.Test.PAdjusted, sh.Threshold, sm.alpha)
		}
		for _, st := range []*Stratum{sh.BothRight, sh.BothWrong} {
			if st != nil && st.Shift != nil && st.Test != nil && st.Shift.CI != nil {
				st.Meaningful = stats.ShiftMeaningful(st.Shift.CI.Lo, st.Shift.CI.Hi, true, st.Test.PAdjusted, sh.Threshold, sm.alpha)
			}
		}
	}
}

// shiftMethod is Params.ShiftMargin: how a shift's margin is set.
func shiftMethod(p *Params) string {
	return fmt.Sprintf("a shift is meaningful when its reported interval lies beyond ±margin and its Holm-adjusted test reaches α; margin = max(floor, %s × the between-template standard deviation of the measure on the reference side) (Cohen 1988: 0.2 SD is a small standardized effect); floors %s bits for entropies, %s for the DDC margin; the shift is also given within pairs both right and within pairs both wrong, where accuracy does not move",
		fnum(p.ShiftMarginSD, 2), fnum(p.EntropyShiftBits, 3), fnum(p.DDCMarginShift, 3))
}
