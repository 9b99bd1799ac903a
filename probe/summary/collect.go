package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
)

// variantOrder is the report order of the known variants.
var variantOrder = []string{BaseVariant, "names", "numbers", "symbolic", "paraphrase", "noop", "noop-seeming"}

// promptKey identifies a trial's prompt within its model, variant and
// template: the question text (with a document item's passages, in order),
// or the instance index when no question was recorded.
func promptKey(t *results.Trial) string {
	if t.Passages != "" {
		return "q:" + t.Question + "\x00p:" + t.Passages
	}
	if t.Question != "" {
		return "q:" + t.Question
	}
	return fmt.Sprintf("i:%d", t.Instance)
}

// unit is one distinct prompt of one model × variant.
type unit struct {
	tmpl            int
	copies          int
	correct         float64
	level, relation string
	steps           int
}

// y is the unit's outcome: the share of its copies answered right.
func (u *unit) y() float64 { return u.correct / float64(u.copies) }

// shiftAcc accumulates one quantity of a pair over its copies.
type shiftAcc struct {
	n          int
	base, vari float64
}

// pairUnit is one distinct (base prompt, variant prompt) pair.
type pairUnit struct {
	tmpl                 int
	copies               int
	b, v                 float64 // copies right
	both, bo, vo, bw     float64 // copies in each cell
	ans, all, ddc        shiftAcc
	level, relation, key string
	bkey, vkey           string // the base and the variant prompt (template-qualified)
	steps                int
	// sameAnswer: base and variant expect the same answer. answered counts
	// the copies in which both sides have an extracted answer, changed
	// those of them whose extracted answers differ, recalled the copies
	// whose variant answer is the base's expected answer and not its own.
	sameAnswer                  bool
	answered, changed, recalled float64
	// cutB and cutV count the copies whose base (reference) and variant
	// generation the output budget or a full context ended (cut).
	cutB, cutV float64
}

// finished reports whether neither side of any copy of the pair was cut.
func (q *pairUnit) finished() bool { return q.cutB == 0 && q.cutV == 0 }

// cut reports whether a trial's generation was ended by the output budget
// or a full context rather than by the model (its answer may be missing
// for want of tokens).
func cut(t *results.Trial) bool {
	return t.StopReason == "max_tokens" || t.StopReason == "context_full"
}

func (q *pairUnit) d() float64 { return (q.b - q.v) / float64(q.copies) }

// cell is everything collected for one model × variant.
type cell struct {
	vs        *VariantSummary
	units     map[string]*unit
	unitOrder []string
	pairs     map[string]*pairUnit
	pairOrder []string
	byRef     map[string]*pairUnit // pairs by reference prompt (pairByReference)
	tmplSeen  map[int]bool
}

// trialKey identifies a trial's place in the design: no two trials of a
// run share one.
type trialKey struct {
	model, template, variant string
	instance                 int
}

// modelData holds one model's per-unit outcomes and per-pair differences
// for the differences between models.
type modelData struct {
	units map[string]float64     // variant \x00 unit key -> outcome
	uTmpl map[string]int         // unit key -> template
	pairs map[string]float64     // variant \x00 pair key -> per-pair difference
	pTmpl map[string]int         // pair key -> template
	dropR map[string]stats.Ratio // variant -> ratio of per-pair differences
}

// summarizer is the state of one Summarize call: the trials indexed by
// model, variant and template, the units and pairs of every model ×
// variant (cells), and the estimates and tests registered so far.
type summarizer struct {
	p      Params
	alpha  float64
	trials []results.Trial
	s      *Summary

	models   []*ModelSummary
	modelIdx map[string]int
	seen     map[trialKey]int
	tIdx     map[string]int // template -> cluster index
	vIdx     map[string]int // variant -> index into s.Variants
	G        int            // clusters (templates with a scored trial)
	cells    [][]*cell      // [model][variant]

	es      *estimates
	ts      *tests
	tsStr   *tests              // the within-stratum shift tests' own Monte Carlo stream (StrataStream)
	tsGroup *tests              // the difficulty groups' paired-drop tests' own Monte Carlo stream (GroupStream)
	tsFin   *tests              // the finished pairs' paired-drop tests' own Monte Carlo stream (FinishedStream)
	tsCons  *tests              // the conservative decisions' own Monte Carlo stream (ConservativeStream)
	bases   map[[2]string][]int // base trials by model and template (soleBase)
	mdata   []modelData
}

