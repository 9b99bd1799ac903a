package summary

import (
	"cmp"
	"fmt"
	"math"

	"github.com/fragility/fragility/probe/stats"
)

// UnstableAnswerPct is the default Params.UnstableAnswerPct, the margin of
// the stability verdict in percentage points of solved problems:
// NegligibleDropPP. A variant whose excess loss of solved problems over the
// placebo (StabilityExcess) is ruled out at this margin moves no more
// solved problems than a change of the prompt's tokens does, give or take
// a loss that does not matter.
const UnstableAnswerPct = NegligibleDropPP

// Stability verdicts (StabilityVerdict.Verdict).
const (
	// StabilityUnstable: for some variant the excess loss over the placebo
	// is shown: its interval lies above 0 and its Holm-adjusted sign-flip
	// test reaches α (the rule of a drop signal, stats.ClassifyDrop).
	StabilityUnstable = "answers unstable"
	// StabilityStable: for every variant the excess's interval lies below
	// the margin.
	StabilityStable = "answers stable"
	// StabilityInconclusive: neither.
	StabilityInconclusive = "stability inconclusive"
	// StabilityNotAssessed: the data cannot say; StabilityVerdict.Reason
	// says why (no placebo in the run, sampling, the reference accuracy at
	// the floor, no solved problem answered on both sides).
	StabilityNotAssessed = "stability not assessed"
)

// StabilityVerdict is a model's answer-stability verdict over the variants
// that keep the problem's answer and have an excess over the placebo
// (Paired.Excess). Null: the variant loses no more solved problems than the
// placebo, the same problem asked in other tokens (excess 0). The verdict
// reads each variant's excess interval and test as the drop verdict reads a
// paired drop: "answers unstable" when some variant's interval lies above 0
// and its test, Holm-adjusted across the k variants, reaches α (a union of
// one-sided nulls: Holm 1979); "answers stable" when every variant's
// interval lies below the margin (an intersection-union test, each at α:
// Berger 1982, "Multiparameter hypothesis testing and acceptance sampling",
// Technometrics 24:295–300); "stability inconclusive" otherwise. With
// several models each model's verdict holds at α on its own.
type StabilityVerdict struct {
	Verdict string `json:"verdict"` // Stability* constants
	// Reason says why the verdict is StabilityNotAssessed; "" otherwise.
	Reason string `json:"reason,omitempty"`
	// Variant is the one the verdict names: the smallest adjusted p for
	// unstable or inconclusive, the highest upper limit for stable.
	Variant string `json:"variant,omitempty"`
	Among   int    `json:"among"` // k: variants with an excess over the placebo
	// Excess is Variant's Paired.Excess: the counts, the excess with its
	// interval and test.
	Excess *StabilityExcess `json:"excess,omitempty"`
	// LossPct and PlaceboLossPct are Variant's and the placebo's loss of
	// solved problems (Paired.LossAmongSolved) in percent of their pairs
	// LossPairs and PlaceboLossPairs; nil when not measured.
	LossPct          *float64 `json:"loss_pct,omitempty"`
	LossPairs        int      `json:"loss_pairs,omitempty"`
	PlaceboLossPct   *float64 `json:"placebo_loss_pct,omitempty"`
	PlaceboLossPairs int      `json:"placebo_loss_pairs,omitempty"`
	MarginPct        float64  `json:"margin_pct"` // Params.UnstableAnswerPct, in percentage points
}

// Reasons of StabilityNotAssessed (StabilityVerdict.Reason).
const (
	ReasonNoPlacebo = "no placebo in the run: the rate at which other tokens alone change answers is not measured (add --variants placebo)"
	ReasonSampling  = "the run sampled (temperature > 0), so the same prompt asked again may change its answer too"
	ReasonFloor     = "the reference accuracy is at the floor: too few solved problems to lose"
	ReasonNoSolved  = "no solved problem was answered on both sides by the variant and the placebo"
)

