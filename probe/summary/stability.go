package summary

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"

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
	// unstable or inconclusive (on ties the larger excess), the highest
	// upper limit for stable.
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
	// NotAssessed names the variants that keep the answer but have no
	// excess over the placebo (paired with another reference, or no solved
	// instance): "answers stable" is not said while any is left.
	NotAssessed []string `json:"not_assessed,omitempty"`
	// BudgetConfounded: the excess that would have shown instability comes
	// with the variant cut by the budget more often than the placebo by
	// more than the margin (StabilityExcess.BudgetConfounded), so the
	// verdict is inconclusive.
	BudgetConfounded bool `json:"budget_confounded,omitempty"`
	// NonRandomized and PNonRandomized are, when Variant's excess test was
	// randomized at ties, the verdict the conservative test gives (every
	// tie counted against instability, u = 1: its own inversion and
	// Holm-adjusted p) and that p; "" and nil otherwise.
	NonRandomized  string   `json:"verdict_non_randomized,omitempty"`
	PNonRandomized *float64 `json:"p_non_randomized,omitempty"`
	// PAcrossModels is, with several models, Variant's adjusted p
	// Holm-adjusted again across the Models models with an excess test; an
	// "answers unstable" whose p across models exceeds α is inconclusive.
	PAcrossModels *float64 `json:"p_across_models,omitempty"`
	Models        int      `json:"models,omitempty"`
}

// Reasons of StabilityNotAssessed (StabilityVerdict.Reason).
const (
	ReasonNoPlacebo = "no placebo in the run: the rate at which other tokens alone change answers is not measured (add --variants placebo)"
	ReasonSampling  = "the run sampled (temperature > 0), so the same prompt asked again may change its answer too"
	ReasonFloor     = "the reference accuracy is at the floor: too few solved problems to lose"
	ReasonNoSolved  = "no solved problem was answered on both sides by the variant and the placebo"
)

// stabilityVerdict returns the stability verdict of model mi (m); nil when
// no variant keeps the problem's answer or none recorded its extracted
// answers.
func (sm *summarizer) stabilityVerdict(mi int, m *ModelSummary) *StabilityVerdict {
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
		if x := v.Paired.Excess; x != nil && x.ExcessPP != nil && x.Test != nil {
			cs = append(cs, v)
		} else {
			sv.NotAssessed = append(sv.NotAssessed, v.Variant)
		}
	}
	sv.Among = len(cs)
	switch {
	case placebo == nil:
		sv.Reason = ReasonNoPlacebo
	case sm.p.Temperature > 0:
		sv.Reason = ReasonSampling
	case atFloor(m.Variant(cmp.Or(placebo.Paired.Reference, BaseVariant))):
		sv.Reason = ReasonFloor
	case len(cs) == 0:
		sv.Reason = ReasonNoSolved
	}
	if sv.Reason != "" {
		return sv
	}
	rule := sm.stabilityRule()
	pick, allBelow, shown := cs[0], len(sv.NotAssessed) == 0, false
	for _, v := range cs {
		x := v.Paired.Excess
		allBelow = allBelow && limits(x.ExcessPP.CI).Below(sv.MarginPct)
		signal := stats.IsSignal(stats.ClassifyDrop(limits(x.ExcessPP.CI), x.Test.PAdjusted, rule))
		px := pick.Paired.Excess
		switch {
		case signal && !shown, signal == shown && x.Test.PAdjusted < px.Test.PAdjusted,
			signal == shown && x.Test.PAdjusted == px.Test.PAdjusted && x.ExcessPP.Value > px.ExcessPP.Value:
			pick = v
		}
		shown = shown || signal
	}
	switch {
	case shown && pick.Paired.Excess.BudgetConfounded:
		sv.Verdict, sv.BudgetConfounded = StabilityInconclusive, true
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
	sm.stabilityNonRandomized(sv, cs)
	return sv
}