// index finds the models (in order of first appearance), variants and
// templates, counts skipped trials and refuses duplicate trials and an
// unknown primary variant.
func (sm *summarizer) index() error {
	s, trials := sm.s, sm.trials
	sm.modelIdx, sm.seen = map[string]int{}, map[trialKey]int{}
	variantSet, templateSet := map[string]bool{}, map[string]bool{}
	for i := range trials {
		t := &trials[i]
		mk := modelKey(t)
		mi, ok := sm.modelIdx[mk]
		if !ok {
			mi = len(sm.models)
			sm.modelIdx[mk] = mi
			sm.models = append(sm.models, &ModelSummary{Path: t.ModelPath, Name: t.ModelName, Family: t.ModelFamily, Quantization: t.Quantization, Condition: results.ConditionName(t.Condition)})
		}
		sm.models[mi].Trials++
		k := trialKey{mk, t.TemplateID, t.Variant, t.Instance}
		if j, dup := sm.seen[k]; dup {
			return fmt.Errorf("probe: trials %q and %q are both model %s, template %s, variant %s, instance %d",
				trials[j].ItemID, t.ItemID, mk, t.TemplateID, t.Variant, t.Instance)
		}
		sm.seen[k] = i
		variantSet[t.Variant] = true
		if t.Skipped() {
			s.Skipped++
			sm.models[mi].Skipped++
			continue
		}
		templateSet[t.TemplateID] = true
	}
	s.Variants = sortedVariants(variantSet)
	if sm.p.Primary != "" && len(trials) > 0 && !variantSet[sm.p.Primary] {
		return fmt.Errorf("probe: primary variant %q is not in the run (variants: %s)", sm.p.Primary, strings.Join(s.Variants, ", "))
	}
	for t := range templateSet {
		s.Templates = append(s.Templates, t)
	}
	slices.Sort(s.Templates)
	if s.Templates == nil {
		s.Templates = []string{}
	}
	sm.tIdx = make(map[string]int, len(s.Templates))
	for i, t := range s.Templates {
		sm.tIdx[t] = i
	}
	sm.G = len(s.Templates)
	s.Clusters = sm.G
	s.FewTemplates = sm.G < sm.p.FewTemplates
	setLabels(sm.models)
	sm.vIdx = map[string]int{}
	for i, v := range s.Variants {
		sm.vIdx[v] = i
	}
	return nil
}

// sortedVariants returns the variants in variantOrder, unknown ones after
// the known ones by name.
func sortedVariants(set map[string]bool) []string {
	var vs []string
	for v := range set {
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b string) int {
		ia, ib := slices.Index(variantOrder, a), slices.Index(variantOrder, b)
		if ia < 0 {
			ia = len(variantOrder)
		}
		if ib < 0 {
			ib = len(variantOrder)
		}
		return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
	})
	return vs
}

// cell returns the cell of model mi and variant vi, creating it.
func (sm *summarizer) cell(mi, vi int) *cell {
	if sm.cells[mi][vi] == nil {
		c := &cell{vs: &VariantSummary{Variant: sm.s.Variants[vi]}, units: map[string]*unit{}, pairs: map[string]*pairUnit{}, tmplSeen: map[int]bool{}}
		if sm.s.Variants[vi] != BaseVariant {
			c.vs.Paired = &Paired{}
		}
		sm.cells[mi][vi] = c
	}
	return sm.cells[mi][vi]
}

// collect puts every trial into its cell: scored trials into the units
// (distinct prompts), variant trials with their reference partner (the
// base trial, or the trial of the variant the trial names as its
// reference, at the same instance index) into the pairs.
func (sm *summarizer) collect() {
	sm.cells = make([][]*cell, len(sm.models))
	for mi := range sm.models {
		sm.cells[mi] = make([]*cell, len(sm.s.Variants))
	}
	for i := range sm.trials {
		t := &sm.trials[i]
		c := sm.cell(sm.modelIdx[modelKey(t)], sm.vIdx[t.Variant])
		c.vs.Trials++
		if t.Skipped() {
			c.vs.Skipped++
		} else {
			c.addUnit(t, sm.tIdx[t.TemplateID])
		}
		if t.Variant == BaseVariant {
			continue
		}
		if ref := t.ReferenceVariant(); ref != BaseVariant {
			c.vs.Paired.Reference = ref
		}
		bi, ok := sm.seen[trialKey{modelKey(t), t.TemplateID, t.ReferenceVariant(), t.Instance}]
		if !ok && t.ReferenceVariant() == BaseVariant {
			bi, ok = sm.soleBase(t)
		}
		if !ok {
			c.vs.Paired.Unmatched++
			continue
		}
		b := &sm.trials[bi]
		if b.Skipped() || t.Skipped() {
			c.vs.Paired.SkippedPairs++
			continue
		}
		c.vs.Paired.PairTrials++
		c.addPair(b, t, sm.tIdx[t.TemplateID])
	}
}

