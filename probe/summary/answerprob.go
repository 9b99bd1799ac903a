package summary

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
)

// AnswerLogProbShift is the paired shift of a log-probability of the right
// answer (natural log, nats) from a variant's reference to the variant:
// the mean over distinct pairs of (variant − reference), over the pairs
// whose two trials were both scored. The intervals, test and power are
// those of the other shifts: clustered by template, the sign-flip test over
// templates with Holm across the model's variants, and the minimum
// detectable shift from the variance components of the per-pair
// differences. A negative shift means the variant lowered the right
// answer's probability. It is used for two measures:
//
// VariantSummary.AnswerLogProbShift, the right answer after the model's own
// reasoning (soft accuracy; results.Trial AnswerLogProb): the answer
// teacher-forced after the model's text. It follows whether that text
// reached the right answer (near 0 nats when it did, far below when it
// reached another or the budget cut it), so it is accuracy plus a
// truncation artefact, not belief; the two sides of a pair are forced after
// different texts, and the sum moves with the answer's digit count.
// FinishedPairs and PerToken take out the truncation and the digit count.
//
// VariantSummary.AnswerFirstLogProbShift, the answer first (results.Trial
// AnswerFirstLogProb): the answer forced right after the prompt, before
// any generated text, so that a pair differs only in its prompts: how much
// the prompt alone lets the model put on the right answer.
type AnswerLogProbShift struct {
	Pairs       int       `json:"pairs"`
	BaseMean    float64   `json:"base_mean_nats"`    // mean log-probability of the reference side
	VariantMean float64   `json:"variant_mean_nats"` // mean log-probability of the variant side
	Shift       *Estimate `json:"shift_nats"`        // VariantMean − BaseMean with its intervals
	Test        *Test     `json:"test"`              // sign-flip test, Holm across the model's variants
	// Shown is true when the reported interval excludes 0 and the adjusted
	// test reaches α.
	Shown bool `json:"shown"`
	// MDENats is the shift (either sign, nats) a two-sided test at level
	// Alpha (α over the Holm family) detects with probability Power, from
	// Templates templates of PairsPerTemplate distinct pairs and the
	// variance components Between and Within (nats²) of the per-pair
	// difference (stats.VarianceComponents, stats.MDE); nil with fewer than
	// two templates.
	MDENats          *float64 `json:"mde_nats"`
	Alpha            float64  `json:"alpha"`
	Power            float64  `json:"power"`
	Templates        int      `json:"templates"`
	PairsPerTemplate float64  `json:"pairs_per_template"`
	Between          float64  `json:"between_variance_nats2"`
	Within           float64  `json:"within_variance_nats2"`
	ICC              float64  `json:"icc"`
	// PerTemplate is the mean shift of each template's pairs, in template
	// order (the report's figure).
	PerTemplate []TemplateShift `json:"per_template"`
	// FinishedPairs is the same shift over the pairs whose two sides both
	// finished (neither stop reason is max_tokens: the budget cut neither
	// text), set for the answer after the model's reasoning only; nil
	// without such pairs. Its tests are a Holm family of their own across
	// the model's variants.
	FinishedPairs *AnswerLogProbShift `json:"finished_pairs,omitempty"`
	// PerToken is the same shift of each trial's log-probability divided
	// by the number of its scored tokens (nats per forced token), over the
	// same pairs as the shift, so that an answer's digit count does not
	// move it; its tests are a Holm family of their own.
	PerToken *AnswerLogProbShift `json:"per_token,omitempty"`
}

// AnswerProbStream is the PCG stream (second seed word) of the Monte Carlo
// sign flips of the answer log-probability shifts added beside the first
// one (the answer first, the finished pairs, per token), "aprb" in ASCII:
// apart from PermutationStream, so that adding them changes no other test.
const AnswerProbStream uint64 = 0x61707262

// TemplateShift is one template's mean paired shift (nats) over its Pairs
// distinct pairs.
type TemplateShift struct {
	Template string  `json:"template"`
	Pairs    int     `json:"pairs"`
	Shift    float64 `json:"shift_nats"`
}

// logProbPair is one distinct (reference prompt, variant prompt) pair of
// scored trials: the sums over its copies.
type logProbPair struct {
	tmpl       int
	template   string
	n          int
	base, vari float64
}

// logProbMeasure reads one trial's log-probability of a measure; ok is
// false when the trial was not scored so.
type logProbMeasure func(t *results.Trial) (float64, bool)

// afterLogProb is the right answer after the model's own reasoning
// (AnswerLogProb), and afterPerToken the same per scored token.
func afterLogProb(t *results.Trial) (float64, bool) { return t.AnswerLogProb, t.AnswerScored }