// stabilityRule is the rule an excess is read by: a signal as
// stats.ClassifyDrop gives one (interval above 0, adjusted test at α), the
// margin Params.UnstableAnswerPct, no strength.
func (sm *summarizer) stabilityRule() stats.DropRule {
	return stats.DropRule{Negligible: sm.p.UnstableAnswerPct, Strong: math.Inf(1), Alpha: sm.alpha}
}

// atFloor reports whether a reference variant's accuracy is below
// FloorAccuracyPct.
func atFloor(ref *VariantSummary) bool {
	return ref != nil && ref.AccuracyPct != nil && ref.AccuracyPct.Value < FloorAccuracyPct
}

// stabilityNonRandomized sets sv.NonRandomized and PNonRandomized when the
// verdict variant's excess test was randomized at ties: each randomized
// test of the family run again with u = 1 (conservative), Holm over them,
// and the verdict variant's excess classified on its conservative
// interval, as stabilityVerdict classifies it.
func (sm *summarizer) stabilityNonRandomized(sv *StabilityVerdict, cs []*VariantSummary) {
	if sv.Excess.Test.TieU <= 0 {
		return
	}
	ps := make([]float64, len(cs))
	var ci stats.Limits
	at := 0
	for i, v := range cs {
		x := v.Paired.Excess
		ps[i] = x.Test.P
		if x.Test.TieU > 0 {
			var l stats.Limits
			ps[i], l = sm.conservative(x.ExcessPP, x.dr)
			if x == sv.Excess {
				ci, at = l, i
			}
		}
	}
	p := stats.Holm(ps)[at]
	sv.PNonRandomized = &p
	switch {
	case stats.IsSignal(stats.ClassifyDrop(ci, p, sm.stabilityRule())) && !sv.BudgetConfounded:
		sv.NonRandomized = StabilityUnstable
	case sv.Verdict == StabilityStable && ci.Below(sv.MarginPct):
		sv.NonRandomized = StabilityStable
	default:
		sv.NonRandomized = StabilityInconclusive
	}
}

// ConservativeStream is the PCG stream of the sign flips of the
// conservative (non-randomized) decisions ("cons").
const ConservativeStream uint64 = 0x636f6e73