// soleBase returns the index of the base trial of t's model and template
// when it has exactly one (a run on released instances asks each original
// once, as instance 0, and pairs every instance with it: the original is
// one problem whatever the instance); ok is false otherwise, so that a run
// with a base trial at each instance pairs by instance as before.
func (sm *summarizer) soleBase(t *results.Trial) (int, bool) {
	if sm.bases == nil {
		sm.bases = map[[2]string][]int{}
		for i := range sm.trials {
			if x := &sm.trials[i]; x.Variant == BaseVariant {
				k := [2]string{modelKey(x), x.TemplateID}
				sm.bases[k] = append(sm.bases[k], i)
			}
		}
	}
	if b := sm.bases[[2]string{modelKey(t), t.TemplateID}]; len(b) == 1 {
		return b[0], true
	}
	return 0, false
}

// addUnit counts the scored trial t of template index ti in its unit.
func (c *cell) addUnit(t *results.Trial, ti int) {
	c.tmplSeen[ti] = true
	c.vs.Scored++
	uk := t.TemplateID + "\x00" + promptKey(t)
	u := c.units[uk]
	if u == nil {
		u = &unit{tmpl: ti, level: t.Level, relation: t.Relation, steps: t.Steps}
		c.units[uk] = u
		c.unitOrder = append(c.unitOrder, uk)
	}
	u.copies++
	if t.Correct {
		u.correct++
		c.vs.CorrectTrials++
	}
	if t.ExpectedAnywhere {
		c.vs.ExpectedAnywhere++
	}
	if cut(t) {
		c.vs.CutByBudget++
	}
}

// addPair counts the scored pair of base trial b and variant trial t of
// template index ti in its pair unit.
func (c *cell) addPair(b, t *results.Trial, ti int) {
	pk := t.TemplateID + "\x00" + promptKey(b) + "\x00" + promptKey(t)
	q := c.pairs[pk]
	if q == nil {
		q = &pairUnit{tmpl: ti, level: t.Level, relation: t.Relation, steps: t.Steps, key: pk,
			bkey: t.TemplateID + "\x00" + promptKey(b), vkey: t.TemplateID + "\x00" + promptKey(t),
			sameAnswer: sameExtracted(b.Expected, t.Expected)}
		c.pairs[pk] = q
		c.pairOrder = append(c.pairOrder, pk)
	}
	q.copies++
	q.cutB += b2f(cut(b))
	q.cutV += b2f(cut(t))
	switch {
	case b.Correct && t.Correct:
		q.both++
	case b.Correct:
		q.bo++
	case t.Correct:
		q.vo++
	default:
		q.bw++
	}
	if b.Correct {
		q.b++
	}
	if t.Correct {
		q.v++
	}
	if b.Extracted != "" && t.Extracted != "" {
		q.answered++
		if !sameExtracted(b.Extracted, t.Extracted) {
			q.changed++
		}
	}
	if t.Extracted != "" && answer.AnswerMatches(t.Extracted, b.Expected) && !answer.AnswerMatches(t.Extracted, t.Expected) {
		q.recalled++
	}
	if b.Tokens > 0 && t.Tokens > 0 && finite(b.AnswerEntropyMean, t.AnswerEntropyMean) {
		q.ans.add(b.AnswerEntropyMean, t.AnswerEntropyMean)
	}
	if b.Tokens > 0 && t.Tokens > 0 && finite(b.EntropyMean, t.EntropyMean) {
		q.all.add(b.EntropyMean, t.EntropyMean)
	}
	if b.DDCTop != "" && t.DDCTop != "" && finite(b.DDCMargin, t.DDCMargin) {
		q.ddc.add(b.DDCMargin, t.DDCMargin)
	}
}

// add accumulates one copy's base and variant values.
func (a *shiftAcc) add(base, vari float64) {
	a.n++
	a.base += base
	a.vari += vari
}

// sameExtracted reports whether two answers (extracted or expected) are the
// same answer:
// equal numbers (answer.AnswerMatches), equal text, or both none.
func sameExtracted(a, b string) bool {
	return a == b || a != "" && b != "" && answer.AnswerMatches(a, b)
}