func afterPerToken(t *results.Trial) (float64, bool) {
	if !t.AnswerScored || t.AnswerLogProbTokens <= 0 {
		return 0, false
	}
	return t.AnswerLogProb / float64(t.AnswerLogProbTokens), true
}

// firstLogProb is the answer first (AnswerFirstLogProb), and firstPerToken
// the same per scored token.
func firstLogProb(t *results.Trial) (float64, bool) {
	return t.AnswerFirstLogProb, t.AnswerFirstLogProbTokens > 0
}

func firstPerToken(t *results.Trial) (float64, bool) {
	if t.AnswerFirstLogProbTokens <= 0 {
		return 0, false
	}
	return t.AnswerFirstLogProb / float64(t.AnswerFirstLogProbTokens), true
}

// finishedOnly keeps a pair whose two sides both finished (neither stop
// reason is max_tokens).
func finishedOnly(b, t *results.Trial) bool {
	return b.StopReason != "max_tokens" && t.StopReason != "max_tokens"
}

// logProbFamily is one measure's shifts: where each variant's shift goes,
// how it is read, which pairs count, and the Monte Carlo stream of its
// tests.
type logProbFamily struct {
	measure logProbMeasure
	keep    func(b, t *results.Trial) bool // nil: every pair scored on both sides
	set     func(vs *VariantSummary, sh *AnswerLogProbShift)
	ts      *tests
}

// answerLogProbShifts sets every variant's AnswerLogProbShift and
// AnswerFirstLogProbShift (with their finished-pairs and per-token
// shifts) from the trials that carry them (none in a run recorded before
// the answer-scoring pass or, for the answer first, before answer-score/2:
// the fields stay nil), and adjusts the tests of each model and measure
// across its variants (Holm). The first shift's tests draw from the
// permutation stream, as before the others existed; the others' from
// AnswerProbStream. It runs before the bootstrap.
func (sm *summarizer) answerLogProbShifts() {
	own := &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), AnswerProbStream))}
	families := []logProbFamily{
		{measure: afterLogProb, set: func(vs *VariantSummary, sh *AnswerLogProbShift) { vs.AnswerLogProbShift = sh }, ts: sm.ts},
		{measure: afterLogProb, keep: finishedOnly, set: func(vs *VariantSummary, sh *AnswerLogProbShift) {
			if vs.AnswerLogProbShift != nil {
				vs.AnswerLogProbShift.FinishedPairs = sh
			}
		}, ts: own},
		{measure: afterPerToken, set: func(vs *VariantSummary, sh *AnswerLogProbShift) {
			if vs.AnswerLogProbShift != nil {
				vs.AnswerLogProbShift.PerToken = sh
			}
		}, ts: own},
		{measure: firstLogProb, set: func(vs *VariantSummary, sh *AnswerLogProbShift) { vs.AnswerFirstLogProbShift = sh }, ts: own},
		{measure: firstPerToken, set: func(vs *VariantSummary, sh *AnswerLogProbShift) {
			if vs.AnswerFirstLogProbShift != nil {
				vs.AnswerFirstLogProbShift.PerToken = sh
			}
		}, ts: own},
	}
	for mi := range sm.models {
		for _, fam := range families {
			var shifts []*AnswerLogProbShift
			for vi := range sm.s.Variants {
				c := sm.cells[mi][vi]
				if c == nil || c.vs.Variant == BaseVariant {
					continue
				}
				if sh := sm.logProbShift(logProbPairs(sm, mi, c.vs.Variant, fam.measure, fam.keep), fam.ts); sh != nil {
					fam.set(c.vs, sh)
					shifts = append(shifts, sh)
				}
			}
			sm.answerLogProbFamily(shifts)
		}
	}
}

// answerLogProbFamily adjusts the tests of one model's shifts across its
// variants (Holm) and sets each shift's minimum detectable shift at the
// level of the family's first step.
func (sm *summarizer) answerLogProbFamily(shifts []*AnswerLogProbShift) {
	tests := make([]*Test, len(shifts))
	for i, sh := range shifts {
		tests[i] = sh.Test
	}
	adjust(sm.alpha, "holm", tests...)
	for _, sh := range shifts {
		sm.answerLogProbPower(sh)
	}
}