// conservative returns the sign-flip p and the reported interval of an
// equal-weight difference e (ratio dr) with the test not randomized (u = 1:
// every tie counted against the alternative, Lehmann & Romano 2005
// §15.2.1), the interval chosen by the rule of pairedDropCI.
func (sm *summarizer) conservative(e *Estimate, dr stats.Ratio) (float64, stats.Limits) {
	if sm.tsCons == nil {
		sm.tsCons = &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), ConservativeStream))}
	}
	t, sf, skew := sm.tsCons.signFlipCI(dr, 1)
	c := *e
	c.SignFlip, c.SkewT = sf, skew
	if t == nil {
		return 1, limits(nil)
	}
	return t.P, limits(pairedDropCI(&c, e.Degenerate, sm.p.FewTemplates))
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
		sm.s.Models[i].Stability = sm.stabilityVerdict(i, &sm.s.Models[i])
	}
	sm.stabilityAcrossModels()
	for i := range sm.s.Models {
		m := &sm.s.Models[i]
		v := m.Variant(m.VerdictVariant)
		if v == nil || v.Paired == nil || v.Paired.Test == nil {
			m.Headline = headline(m)
			continue
		}
		sm.pickedInterval(m, v)
		sm.pickedStrength(m, v)
		sm.nonRandomized(i, m, v)
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
// never stronger than the verdict its own interval gave, and never weaker
// than a moderate signal (the widened interval reads the strength only). The verdict the
// own interval gave is kept in VerdictUnpicked when they differ.
func (sm *summarizer) pickedStrength(m *ModelSummary, v *VariantSummary) {
	if m.VerdictPickedCI == nil || !stats.IsSignal(m.Verdict) {
		return
	}
	w := stats.ClassifyDrop(limits(m.VerdictPickedCI), v.Paired.Test.PAdjusted, sm.dropRule())
	if !stats.IsSignal(w) {
		// The widened interval decides the strength, not whether the drop
		// the adjusted test and the variant's own interval showed exists.
		w = stats.VerdictUnclearSize
		if m.VerdictPickedCI.Hi < sm.p.StrongDropPP {
			w = stats.VerdictModerate
		}
	}
	if stats.Severity(w) < stats.Severity(m.Verdict) {
		m.VerdictUnpicked, m.Verdict = m.Verdict, w
	}
}

// nonRandomized sets m.VerdictNonRandomized and VerdictPNonRandomized when
// the verdict variant v's test was randomized at ties: every randomized
// test of v's family (same adjustment, same model) run again with u = 1
// (conservative; sm.conservative), Holm over them, and v's drop
// classified on its conservative interval, its strength read as
// pickedStrength reads it; never stronger than the verdict. A verdict that
// judged nothing (floor, uninformative) is its own.
func (sm *summarizer) nonRandomized(mi int, m *ModelSummary, v *VariantSummary) {
	t := v.Paired.Test
	if t.TieU <= 0 {
		return
	}
	var ps []float64
	var ci stats.Limits
	at := -1
	for i := range m.Variants {
		w := &m.Variants[i]
		if w.Paired == nil || w.Paired.Test == nil || w.Paired.Test.Adjustment != t.Adjustment || w.Primary != v.Primary {
			continue
		}
		p := w.Paired.Test.P
		if w.Paired.Test.TieU > 0 && w.Paired.PairedDropPP != nil {
			var l stats.Limits
			p, l = sm.conservative(w.Paired.PairedDropPP, sm.dropRatio(sm.cellPairs(mi, w.Variant)))
			if w == v {
				ci = l
			}
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
	if m.Verdict == VerdictFloor || m.Verdict == VerdictUninformative {
		return
	}
	w := stats.ClassifyDrop(ci, p, sm.dropRule())
	if x := stats.ClassifyDrop(limits(m.VerdictPickedCI), p, sm.dropRule()); m.VerdictPickedCI != nil && stats.IsSignal(w) && stats.IsSignal(x) && stats.Severity(x) < stats.Severity(w) {
		w = x
	}
	if w == VerdictNoDrop && m.Verdict != VerdictNoDrop {
		w = m.Verdict // the conservative interval is wider: it rules out no more
	}
	if stats.Severity(m.Verdict) < stats.Severity(w) {
		w = m.Verdict // the conservative decision never shows more
	}
	m.VerdictNonRandomized = w
}

// cellPairs returns the pairs of model mi's variant, nil when it has none.
func (sm *summarizer) cellPairs(mi int, variant string) []*pairUnit {
	vi, ok := sm.vIdx[variant]
	if !ok || sm.cells[mi][vi] == nil {
		return nil
	}
	c := sm.cells[mi][vi]
	out := make([]*pairUnit, len(c.pairOrder))
	for i, k := range c.pairOrder {
		out[i] = c.pairs[k]
	}
	return out
}

// stabilityAcrossModels Holm-adjusts, with several models, each model's
// stability test (its verdict variant's adjusted excess p) across the
// models that have one; an "answers unstable" whose p across models
// exceeds α becomes inconclusive, as the drop verdict's selection does.
func (sm *summarizer) stabilityAcrossModels() {
	var ps []float64
	var svs []*StabilityVerdict
	for i := range sm.s.Models {
		if sv := sm.s.Models[i].Stability; sv != nil && sv.Excess != nil && sv.Excess.Test != nil && sv.Reason == "" {
			ps = append(ps, sv.Excess.Test.PAdjusted)
			svs = append(svs, sv)
		}
	}
	if len(ps) < 2 {
		return
	}
	adj := stats.Holm(ps)
	for i, sv := range svs {
		p := adj[i]
		sv.PAcrossModels, sv.Models = &p, len(ps)
		if sv.Verdict == StabilityUnstable && p > sm.alpha {
			sv.Verdict = StabilityInconclusive
		}
	}
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
