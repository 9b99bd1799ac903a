package summary

import (
	"fmt"
	"math"

	"github.com/fragility/fragility/probe/stats"
)

// UnstableAnswerPct is the default Params.UnstableAnswerPct, the margin of
// the stability verdict in percent of pairs: NegligibleDropPP. For a
// variant that keeps the problem's answer, a pair can change from right to
// wrong (or back) only if its answer changed, so the share of changed
// answers bounds the paired drop: |drop| ≤ changed share. A changed share
// whose interval lies below the negligible drop margin therefore rules out
// a drop that matters, and one whose interval lies above it says the
// variant moves more answers than a drop could move without mattering,
// whichever way they move.
const UnstableAnswerPct = NegligibleDropPP

// Stability verdicts (StabilityVerdict.Verdict).
const (
	// StabilityUnstable: for some variant the interval of the changed share
	// lies above the margin.
	StabilityUnstable = "answers unstable"
	// StabilityStable: for every variant the interval lies below it.
	StabilityStable = "answers stable"
	// StabilityInconclusive: neither.
	StabilityInconclusive = "stability inconclusive"
	// StabilityNotAssessed: the run sampled (temperature > 0), so the same
	// prompt re-asked may change its answer too, at a rate this run does
	// not measure: the null is unknown.
	StabilityNotAssessed = "stability not assessed under sampling"
)

// StabilityVerdict is a model's answer-stability verdict over the variants
// that keep the problem's answer (Paired.AnswerChanged). Null: under
// greedy decoding (Params.Temperature 0) the same prompt asked again gets
// the same answer, so a variant that changed nothing the model reads would
// change no answer (rate NullPct = 0); the verdict asks whether the changed
// share clears the margin MarginPct, on its interval at confidence
// 1 − α/(k·M) (Bonferroni over the k = Among variants it may pick from and
// the M = Models models), a one-sided test at α/(2kM) on each side.
type StabilityVerdict struct {
	Verdict string `json:"verdict"` // Stability* constants
	// Variant is the one the verdict names: the highest lower bound for
	// unstable or inconclusive, the highest upper bound for stable.
	Variant string `json:"variant"`
	Among   int    `json:"among"` // k: variants with pairs whose problems keep their answer
	// Models is M, the models of the run with a stability verdict: the
	// intervals are at 1 − α/(k·M), Bonferroni over the variants and the
	// models, so that the stability verdicts of a run hold together at α.
	Models     int     `json:"models"`
	Pairs      int     `json:"pairs"`       // Variant's such pairs
	ChangedPct float64 `json:"changed_pct"` // Variant's share of them whose answer changed
	// CI is Variant's interval at confidence 1 − α/(k·M), MethodKornGraubard:
	// Clopper–Pearson on the share's effective sample size (from its CR1
	// standard error with the t degrees-of-freedom factor for G templates,
	// or Kish's effective number of templates when the share does not vary
	// between templates; changedInterval).
	CI            *Interval `json:"ci"`
	ConfidencePct float64   `json:"confidence_pct"` // 100·(1 − α/(k·M))
	NullPct       float64   `json:"null_pct"`       // the re-ask rate under the null: 0 under greedy decoding
	MarginPct     float64   `json:"margin_pct"`     // Params.UnstableAnswerPct
}

// stabilityVerdict returns the stability verdict of m; nil when no variant
// has pairs whose problems keep their answer.
func (sm *summarizer) stabilityVerdict(m *ModelSummary, models int) *StabilityVerdict {
	type cand struct {
		v  *VariantSummary
		iv *Interval
	}
	var cs []cand
	for i := range m.Variants {
		if v := &m.Variants[i]; v.Paired != nil && v.Paired.AnswerChanged != nil && answersRecorded(v.Paired) {
			cs = append(cs, cand{v: v})
		}
	}
	if len(cs) == 0 {
		return nil
	}
	k := len(cs)
	conf := 1 - sm.alpha/float64(k*models)
	sv := &StabilityVerdict{Among: k, Models: models, ConfidencePct: 100 * conf, MarginPct: sm.p.UnstableAnswerPct}
	for i := range cs {
		cs[i].iv = changedInterval(cs[i].v.Paired.AnswerChanged, conf)
	}
	lo, hi := -1, -1
	allBelow := true
	for i, c := range cs {
		if c.iv == nil {
			allBelow = false
			continue
		}
		if lo < 0 || c.iv.Lo > cs[lo].iv.Lo {
			lo = i
		}
		if hi < 0 || c.iv.Hi > cs[hi].iv.Hi {
			hi = i
		}
		allBelow = allBelow && c.iv.Hi < sv.MarginPct
	}
	pick := cs[0]
	switch {
	case sm.p.Temperature > 0:
		sv.Verdict = StabilityNotAssessed
		if lo >= 0 {
			pick = cs[lo]
		}
	case lo >= 0 && cs[lo].iv.Lo > sv.MarginPct:
		sv.Verdict, pick = StabilityUnstable, cs[lo]
	case allBelow:
		sv.Verdict, pick = StabilityStable, cs[hi]
	default:
		sv.Verdict = StabilityInconclusive
		if lo >= 0 {
			pick = cs[lo]
		}
	}
	r := pick.v.Paired.AnswerChanged
	sv.Variant, sv.Pairs, sv.ChangedPct, sv.CI = pick.v.Variant, r.Pairs, r.SharePct.Value, pick.iv
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
	withStability := 0
	for i := range sm.s.Models {
		if sm.stabilityVerdict(&sm.s.Models[i], 1) != nil {
			withStability++
		}
	}
	for i := range sm.s.Models {
		m := &sm.s.Models[i]
		m.Stability = sm.stabilityVerdict(m, max(withStability, 1))
		v := m.Variant(m.VerdictVariant)
		if v == nil || v.Paired == nil || v.Paired.Test == nil {
			m.Headline = headline(m)
			continue
		}
		sm.pickedInterval(m, v)
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

// headline is the first line of a model's verdict: the stability verdict
// when it says something (unstable or stable), then the drop's verdict
// ("drop inconclusive" for inconclusive); the drop's verdict alone
// otherwise.
func headline(m *ModelSummary) string {
	drop := m.Verdict
	if drop == VerdictInconclusive {
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