// stabilityVerdict returns the stability verdict of m; nil when no variant
// keeps the problem's answer or none recorded its extracted answers.
func (sm *summarizer) stabilityVerdict(m *ModelSummary) *StabilityVerdict {
	var keep []*VariantSummary
	var placebo *VariantSummary
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Variant == PlaceboVariant {
			placebo = v
			continue
		}
		if v.Paired != nil && v.Paired.AnswerChanged != nil && answersRecorded(v.Paired) {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	sv := &StabilityVerdict{Verdict: StabilityNotAssessed, MarginPct: sm.p.UnstableAnswerPct}
	var cs []*VariantSummary
	for _, v := range keep {
		if v.Paired.Excess != nil && v.Paired.Excess.ExcessPP != nil && v.Paired.Excess.Test != nil {
			cs = append(cs, v)
		}
	}
	sv.Among = len(cs)
	switch ref := m.Variant(cmp.Or(keep[0].Paired.Reference, BaseVariant)); {
	case placebo == nil:
		sv.Reason = ReasonNoPlacebo
	case sm.p.Temperature > 0:
		sv.Reason = ReasonSampling
	case ref != nil && ref.AccuracyPct != nil && ref.AccuracyPct.Value < FloorAccuracyPct:
		sv.Reason = ReasonFloor
	case len(cs) == 0:
		sv.Reason = ReasonNoSolved
	}
	if sv.Reason != "" {
		return sv
	}
	rule := stats.DropRule{Negligible: sv.MarginPct, Strong: math.Inf(1), Alpha: sm.alpha}
	pick, allBelow := cs[0], true
	for _, v := range cs {
		x := v.Paired.Excess
		l := limits(x.ExcessPP.CI)
		allBelow = allBelow && l.Below(sv.MarginPct)
		if x.Test.PAdjusted < pick.Paired.Excess.Test.PAdjusted {
			pick = v
		}
	}
	shown := false
	for _, v := range cs {
		x := v.Paired.Excess
		if stats.IsSignal(stats.ClassifyDrop(limits(x.ExcessPP.CI), x.Test.PAdjusted, rule)) {
			if !shown || x.Test.PAdjusted < pick.Paired.Excess.Test.PAdjusted {
				pick = v
			}
			shown = true
		}
	}
	switch {
	case shown:
		sv.Verdict = StabilityUnstable
	case allBelow:
		sv.Verdict = StabilityStable
		for _, v := range cs {
			if v.Paired.Excess.ExcessPP.CI.Hi > pick.Paired.Excess.ExcessPP.CI.Hi {
				pick = v
			}
		}
	default:
		sv.Verdict = StabilityInconclusive
	}
	sv.Variant, sv.Excess = pick.Variant, pick.Paired.Excess
	if r := pick.Paired.LossAmongSolved; r != nil && r.SharePct != nil {
		sv.LossPct, sv.LossPairs = &r.SharePct.Value, r.Pairs
	}
	if placebo.Paired != nil {
		if r := placebo.Paired.LossAmongSolved; r != nil && r.SharePct != nil {
			sv.PlaceboLossPct, sv.PlaceboLossPairs = &r.SharePct.Value, r.Pairs
		}
	}
	return sv
}

// answersRecorded reports whether a variant's changed answers can be read:
// when every pair keeps its answer, a pair whose correctness flipped must
// have changed its answer, so fewer changed answers than flips means the
// extracted answers were not recorded (trials built by hand).
func answersRecorded(pr *Paired) bool {
	r := pr.AnswerChanged
	return r.Pairs < pr.Pairs || r.Count+1e-9 >= pr.BaseOnly.Count+pr.VariantOnly.Count
}

// changedInterval is the interval of a changed share at confidence conf,
// MethodKornGraubard (Korn & Graubard 1998, Survey Methodology 24:193–201):
// the Clopper–Pearson interval of the share p on its effective sample size
//
//	n* = min(n, p(1−p)/v) · (t_{(1+c)/2, n−1} / t_{(1+c)/2, G−1})²
//
// (v the share's CR1 variance, stats.EffectiveN; the degrees-of-freedom
// factor with G templates) with p·n* changes; when every template gives the
// same share (SE 0, as when no answer changed) no design effect can be
// estimated and n* is its upper bound, Kish's effective number of
// templates (Rate.KishTemplates; each template one unit). nil when
// undefined (no pairs, or conf not in (0, 1)).
//
// Cluster-t on the share (its CR1 SE) is symmetric and fails near 0 and 1,
// and Wilson over the pairs treats a template's pairs as independent: in
// TestStabilityCoverageGrid they covered 50–73% at true shares of 1–10%
// with ρ ≥ 0.5 and 10 pairs per template, and with no answer changed the
// pairs' Wilson said "answers stable" at a true share equal to the margin
// in up to 26% of runs.
func changedInterval(r *Rate, conf float64) *Interval {
	n := float64(r.Pairs)
	if !(n > 0) || !(conf > 0 && conf < 1) {
		return nil
	}
	e := r.SharePct
	p := max(0, min(1, r.Count/n))
	neff := r.KishTemplates
	if e.SE != nil && *e.SE > 0 {
		kg := stats.EffectiveN(p, n, (*e.SE/100)*(*e.SE/100), n)
		if df := r.VarianceDF; df >= 1 && n >= 2 {
			f := stats.TQuantile((1+conf)/2, n-1) / stats.TQuantile((1+conf)/2, df)
			kg *= min(1, f*f)
		}
		neff = max(neff, kg)
	}
	if !(neff > 0) {
		neff = float64(max(e.Clusters, 1))
	}
	lo, hi, ok := stats.ClopperPearson(p*neff, neff, conf)
	if !ok {
		return nil
	}
	return &Interval{Lo: 100 * lo, Hi: 100 * hi, Method: MethodKornGraubard}
}

// selection sets, with several models, each model's verdict test
// Holm-adjusted across the models (each model's within-model adjusted p,
// one per model: a valid p-value of the model's intersection null, so Holm
// over them holds the family-wise rate over all models), the interval of
// the verdict variant widened for having been picked among k, the
// stability verdict and the headline.
func (sm *summarizer) selection() {
	var tests []*Test
	var holders []*ModelSummary
	for i := range sm.s.Models {
		m := &sm.s.Models[i]
		m.Stability = sm.stabilityVerdict(m)
		v := m.Variant(m.VerdictVariant)
		if v == nil || v.Paired == nil || v.Paired.Test == nil {
			m.Headline = headline(m)
			continue
		}
		sm.pickedInterval(m, v)
		sm.pickedStrength(m, v)
		sm.nonRandomized(m, v)
		t := *v.Paired.Test
		t.P = t.PAdjusted
		tests = append(tests, &t)
		holders = append(holders, m)
		m.Headline = headline(m)
	}
	if len(tests) < 2 {
		return
	}
	adjust(sm.alpha, "holm across models", tests...)
	for i, m := range holders {
		p := tests[i].PAdjusted
		m.VerdictPAcrossModels = &p
		m.VerdictModels = len(tests)
	}
}

// pickedInterval sets m.VerdictPickedCI when the verdict variant was
// picked as the most severe among k > 1 variants: the paired drop's
// cluster-t interval at confidence 1 − α/k (Bonferroni), so that the
// interval printed with a picked variant keeps its coverage whichever was
// picked. None when the drop's SE is 0 (every template gave the same
// value): a cluster-t interval would then have zero width.
func (sm *summarizer) pickedInterval(m *ModelSummary, v *VariantSummary) {
	k := v.Paired.Test.Family
	e := v.Paired.PairedDropPP
	if m.VerdictRule == "primary" || k < 2 || e == nil || e.SE == nil || !(*e.SE > 0) {
		return
	}
	conf := 1 - sm.alpha/float64(k)
	if lo, hi, ok := stats.ClusterT(e.Value, *e.SE, e.Clusters, conf); ok {
		m.VerdictPickedCI = &Interval{Lo: math.Max(lo, -100), Hi: math.Min(hi, 100), Method: MethodClusterT + fmt.Sprintf(", Bonferroni 1 − α/%d", k)}
		m.VerdictPickedAmong = k
	}
}

// dropRule is the run's drop rule (stats.ClassifyDrop).
func (sm *summarizer) dropRule() stats.DropRule {
	return stats.DropRule{Negligible: sm.p.NegligibleDropPP, Strong: sm.p.StrongDropPP, Alpha: sm.alpha}
}

// pickedStrength reads the strength of a signal on a variant picked as the
// most severe of k from its interval widened for the pick
// (VerdictPickedCI): ClassifyDrop on that interval and the adjusted test,
// never stronger than the verdict its own interval gave. The verdict the
// own interval gave is kept in VerdictUnpicked when they differ.
func (sm *summarizer) pickedStrength(m *ModelSummary, v *VariantSummary) {
	if m.VerdictPickedCI == nil || !stats.IsSignal(m.Verdict) {
		return
	}
	w := stats.ClassifyDrop(limits(m.VerdictPickedCI), v.Paired.Test.PAdjusted, sm.dropRule())
	if stats.Severity(w) < stats.Severity(m.Verdict) {
		m.VerdictUnpicked, m.Verdict = m.Verdict, w
	}
}

// nonRandomized sets m.VerdictNonRandomized and VerdictPNonRandomized when
// the verdict variant v's test was randomized at ties: Holm over the tests
// of v's family (same adjustment, same model) with each randomized test's
// conservative p, and ClassifyDrop on v's interval with its open limits
// closed. A verdict that judged nothing (floor, uninformative, no
// detectable drop) is its own non-randomized verdict.
func (sm *summarizer) nonRandomized(m *ModelSummary, v *VariantSummary) {
	t := v.Paired.Test
	if t.TieU <= 0 {
		return
	}
	var ps []float64
	at := -1
	for i := range m.Variants {
		w := &m.Variants[i]
		if w.Paired == nil || w.Paired.Test == nil || w.Paired.Test.Adjustment != t.Adjustment || w.Primary != v.Primary {
			continue
		}
		p := w.Paired.Test.P
		if w.Paired.Test.TieU > 0 {
			p = w.Paired.Test.PNonRandomized
		}
		if w == v {
			at = len(ps)
		}
		ps = append(ps, p)
	}
	if at < 0 {
		return
	}
	p := stats.Holm(ps)[at]
	m.VerdictPNonRandomized = &p
	m.VerdictNonRandomized = m.Verdict
	if !stats.IsSignal(m.Verdict) && m.Verdict != VerdictInconclusive {
		return
	}
	l := limits(v.Paired.PairedDropPP.CI)
	l.LoOpen, l.HiOpen = false, false
	w := stats.ClassifyDrop(l, p, sm.dropRule())
	if x := stats.ClassifyDrop(limits(m.VerdictPickedCI), p, sm.dropRule()); m.VerdictPickedCI != nil && stats.Severity(x) < stats.Severity(w) {
		w = x // the picked variant's strength, as pickedStrength reads it
	}
	if stats.Severity(m.Verdict) < stats.Severity(w) {
		w = m.Verdict // the conservative decision never shows more
	}
	m.VerdictNonRandomized = w
}

// headline is the first line of a model's verdict: the stability verdict
// when it says something (unstable or stable), then the drop's verdict
// ("drop inconclusive" for inconclusive); the drop's verdict alone
// otherwise.
func headline(m *ModelSummary) string {
	drop := m.Verdict
	if drop == VerdictInconclusive || drop == VerdictUninformative {
		drop = "drop " + drop
	}
	s := m.Stability
	if s == nil || (s.Verdict != StabilityUnstable && s.Verdict != StabilityStable) {
		return drop
	}
	h := s.Verdict + " under " + s.Variant
	if s.Verdict == StabilityStable {
		h = fmt.Sprintf("%s under all %d answer-keeping variants", s.Verdict, s.Among)
		if s.Among == 1 {
			h = s.Verdict + " under " + s.Variant
		}
	}
	if drop == "" {
		return h
	}
	return h + "; " + drop
}
