package summary

import (
	"math/rand/v2"

	"github.com/fragility/fragility/probe/stats"
)

// PlaceboVariant is the variant whose changed answers are the noise floor of
// answer stability (templates.VariantPlacebo): the reference problem asked
// again word for word under another wording of the instruction.
const PlaceboVariant = "placebo"

// StabilityStream is the PCG stream of the Monte Carlo sign flips of the
// stability excess ("stab" in ASCII): its own stream, so that adding the
// excess left every other test's draws as they were.
const StabilityStream uint64 = 0x73746162

// StabilityFinishedStream is the PCG stream of the sign flips of the
// stability excess on the instances finished on both sides ("stfi").
const StabilityFinishedStream uint64 = 0x73746669

// StabilityExcess is a variant's loss of solved problems beyond the
// placebo's: over the reference instances the model solved (reference
// right in every copy) that both the variant and the placebo were asked,
// the per-instance difference
//
//	d = lost(variant) − lost(placebo)  ∈ {−1, 0, 1}
//
// (lost: another answer than the reference's right one, or none, cut by
// the budget or without a number: no instance is selected away after the
// variant acted on it), averaged within each template and then over the
// templates, every template weighted equally, as the paired drop is
// (pairedDrop: its MOVER-Wilson interval below Params.FewTemplates
// templates and inverted sign-flip test from there, the same randomized
// sign-flip test and minimum detectable difference, with the variant's
// losses in the place of the reference's right answers and the placebo's
// in the place of the variant's: a paired difference of two 0/1
// proportions, Newcombe 1998, Zou & Donner 2008). Both sides are drawn on
// the same reference instance, so the excess is what the variant's change
// adds to what a change of the instruction's tokens alone does; that the
// two perturbations are comparable in size is the design's assumption,
// not a finding.
type StabilityExcess struct {
	// Placebo is the variant compared with (PlaceboVariant).
	Placebo string `json:"placebo"`
	// Pairs counts the solved reference instances used.
	Pairs int `json:"pairs"`
	// VariantLost and PlaceboLost count the instances, of Pairs, that the
	// variant and the placebo lost (copies averaged); VariantNoAnswer and
	// PlaceboNoAnswer the part of them lost to no answer, VariantCut and
	// PlaceboCut the instances whose generation the budget or a full
	// context ended.
	VariantLost     float64 `json:"variant_lost"`
	PlaceboLost     float64 `json:"placebo_lost"`
	VariantNoAnswer float64 `json:"variant_no_answer"`
	PlaceboNoAnswer float64 `json:"placebo_no_answer"`
	VariantCut      float64 `json:"variant_cut"`
	PlaceboCut      float64 `json:"placebo_cut"`
	// BudgetConfounded is true when the variant's cut share exceeds the
	// placebo's by more than Params.NegligibleDropPP: the budget, not the
	// variant's change, may carry the excess, and the verdict does not
	// call the answers unstable.
	BudgetConfounded bool `json:"budget_confounded,omitempty"`
	// ExcessPP is the equal-weight mean of d in percentage points with its
	// intervals (as Paired.PairedDropPP).
	ExcessPP *Estimate `json:"excess_pp"`
	// Test is the sign-flip test of ExcessPP against 0 over templates,
	// Holm-adjusted across the model's variants with an excess.
	Test *Test `json:"test"`
	// Power is the minimum detectable excess at Params.Power (as
	// Paired.Power); nil without pairs.
	Power *Power `json:"power"`
	// FinishedPairs counts the instances finished on both sides (neither
	// the variant nor the placebo cut); FinishedExcessPP is the excess on
	// them alone (descriptive: a selection after the variant acted; nil
	// when none was cut or none finished).
	FinishedPairs    int       `json:"finished_pairs"`
	FinishedExcessPP *Estimate `json:"finished_excess_pp,omitempty"`
	// dr is the ratio of the per-instance differences (the test's input),
	// pairs the instances, kept for the conservative decision.
	dr    stats.Ratio
	pairs []*pairUnit
}

