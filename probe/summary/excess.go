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

// StabilityExcess is a variant's loss of solved problems beyond the
// placebo's: over the reference instances the model solved (reference
// right in every copy) on which both the variant and the placebo gave an
// answer, the per-instance difference
//
//	d = changed(variant) − changed(placebo)  ∈ {−1, 0, 1}
//
// (changed: the extracted answer differs from the reference's, here the
// right one), averaged within each template and then over the templates,
// every template weighted equally, as the paired drop is (pairedDrop; the
// same intervals, sign-flip test and minimum detectable difference, with
// the variant's changes in the place of the reference's right answers and
// the placebo's in the place of the variant's). Both sides are drawn on
// the same instance of the reference, so the placebo's changes are those
// that any change of the prompt's tokens would give this model on this
// problem, and the excess is what the variant's own change adds.
type StabilityExcess struct {
	// Placebo is the variant compared with (PlaceboVariant).
	Placebo string `json:"placebo"`
	// Pairs counts the reference instances used; LeftOut the solved
	// reference instances left out because the variant or the placebo gave
	// no answer (cut by the budget, or no number).
	Pairs   int `json:"pairs"`
	LeftOut int `json:"left_out"`
	// VariantChanged and PlaceboChanged count the instances, of Pairs,
	// whose answer the variant and the placebo changed (copies averaged).
	VariantChanged float64 `json:"variant_changed"`
	PlaceboChanged float64 `json:"placebo_changed"`
	// ExcessPP is the equal-weight mean of d in percentage points with its
	// intervals (as Paired.PairedDropPP).
	ExcessPP *Estimate `json:"excess_pp"`
	// Test is the sign-flip test of ExcessPP against 0 over templates,
	// Holm-adjusted across the model's variants with an excess.
	Test *Test `json:"test"`
	// Power is the minimum detectable excess at Params.Power (as
	// Paired.Power); nil without pairs.
	Power *Power `json:"power"`
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
	for mi := range sm.models {
		pc := sm.cells[mi][pi]
		if pc == nil || pc.vs.Paired == nil {
			continue
		}
		var family []*Test
		for vi := range sm.s.Variants {
			c := sm.cells[mi][vi]
			if c == nil || vi == pi || c.vs.Paired == nil || c.vs.Paired.AnswerChanged == nil || c.vs.Paired.Reference != pc.vs.Paired.Reference {
				continue
			}
			if x := sm.excess(c, pc, ts); x != nil {
				c.vs.Paired.Excess = x
				family = append(family, x.Test)
			}
		}
		adjust(sm.alpha, "holm", family...)
		for vi := range sm.s.Variants {
			if c := sm.cells[mi][vi]; c != nil && c.vs.Paired != nil && c.vs.Paired.Excess != nil {
				sm.excessMDE(c.vs.Paired.Excess)
			}
		}
	}
}

// excess is the StabilityExcess of variant cell c over placebo cell pc;
// nil when no solved reference instance was answered on both sides.
func (sm *summarizer) excess(c, pc *cell, ts *tests) *StabilityExcess {
	x := &StabilityExcess{Placebo: pc.vs.Variant}
	var pairs []*pairUnit
	for _, k := range c.pairOrder {
		q := c.pairs[k]
		if q.b < float64(q.copies) { // the reference not solved in every copy
			continue
		}
		p := pc.pairByReference(q.bkey)
		if p == nil || p.b < float64(p.copies) {
			continue
		}
		if q.answered == 0 || p.answered == 0 {
			x.LeftOut++
			continue
		}
		cv, cp := q.changed/q.answered, p.changed/p.answered
		x.VariantChanged += cv
		x.PlaceboChanged += cp
		// As a pair of the paired drop: the variant's change in the
		// reference's place, the placebo's in the variant's.
		u := &pairUnit{tmpl: q.tmpl, copies: 1, b: cv, v: cp, key: q.key, bkey: q.vkey, vkey: p.vkey}
		u.both, u.bo, u.vo, u.bw = cv*cp, cv*(1-cp), (1-cv)*cp, (1-cv)*(1-cp)
		pairs = append(pairs, u)
	}
	x.Pairs = len(pairs)
	if len(pairs) == 0 {
		return nil
	}
	x.ExcessPP, _, x.Test, _, _ = sm.testedDrop(pairs, ts, 0)
	x.Power = power(pairs, sm.G, sm.p, true)
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

// excessMDE fills x.Power.MDEPP as variantVerdict does for a paired drop.
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