// logProbPairs returns the distinct pairs of model mi and variant whose
// trials were both scored by measure (and that keep, when not nil,
// keeps), in trial order.
func logProbPairs(sm *summarizer, mi int, variant string, measure logProbMeasure, keep func(b, t *results.Trial) bool) []*logProbPair {
	byKey := map[string]*logProbPair{}
	var out []*logProbPair
	for i := range sm.trials {
		t := &sm.trials[i]
		if t.Variant != variant || t.Skipped() || sm.modelIdx[modelKey(t)] != mi {
			continue
		}
		tv, ok := measure(t)
		if !ok {
			continue
		}
		bi, ok := sm.seen[trialKey{modelKey(t), t.TemplateID, t.ReferenceVariant(), t.Instance}]
		if !ok {
			continue
		}
		b := &sm.trials[bi]
		bv, ok := measure(b)
		if !ok || b.Skipped() || !finiteAll(bv, tv) || keep != nil && !keep(b, t) {
			continue
		}
		k := t.TemplateID + "\x00" + promptKey(b) + "\x00" + promptKey(t)
		p := byKey[k]
		if p == nil {
			p = &logProbPair{tmpl: sm.tIdx[t.TemplateID], template: t.TemplateID}
			byKey[k] = p
			out = append(out, p)
		}
		p.n++
		p.base += bv
		p.vari += tv
	}
	return out
}

// finiteAll reports whether every value is finite.
func finiteAll(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// answerLogProbShift registers the estimate and test of one variant's
// shift, its test drawing from the permutation stream; nil without pairs.
func (sm *summarizer) answerLogProbShift(pairs []*logProbPair) *AnswerLogProbShift {
	return sm.logProbShift(pairs, sm.ts)
}

// logProbShift registers the estimate and test (from ts) of one variant's
// shift; nil without pairs.
func (sm *summarizer) logProbShift(pairs []*logProbPair, ts *tests) *AnswerLogProbShift {
	if len(pairs) == 0 {
		return nil
	}
	sh := &AnswerLogProbShift{Pairs: len(pairs)}
	r := stats.NewRatio(sm.G)
	groups := make([][]float64, sm.G)
	per := map[string]*TemplateShift{}
	for _, p := range pairs {
		b, v := p.base/float64(p.n), p.vari/float64(p.n)
		sh.BaseMean += b
		sh.VariantMean += v
		r.Add(p.tmpl, v-b)
		groups[p.tmpl] = append(groups[p.tmpl], v-b)
		ts := per[p.template]
		if ts == nil {
			ts = &TemplateShift{Template: p.template}
			per[p.template] = ts
		}
		ts.Pairs++
		ts.Shift += v - b
	}
	n := float64(len(pairs))
	sh.BaseMean /= n
	sh.VariantMean /= n
	v, _ := r.Value()
	sh.Shift = sm.es.addHeavyTailed(v, sm.influence(r, 1), r.At)
	sh.Test = ts.signFlip(r)
	for _, ts := range per {
		ts.Shift /= float64(ts.Pairs)
		sh.PerTemplate = append(sh.PerTemplate, *ts)
	}
	sort.Slice(sh.PerTemplate, func(i, j int) bool { return sh.PerTemplate[i].Template < sh.PerTemplate[j].Template })
	c, ok := stats.VarianceComponents(groups)
	sh.Templates, sh.PairsPerTemplate = c.Clusters, n/float64(max(c.Clusters, 1))
	if ok {
		if c.N0 > 0 {
			sh.PairsPerTemplate = c.N0
		}
		sh.Between, sh.Within, sh.ICC = c.Between, c.Within, c.ICC()
	}
	return sh
}

// answerLogProbPower sets the shift's minimum detectable shift at the
// level of its Holm family's first step.
func (sm *summarizer) answerLogProbPower(sh *AnswerLogProbShift) {
	sh.Power = sm.p.Power
	sh.Alpha = sm.alpha
	if sh.Test != nil && sh.Test.Family > 0 {
		sh.Alpha = sm.alpha / float64(sh.Test.Family)
	}
	if sh.Templates >= 2 && sh.Between+sh.Within > 0 {
		mde := stats.MDE(sh.Templates, sh.PairsPerTemplate, stats.Components{Between: sh.Between, Within: sh.Within}, sh.Alpha, sh.Power)
		sh.MDENats = &mde
	}
}

// answerLogProbShown sets Shown of every answer log-probability shift of
// vs once the reported intervals are known (after the bootstrap).
func answerLogProbShown(vs *VariantSummary, alpha float64) {
	for _, sh := range []*AnswerLogProbShift{vs.AnswerLogProbShift, vs.AnswerFirstLogProbShift} {
		if sh == nil {
			continue
		}
		for _, x := range []*AnswerLogProbShift{sh, sh.FinishedPairs, sh.PerToken} {
			if x != nil && x.Shift != nil && x.Test != nil {
				x.Shown = x.Shift.CI.Excludes0() && x.Test.PAdjusted <= alpha
			}
		}
	}
}

// AnswerScored reports whether any trial carries an answer_logprob (a run
// recorded with the answer-scoring pass).
func AnswerScored(trials []results.Trial) bool {
	for i := range trials {
		if trials[i].AnswerScored {
			return true
		}
	}
	return false
}
