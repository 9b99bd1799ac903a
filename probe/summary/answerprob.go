package summary

import (
	"math"
	"sort"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
)

// AnswerLogProbShift is the paired shift of the right answer's
// log-probability (results.Trial AnswerLogProb, natural log, nats) from a
// variant's reference to the variant: the mean over distinct pairs of
// (variant − reference), over the pairs whose two trials were both scored.
// It measures the model's belief in the right answer, teacher-forced after
// its own reasoning, not whether it gave that answer: it moves when both
// answers are wrong (or both right), where an accuracy drop sees nothing.
// A negative shift means the variant lowered the right answer's
// probability. The intervals, test and power are those of the other
// shifts: clustered by template, the sign-flip test over templates with
// Holm across the model's variants, and the minimum detectable shift from
// the variance components of the per-pair differences.
type AnswerLogProbShift struct {
	Pairs       int       `json:"pairs"`
	BaseMean    float64   `json:"base_mean_nats"`    // mean answer_logprob of the reference side
	VariantMean float64   `json:"variant_mean_nats"` // mean answer_logprob of the variant side
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
}

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

// answerLogProbShifts sets every variant's AnswerLogProbShift from the
// trials that carry an answer_logprob (none in a run recorded before the
// answer-scoring pass: the fields stay nil) and adjusts the tests of each
// model across its variants (Holm). It runs before the bootstrap.
func (sm *summarizer) answerLogProbShifts() {
	for mi := range sm.models {
		var shifts []*AnswerLogProbShift
		for vi := range sm.s.Variants {
			c := sm.cells[mi][vi]
			if c == nil || c.vs.Variant == BaseVariant {
				continue
			}
			if sh := sm.answerLogProbShift(logProbPairs(sm, mi, c.vs.Variant)); sh != nil {
				c.vs.AnswerLogProbShift = sh
				shifts = append(shifts, sh)
			}
		}
		sm.answerLogProbFamily(shifts)
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
// trials were both scored, in trial order.
func logProbPairs(sm *summarizer, mi int, variant string) []*logProbPair {
	byKey := map[string]*logProbPair{}
	var out []*logProbPair
	for i := range sm.trials {
		t := &sm.trials[i]
		if t.Variant != variant || !t.AnswerScored || t.Skipped() || sm.modelIdx[modelKey(t)] != mi {
			continue
		}
		bi, ok := sm.seen[trialKey{modelKey(t), t.TemplateID, t.ReferenceVariant(), t.Instance}]
		if !ok {
			continue
		}
		b := &sm.trials[bi]
		if !b.AnswerScored || b.Skipped() || !finiteAll(b.AnswerLogProb, t.AnswerLogProb) {
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
		p.base += b.AnswerLogProb
		p.vari += t.AnswerLogProb
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
// shift; nil without pairs.
func (sm *summarizer) answerLogProbShift(pairs []*logProbPair) *AnswerLogProbShift {
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
	sh.Test = sm.ts.signFlip(r)
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

// answerLogProbShown sets Shown once the reported interval is known (after
// the bootstrap).
func answerLogProbShown(vs *VariantSummary, alpha float64) {
	if sh := vs.AnswerLogProbShift; sh != nil && sh.Shift != nil && sh.Test != nil {
		sh.Shown = sh.Shift.CI.Excludes0() && sh.Test.PAdjusted <= alpha
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