// stabilityExcesses sets Paired.Excess of every variant of every model
// whose pairs keep the problem's answer and that has a placebo drawn on
// the same reference, and Holm-adjusts each model's excess tests. It runs
// after summarizeModel and before the bootstrap.
func (sm *summarizer) stabilityExcesses() {
	pi, ok := sm.vIdx[PlaceboVariant]
	if !ok {
		return
	}
	ts := &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), StabilityStream))}
	tsFin := &tests{p: &sm.p, rng: rand.New(rand.NewPCG(uint64(sm.p.Seed), StabilityFinishedStream))}
	for mi := range sm.models {
		pc := sm.cells[mi][pi]
		if pc == nil || pc.vs.Paired == nil {
			continue
		}
		var family []*Test
		var xs []*StabilityExcess
		for vi := range sm.s.Variants {
			c := sm.cells[mi][vi]
			if c == nil || vi == pi || c.vs.Paired == nil || c.vs.Paired.AnswerChanged == nil || c.vs.Paired.Reference != pc.vs.Paired.Reference {
				continue
			}
			if x := sm.excess(c, pc, ts, tsFin); x != nil {
				c.vs.Paired.Excess = x
				family = append(family, x.Test)
				xs = append(xs, x)
			}
		}
		adjust(sm.alpha, "holm", family...)
		for _, x := range xs {
			sm.excessMDE(x)
		}
	}
}

// excess is the StabilityExcess of variant cell c over placebo cell pc;
// nil when no solved reference instance has both.
func (sm *summarizer) excess(c, pc *cell, ts, tsFin *tests) *StabilityExcess {
	x := &StabilityExcess{Placebo: pc.vs.Variant}
	var fin []*pairUnit
	for _, k := range c.pairOrder {
		q := c.pairs[k]
		p := pc.pairByReference(q.bkey)
		if !isSolved(q) || p == nil || !isSolved(p) {
			continue
		}
		cv, cp := lost(q), lost(p)
		x.VariantLost += cv
		x.PlaceboLost += cp
		x.VariantNoAnswer += noAnswer(q)
		x.PlaceboNoAnswer += noAnswer(p)
		x.VariantCut += q.cutV / float64(q.copies)
		x.PlaceboCut += p.cutV / float64(p.copies)
		// As a pair of the paired drop: the variant's loss in the
		// reference's place, the placebo's in the variant's.
		u := &pairUnit{tmpl: q.tmpl, copies: 1, b: cv, v: cp, key: q.key, bkey: q.vkey, vkey: p.vkey}
		u.both, u.bo, u.vo, u.bw = cv*cp, cv*(1-cp), (1-cv)*cp, (1-cv)*(1-cp)
		x.pairs = append(x.pairs, u)
		if q.finished() && p.finished() {
			fin = append(fin, u)
		}
	}
	x.Pairs = len(x.pairs)
	if x.Pairs == 0 {
		return nil
	}
	n := float64(x.Pairs)
	x.BudgetConfounded = 100*(x.VariantCut-x.PlaceboCut)/n > sm.p.NegligibleDropPP
	x.ExcessPP, x.dr, x.Test, _, _ = sm.testedDrop(x.pairs, ts, 0)
	x.Power = power(x.pairs, sm.G, sm.p, true)
	x.FinishedPairs = len(fin)
	if len(fin) > 0 && len(fin) < x.Pairs {
		x.FinishedExcessPP, _, _, _, _ = sm.testedDrop(fin, tsFin, 0)
	}
	return x
}

// pairByReference returns c's pair whose reference prompt is bkey (the
// template-qualified reference prompt; one per reference instance of a
// variant drawn on it), nil when there is none.
func (c *cell) pairByReference(bkey string) *pairUnit {
	if c.byRef == nil {
		c.byRef = map[string]*pairUnit{}
		for _, k := range c.pairOrder {
			q := c.pairs[k]
			c.byRef[q.bkey] = q
		}
	}
	return c.byRef[bkey]
}

// excessMDE fills x.Power.MDEPP as variantVerdict does for a paired drop
// (stats.PairedDropMDEInformed, at the level of Holm's first step, α/k).
func (sm *summarizer) excessMDE(x *StabilityExcess) {
	pw := x.Power
	if pw == nil || x.Test == nil {
		return
	}
	pw.Alpha = sm.alpha / float64(max(x.Test.Family, 1))
	pw.Attainable = x.Test.Reachable
	if pw.Templates < 2 {
		return
	}
	mde := 100 * stats.PairedDropMDEInformed(pw.Templates, pw.InformativeTemplates, pw.PairsPerTemplate,
		stats.Components{Between: pw.Between, Within: pw.Within}, pw.Alpha, sm.p.Power, sm.p.FewTemplates)
	if mde > 100 {
		pw.Attainable = false
		return
	}
	pw.MDEPP = &mde
}
