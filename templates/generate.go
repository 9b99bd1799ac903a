package templates

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fragility/fragility/internal/suggest"
)

// Variant names one controlled surface change of a template.
type Variant string

// The variants. Each changes one factor against base, except symbolic, which
// re-rolls names and numbers together as GSM-Symbolic did.
const (
	VariantBase       Variant = "base"       // as authored: base values, original text
	VariantNames      Variant = "names"      // names and entities re-rolled, numbers at base
	VariantNumbers    Variant = "numbers"    // numbers re-rolled (answer recomputed), names at base
	VariantSymbolic   Variant = "symbolic"   // names and numbers re-rolled
	VariantParaphrase Variant = "paraphrase" // the template's paraphrase at base values
	VariantNoop       Variant = "noop"       // base plus one plainly irrelevant clause; same answer
	// VariantNoopSeeming is base plus one clause of the GSM-NoOp kind: it looks
	// relevant and mentions a quantity of the same kind, but a person has
	// reviewed that it does not change the answer; same answer.
	VariantNoopSeeming Variant = "noop-seeming"
	// VariantPlacebo is the problem asked again, word for word, under
	// another wording of the prompt's instruction line (the prompt presets
	// in package probe say which): the model reads other tokens and the
	// same problem, names and numbers. Its rate of changed answers is the
	// noise floor against which a variant's changed answers are read. With
	// ReferenceDrawn it is drawn on the symbolic instance of its index,
	// like the other variants compared with it.
	VariantPlacebo Variant = "placebo"
)

// AllVariants lists every variant in canonical order.
var AllVariants = []Variant{VariantBase, VariantNames, VariantNumbers, VariantSymbolic, VariantPlacebo, VariantParaphrase, VariantNoop, VariantNoopSeeming}

// variantList is AllVariants as a comma-separated list, for messages.
func variantList() string {
	names := make([]string, len(AllVariants))
	for i, v := range AllVariants {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// SplitNames splits a comma-separated list of names given on the command
// line (--variants, --template-ids). Spaces around a name are ignored; an
// empty name between commas ("base,": a stray comma) and a name given twice
// are errors naming the list, item saying what an entry is ("variant name")
// and kind what a name is ("variant"). A list of spaces only gives none.
func SplitNames(list, item, kind string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []string
	for _, f := range strings.Split(list, ",") {
		switch name := strings.TrimSpace(f); {
		case name == "":
			return nil, fmt.Errorf("an empty %s in %q (a stray comma?)", item, list)
		case slices.Contains(out, name):
			return nil, fmt.Errorf("%s %q named twice in %q", kind, name, list)
		default:
			out = append(out, name)
		}
	}
	return out, nil
}

// ParseVariants reads a comma-separated list such as "base,symbolic,noop"
// (SplitNames). An unknown name is an error naming it, and so are a name
// given twice ("base,base": a typo, since the set and its pairs hold each
// variant once), an empty list and an empty name between commas ("base,":
// a stray comma).
func ParseVariants(csv string) ([]Variant, error) {
	names, err := SplitNames(csv, "variant name", "variant")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no variant given (known: %s)", variantList())
	}
	out := make([]Variant, len(names))
	for i, name := range names {
		if !contains(AllVariants, Variant(name)) {
			known := "known: " + variantList()
			if s := suggest.DidYouMean(name, "", strings.Split(variantList(), ", ")); s != "" {
				known = s + " " + known
			}
			return nil, fmt.Errorf("unknown variant %q (%s)", name, known)
		}
		out[i] = Variant(name)
	}
	return out, nil
}

func contains(vs []Variant, v Variant) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// DefaultMaxDraws is the number of draws tried for one instance before the
// template is declared unsatisfiable.
const DefaultMaxDraws = 1000

// Options controls Generate.
type Options struct {
	Variants  []Variant `json:"variants"`  // base is always generated (and put first): variants pair with it
	Instances int       `json:"instances"` // instances per template and variant, indices 0..Instances-1; must be ≥ 1
	Seed      int64     `json:"seed"`      // set seed; each instance's seed is derived from it
	MaxDraws  int       `json:"max_draws"` // draws per instance before failing; 0 means DefaultMaxDraws
	// SkipFailing leaves out (with a Skip in Set.Skipped) a template for
	// which an instance cannot be generated, instead of failing the set.
	SkipFailing bool `json:"skip_failing,omitempty"`
	// Reference is what the answer-preserving variants that change one
	// factor of a drawn problem (DrawnReferenceVariants: the clause and the
	// wording) are compared with: ReferenceOriginal ("" too), the base
	// instance at the template's own values, or ReferenceDrawn, the
	// symbolic instance of the same index: instance i of noop is then
	// symbolic instance i with the clause added, differing from it in that
	// one factor (GSM-NoOp's construction: a clause added to each drawn
	// GSM-Symbolic instance). With ReferenceDrawn, symbolic is generated
	// whenever such a variant is asked for.
	Reference string `json:"reference,omitempty"`
	// Split keeps only the templates of one split (Template.Split:
	// SplitDev or SplitTest); "" keeps every template.
	Split string `json:"split,omitempty"`
}

// The references of Options.Reference.
const (
	ReferenceOriginal = "original"
	ReferenceDrawn    = "drawn"
)

// DrawnReferenceVariants are the variants that, with ReferenceDrawn, are
// drawn on the symbolic instance of their index and compared with it.
var DrawnReferenceVariants = []Variant{VariantNoop, VariantNoopSeeming, VariantParaphrase, VariantPlacebo}

// Instance is one seeded draw of a template in one variant.
type Instance struct {
	ID         string            `json:"id"` // "<template>/<variant>/<index>", unique in a set
	TemplateID string            `json:"template"`
	Relation   string            `json:"relation"`
	Steps      int               `json:"steps"`
	Level      string            `json:"level,omitempty"` // difficulty level (Template.Level); "" when the template has none
	Variant    Variant           `json:"variant"`
	Index      int               `json:"index"`
	Seed       int64             `json:"seed"`                  // per-instance seed derived from the set seed
	Question   string            `json:"question"`              // the full text of the problem
	Answer     string            `json:"answer"`                // exact expected answer, decimal: "39", "12.5", "-3"
	Values     map[string]string `json:"values"`                // every variable as filled (derived values too)
	NoopClause string            `json:"noop_clause,omitempty"` // the inserted clause as rendered
	NoopKind   NoopKind          `json:"noop_kind,omitempty"`   // "irrelevant" (noop) or "seeming" (noop-seeming)
	Numbers    map[string]string `json:"numbers,omitempty"`     // exact value of every number variable: a decimal, or "p/q" when it has none ("frac": "1/2" where values says "half")
	IDOrig     string            `json:"id_orig,omitempty"`     // GSM-Symbolic: the original GSM8K question's id (Template.IDOrig)
	NoopSource string            `json:"noop_source,omitempty"` // "template", "generic" or "noopset" (the GSM-NoOp clause set)
	NoopLine   int               `json:"noop_line,omitempty"`   // the clause's line in the template file; for the generic pool, its 1-based position
	NoopReason string            `json:"noop_reason,omitempty"` // noop-seeming: the reviewed reason why the answer is unchanged
	NoopValues map[string]string `json:"noop_values,omitempty"` // the clause's own variables
	// Reference is the variant this instance is compared with, at the same
	// index: "symbolic" for a variant drawn on the symbolic instance
	// (Options.Reference ReferenceDrawn); "" for the base instance.
	Reference Variant `json:"reference,omitempty"`
	// OriginalAnswer is the answer of the template at its own values (for a
	// GSM-Symbolic template of level symbolic, the published GSM8K answer):
	// the answer a model that recalls the original would give to an instance
	// with re-drawn numbers; "" for a fixed item.
	OriginalAnswer string `json:"original_answer,omitempty"`
	// AltAnswer is, for a noop-seeming clause that has an alt_answer (every
	// clause of the GSM-NoOp clause set; an own template's seeming clause
	// where a natural misapplication exists), the answer a model would give
	// if it applied the clause's quantity (the expression at this instance's
	// values; exact decimal, "p/q" when it has none, compared numerically by
	// probe/anatomy); "" otherwise.
	AltAnswer string `json:"alt_answer,omitempty"`
	// Passages are the passages a document item's prompt shows, in that
	// order (package probe/docqa); nil for a template's instance.
	Passages []Passage `json:"passages,omitempty"`
	// Accepted lists every accepted answer of a document item, Answer
	// first; nil for a template's instance.
	Accepted []string `json:"accepted,omitempty"`
}

// Passage is one passage of a document item's prompt (package probe/docqa).
type Passage struct {
	Item       string `json:"item"`                 // ID of the item the passage belongs to
	ID         string `json:"id"`                   // the passage's id within that item
	Text       string `json:"text"`                 // the passage as shown
	Distractor bool   `json:"distractor,omitempty"` // added by a distractor variant (the item's own distractor or another item's passage)
}

// Exclusion is one rejected draw (Draw ≥ 1), or an instance that was not
// generated because its variant does not apply to the template (Draw = 0).
type Exclusion struct {
	Template string            `json:"template"`
	Variant  Variant           `json:"variant"`
	Index    int               `json:"index"`
	Draw     int               `json:"draw"`
	Reason   string            `json:"reason"`
	Values   map[string]string `json:"values,omitempty"`
}

// Flag is a no-op clause that is flagged or excluded for a template: it
// contains a word that can change the asked quantity (Word; used only when
// the template marks it reviewed), it is a noop-seeming clause not yet
// reviewed, or it is an irrelevant clause that shares a unit or counted word
// with the question (never used with that template). Reason says which.
type Flag struct {
	Template string   `json:"template"`
	Source   string   `json:"source,omitempty"` // "template" (its own clause), "generic" (the generic pool) or "noopset" (the GSM-NoOp clause set)
	Line     int      `json:"line"`             // line in the template file; for the generic pool, the 1-based position
	Clause   string   `json:"clause"`
	Kind     NoopKind `json:"kind,omitempty"`
	Word     string   `json:"word"`
	Reason   string   `json:"reason,omitempty"`
	Reviewed bool     `json:"reviewed"`
	Used     bool     `json:"used"`
}

// TemplateInfo describes a template of a set in its header.
type TemplateInfo struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Relation string `json:"relation"`
	Steps    int    `json:"steps"`
	Format   string `json:"format"`
	Source   string `json:"source"`
	Level    string `json:"level,omitempty"`   // GSM-Symbolic difficulty level
	IDOrig   string `json:"id_orig,omitempty"` // GSM-Symbolic: the original GSM8K question's id
	// AnswerSource is Template.AnswerSource: AnswerFromAnnotated when the
	// answer is answer_annotated's expression, not #answer; "" otherwise.
	AnswerSource string `json:"answer_source,omitempty"`
}

// Notice is the line that tells the user, when a set is made, that the
// template's answer is not its own #answer (AnswerSource); "" when it is.
func (ti TemplateInfo) Notice() string {
	if ti.AnswerSource != AnswerFromAnnotated {
		return ""
	}
	return fmt.Sprintf("template %s: #answer misses the original's answer; answer_annotated's #### expression gives it and is used (templates check %s shows both)", ti.ID, ti.Source)
}

// Notices are the Notice lines of the set's templates that have one, in
// template order.
func (s *Set) Notices() []string {
	var ns []string
	for _, ti := range s.Templates {
		if n := ti.Notice(); n != "" {
			ns = append(ns, n)
		}
	}
	return ns
}

// Set is a generated item set: instances in template, index, variant order,
// with every exclusion and flag.
type Set struct {
	Seed      int64
	Options   Options
	Templates []TemplateInfo
	Instances []Instance
	Excluded  []Exclusion
	Flagged   []Flag
	Skipped   []Skip // templates left out: refused when loaded (added by the caller) or failing with SkipFailing
}

// ExclusionCounts splits the set's Excluded list: refused is the number of
// draws refused by a template's conditions or by a no-op clause and drawn
// again (Draw ≥ 1; the instance was still generated), leftOut the number of
// variant instances not generated at all (Draw 0: the variant does not apply
// to the template or item, or no clause fits the drawn instance's values).
func (s *Set) ExclusionCounts() (refused, leftOut int) {
	for _, e := range s.Excluded {
		if e.Draw > 0 {
			refused++
		} else {
			leftOut++
		}
	}
	return refused, leftOut
}

// Generate instantiates every template in every requested variant for indices
// 0..opt.Instances-1. The same templates and options give the same set, byte
// for byte. base is always generated for every index. A variant that does not
// apply to a template (a GSM8K row, no paraphrase, ...) is recorded in
// Excluded with Draw 0. An instance for which no valid draw is found within
// MaxDraws is an error naming the template and the most frequent reason.
func Generate(ts []*Template, opt Options) (*Set, error) {
	if opt.Instances < 1 {
		return nil, fmt.Errorf("instances must be at least 1, got %d", opt.Instances)
	}
	if opt.MaxDraws < 0 {
		return nil, fmt.Errorf("max draws must not be negative, got %d", opt.MaxDraws)
	}
	if opt.MaxDraws == 0 {
		opt.MaxDraws = DefaultMaxDraws
	}
	vs := []Variant{VariantBase}
	for _, v := range opt.Variants {
		if !contains(AllVariants, v) {
			return nil, fmt.Errorf("unknown variant %q", v)
		}
		if !contains(vs, v) {
			vs = append(vs, v)
		}
	}
	if split, err := ParseSplit(opt.Split); err != nil {
		return nil, err
	} else {
		opt.Split = split
	}
	switch opt.Reference {
	case "", ReferenceOriginal:
	case ReferenceDrawn:
		if slices.ContainsFunc(vs, func(v Variant) bool { return contains(DrawnReferenceVariants, v) }) {
			// The reference instances go right after base (they must be
			// drawn before the variants drawn on them), the placebo right
			// after them: a variant compared with the symbolic instance is
			// read against the placebo's changed answers.
			vs = slices.DeleteFunc(vs, func(v Variant) bool { return v == VariantSymbolic || v == VariantPlacebo })
			vs = slices.Insert(vs, 1, VariantSymbolic, VariantPlacebo)
		}
	default:
		return nil, fmt.Errorf("unknown reference %q (original or drawn)", opt.Reference)
	}
	opt.Variants = vs
	set := &Set{Seed: opt.Seed, Options: opt}
	seen := map[string]string{}
	for _, t := range ts {
		if opt.Split != "" && t.Split() != opt.Split {
			continue
		}
		if prev, ok := seen[t.ID]; ok {
			return nil, fmt.Errorf("template ID %q appears twice (%s and %s)", t.ID, prev, t.Source)
		}
		seen[t.ID] = t.Source
		nTemplates, nInstances, nExcluded, nFlagged := len(set.Templates), len(set.Instances), len(set.Excluded), len(set.Flagged)
		set.Templates = append(set.Templates, TemplateInfo{t.ID, t.Title, t.Relation, t.Steps, t.Format, t.Source, t.Level, t.IDOrig, t.AnswerSource})
		set.Flagged = append(set.Flagged, t.flags()...)
	instances:
		for idx := 0; idx < opt.Instances; idx++ {
			var drawn map[string]value // the symbolic instance's values at idx, for ReferenceDrawn
			for _, v := range vs {
				if ok, why := t.Supports(v); !ok {
					set.Excluded = append(set.Excluded, Exclusion{Template: t.ID, Variant: v, Index: idx, Reason: why})
					continue
				}
				var ref map[string]value
				if opt.Reference == ReferenceDrawn && contains(DrawnReferenceVariants, v) {
					ref = drawn
				}
				inst, vals, err := t.instantiateValues(v, idx, deriveSeed(opt.Seed, t.ID, v, idx), opt.MaxDraws, set, ref)
				if v == VariantSymbolic {
					drawn = vals
				}
				if err != nil && ref != nil {
					// No clause fits this drawn instance's values: this
					// variant's instance at idx is left out (its pair with
					// the drawn instance is missing), not the template.
					set.Excluded = append(set.Excluded, Exclusion{Template: t.ID, Variant: v, Index: idx, Reason: "not drawn on the symbolic instance: " + err.Error()})
					continue
				}
				if err != nil {
					if !opt.SkipFailing {
						return nil, err
					}
					set.Templates, set.Instances = set.Templates[:nTemplates], set.Instances[:nInstances]
					set.Excluded, set.Flagged = set.Excluded[:nExcluded], set.Flagged[:nFlagged]
					set.Skipped = append(set.Skipped, Skip{Source: t.Source, Template: t.ID, Reason: err.Error()})
					break instances
				}
				set.Instances = append(set.Instances, *inst)
			}
		}
	}
	return set, nil
}

// deriveSeed gives each instance its own seed: the first 63 bits of
// SHA-256("fragility/v1|<seed>|<template>|<variant>|<index>").
func deriveSeed(seed int64, id string, v Variant, idx int) int64 {
	h := sha256.Sum256(fmt.Appendf(nil, "fragility/v1|%d|%s|%s|%d", seed, id, v, idx))
	return int64(binary.BigEndian.Uint64(h[:8]) >> 1)
}

// newRand returns the generator for an instance seed: PCG, whose output is
// specified by its algorithm and so stable across Go releases.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
}

// instantiateValues generates instance idx of variant v from its seed and
// returns it with the values drawn (derived values included; nil for a
// fixed item). ref, when not nil, are the values of the symbolic instance
// of the same index: the instance keeps them (and its answer) and is
// compared with that instance (Options.Reference ReferenceDrawn).
func (t *Template) instantiateValues(v Variant, idx int, seed int64, maxDraws int, set *Set, ref map[string]value) (*Instance, map[string]value, error) {
	inst := &Instance{
		ID: fmt.Sprintf("%s/%s/%d", t.ID, v, idx), TemplateID: t.ID, Relation: t.Relation, Steps: t.Steps, Level: t.Level,
		IDOrig: t.IDOrig, Variant: v, Index: idx, Seed: seed,
	}
	if t.fixed {
		inst.Question, inst.Answer, inst.Values = t.BaseQuestion(), t.fixedAnswer, map[string]string{}
		return inst, nil, nil
	}
	r := newRand(seed)
	vals := t.baseValues()
	ans := t.baseAnswer
	inst.OriginalAnswer, _ = formatRat(ans.n)
	var names, numbers bool
	switch v {
	case VariantNames:
		names = true
	case VariantNumbers:
		numbers = true
	case VariantSymbolic:
		names, numbers = true, true
	}
	if names || numbers {
		var err error
		if vals, ans, err = t.drawValid(r, v, idx, maxDraws, set, names, numbers); err != nil {
			return nil, nil, err
		}
	}
	if ref != nil {
		vals, ans, inst.Reference = ref, t.evaluate(ref, false).answer, VariantSymbolic
	}
	inst.Values = t.renderValues(vals)
	inst.Numbers = t.numberValues(vals)
	inst.Answer, _ = formatRat(ans.n)
	inst.Question = t.render(t.question, vals, nil)
	if ref == nil && (v == VariantBase || v == VariantNoop || v == VariantNoopSeeming || v == VariantPlacebo) {
		inst.Question = t.BaseQuestion() // the original question for a GSM-Symbolic template of level symbolic
	}
	switch v {
	case VariantParaphrase:
		inst.Question = t.render(t.paraphrase, vals, nil)
	case VariantNoop, VariantNoopSeeming:
		if err := t.addNoop(inst, r, v, idx, maxDraws, set, vals); err != nil {
			return nil, nil, err
		}
	}
	return inst, vals, nil
}

// drawValid draws values for the names and/or numbers factors until a draw
// passes the template's checks (at most maxDraws, each refused draw recorded
// in set.Excluded) and returns them with their answer; the error names the
// most frequent reason when none passes.
func (t *Template) drawValid(r *rand.Rand, v Variant, idx, maxDraws int, set *Set, names, numbers bool) (map[string]value, value, error) {
	counts := map[string]int{}
	for d := 1; d <= maxDraws; d++ {
		cand, reason := t.draw(r, names, numbers)
		if reason == "" {
			out := t.evaluate(cand, false)
			reason = out.reason
			if reason == "" {
				return cand, out.answer, nil
			}
		}
		counts[reason]++
		set.Excluded = append(set.Excluded, Exclusion{t.ID, v, idx, d, reason, t.renderValues(cand)})
	}
	reason, n := mostFrequent(counts)
	return nil, value{}, fmt.Errorf("template %s (%s): no valid %s instance in %d draws; most frequent reason (%d times): %s",
		t.ID, t.Source, v, maxDraws, n, reason)
}

// addNoop draws a no-op clause of variant v (noop or noop-seeming) and its
// own values, at most maxDraws times, and inserts the first usable one into
// inst's question; each refused draw is recorded in set.Excluded.
func (t *Template) addNoop(inst *Instance, r *rand.Rand, v Variant, idx, maxDraws int, set *Set, vals map[string]value) error {
	clauses, source := t.noopPool(v)
	if len(clauses) == 0 {
		return fmt.Errorf("template %s (%s): %s", t.ID, t.Source, t.noNoopReason(v))
	}
	var err error
	for d := 1; d <= maxDraws; d++ {
		c := clauses[r.IntN(len(clauses))]
		var cv map[string]value
		cv, err = drawClause(c, vals, r)
		if err != nil {
			set.Excluded = append(set.Excluded, Exclusion{t.ID, v, idx, d, "no-op clause: " + err.Error(), nil})
			continue
		}
		all := make(map[string]value, len(vals)+len(cv))
		for k, x := range vals {
			all[k] = x
		}
		extra := map[string]*variable{}
		inst.NoopValues = map[string]string{}
		for _, x := range c.vars {
			for _, n := range x.names {
				all[n] = cv[n]
				extra[n] = x
			}
		}
		for _, x := range c.vars {
			for _, n := range x.names {
				inst.NoopValues[n] = t.renderVar(n, all, extra)
			}
		}
		alt, aerr := c.checkDraw(all)
		if aerr != nil {
			err = aerr
			set.Excluded = append(set.Excluded, Exclusion{t.ID, v, idx, d, "no-op clause: " + err.Error(), inst.NoopValues})
			inst.NoopValues = nil
			continue
		}
		inst.NoopClause, inst.AltAnswer = t.render(c.text, all, extra), alt
		inst.NoopKind, inst.NoopSource, inst.NoopLine, inst.NoopReason = c.kind, source, c.line, c.reason
		inst.Question = c.insert(inst.Question, inst.NoopClause)
		break
	}
	if inst.NoopClause == "" {
		return fmt.Errorf("template %s (%s): no usable no-op clause in %d draws: %v", t.ID, t.Source, maxDraws, err)
	}
	return nil
}

func mostFrequent(counts map[string]int) (string, int) {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, n := "", 0
	for _, k := range keys {
		if counts[k] > n {
			best, n = k, counts[k]
		}
	}
	return best, n
}

// draw re-rolls the variables of the chosen factors in declaration order,
// keeping the others at base and recomputing derived values as it goes (a
// later domain may read them). reason is non-empty when the draw failed or
// equals the base values; when both factors are re-rolled (symbolic), a draw
// that leaves either one at its base values is rejected too, so that a
// symbolic instance always changes both names and numbers (where the
// template has both).
func (t *Template) draw(r *rand.Rand, names, numbers bool) (map[string]value, string) {
	vals := t.baseValues()
	en := &env{vars: vals, rng: r}
	changed := false
	changedBy := map[factor]bool{}
	has := map[factor]bool{}
	done := map[*variable]bool{}
	order := t.drawOrder()
	redrawn := func(x *variable) bool {
		return names && x.factor == factorNames || numbers && x.factor == factorNumbers
	}
	for i, x := range order {
		if done[x] {
			continue
		}
		if x.derived != nil {
			v, err := x.derived.eval(en)
			if err != nil {
				return vals, fmt.Sprintf("%s: %v", x.names[0], err)
			}
			vals[x.names[0]] = v
			continue
		}
		if !redrawn(x) {
			continue
		}
		has[x.factor] = true
		if x.solve != nil {
			v, reason := x.solveValue(en)
			if reason != "" {
				return vals, reason
			}
			vals[x.names[0]] = v
			if !sameAsBase(v, t.base[x.names[0]]) {
				changed = true
				changedBy[x.factor] = true
			}
			continue
		}
		tries := 1
		var pending map[string]*variable
		if t.filterDraws && (len(x.local) > 0 || len(x.dependents) > 0 || len(x.pending) > 0) {
			tries = localTries
			if len(x.pending) > 0 {
				pending = pendingAfter(order[i+1:], done, redrawn, numbers)
			}
		}
		reason := t.drawTries(x, en, tries, pending, done, numbers)
		if reason != "" {
			return vals, reason
		}
		for _, n := range x.names {
			if !sameAsBase(vals[n], t.base[n]) {
				changed = true
				changedBy[x.factor] = true
			}
		}
	}
	if !changed {
		return vals, "draw equals the base values"
	}
	if names && numbers {
		for _, f := range []factor{factorNames, factorNumbers} {
			if has[f] && !changedBy[f] {
				return vals, fmt.Sprintf("symbolic draw leaves the %s at their base values", f)
			}
		}
	}
	return vals, ""
}

// pendingAfter maps the names of the variables in rest that this draw will
// still set (derived, solved under numbers, or redrawn) to their variable.
func pendingAfter(rest []*variable, done map[*variable]bool, redrawn func(*variable) bool, numbers bool) map[string]*variable {
	pending := map[string]*variable{}
	for _, y := range rest {
		if y.derived == nil && y.solve == nil && !redrawn(y) || done[y] || y.solve != nil && !numbers {
			continue // keeps its value
		}
		for _, n := range y.names {
			pending[n] = y
		}
	}
	return pending
}

// drawTries draws x into en.vars up to tries times (one draw when tries is
// 1) until its dependents can be computed and, with pending, the rest of the
// draw stays feasible; it marks the dependents solved under numbers as done.
// It returns the last reason a try failed, or "" (with a fatal draw error as
// a reason of its own, "drawing ...").
func (t *Template) drawTries(x *variable, en *env, tries int, pending map[string]*variable, done map[*variable]bool, numbers bool) string {
	vals := en.vars
	reason := ""
	for try := 0; try < tries; try++ {
		got, err := drawVar(x, en)
		if err != nil {
			return fmt.Sprintf("drawing %s: %v", strings.Join(x.names, ", "), err)
		}
		for i, n := range x.names {
			vals[n] = got[i]
		}
		if tries == 1 {
			break
		}
		reason = t.computeDependents(x, vals, en, numbers)
		if reason == "" && pending != nil {
			reason = t.feasible(x, vals, pending)
		}
		if reason == "" {
			for _, d := range x.dependents {
				done[d] = d.solve != nil && numbers
			}
			break
		}
	}
	return reason
}

// drawVar draws one variable (or a group drawn together) and checks the
// values' kinds.
func drawVar(x *variable, en *env) ([]value, error) {
	var got []value
	if x.sampler != nil {
		vs, err := x.sampler(en)
		if err != nil {
			return nil, err
		}
		got = vs
	} else {
		v, err := x.draw.eval(en)
		if err != nil {
			return nil, err
		}
		if v.k == kList && !v.tuple && len(x.names) == 1 {
			// "$r = [0.25, 0.5]": one value drawn from the list
			d, err := asDomain(v)
			if err != nil {
				return nil, err
			}
			v = value{k: kDomain, dom: d}
		}
		if v.k == kDomain {
			if v.dom.n == 0 {
				return nil, fmt.Errorf("%s is empty", v.dom.name)
			}
			v = v.dom.at(en.rng.Int64N(v.dom.n))
		}
		if len(x.names) == 1 {
			got = []value{v}
		} else if v.k == kList {
			got = v.l
		} else {
			return nil, fmt.Errorf("%d names but one value", len(x.names))
		}
	}
	if len(got) != len(x.names) {
		return nil, fmt.Errorf("%d names but %d values", len(x.names), len(got))
	}
	for i := range got {
		got[i] = asWorded(got[i]) // ("six-sided", 6) is the number 6 written "six-sided"
	}
	for _, g := range got {
		if x.numeric && g.k != kNum || !x.numeric && g.k == kNum && x.factor == factorNames {
			return nil, fmt.Errorf("drew a %s for %s", g.kindName(), strings.Join(x.names, ", "))
		}
		if g.k != kNum && g.k != kStr {
			return nil, fmt.Errorf("drew a %s for %s", g.kindName(), strings.Join(x.names, ", "))
		}
	}
	return got, nil
}

func drawClause(c *noopClause, vals map[string]value, r *rand.Rand) (map[string]value, error) {
	all := make(map[string]value, len(vals))
	for k, v := range vals {
		all[k] = v
	}
	out := map[string]value{}
	en := &env{vars: all, rng: r}
	for _, x := range c.vars {
		got, err := drawVar(x, en)
		if err != nil {
			return nil, err
		}
		for i, n := range x.names {
			all[n] = got[i]
			out[n] = got[i]
		}
	}
	return out, nil
}

// numberValues writes the exact value of every number variable.
func (t *Template) numberValues(vals map[string]value) map[string]string {
	out := map[string]string{}
	for _, x := range t.vars {
		for _, n := range x.names {
			if v, ok := vals[n]; ok && v.k == kNum {
				if s, ok := formatRat(v.n); ok {
					out[n] = s
				} else {
					out[n] = v.n.RatString()
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// renderValues writes every variable's value as it appears in text.
func (t *Template) renderValues(vals map[string]value) map[string]string {
	out := make(map[string]string, len(vals))
	for _, x := range t.vars {
		for _, n := range x.names {
			if v, ok := vals[n]; ok && v.k != 0 {
				out[n] = t.renderVar(n, vals, nil)
			}
		}
	}
	return out
}

var (
	genericOnce sync.Once
	generic     []*noopClause
)

// genericClauses compiles the generic no-op pool once.
func genericClauses() []*noopClause {
	genericOnce.Do(func() {
		for i, s := range genericNoops {
			tx, err := parseText(s)
			if err != nil {
				panic(fmt.Sprintf("templates: generic no-op clause %d: %v", i, err)) // a bug in this package, caught by tests
			}
			c := &noopClause{text: tx, kind: NoopIrrelevant, reviewed: true, flag: flagWord(s), line: i + 1}
			for _, ph := range tx.placeholders() {
				e, err := compileExpr(genericNoopVars[ph])
				if err != nil {
					panic(fmt.Sprintf("templates: generic no-op variable %s: %v", ph, err))
				}
				c.vars = append(c.vars, &variable{names: []string{ph}, draw: e, factor: factorNone,
					numeric: !strings.HasPrefix(genericNoopVars[ph], "sample"), decimals: -1})
			}
			generic = append(generic, c)
		}
	})
	return generic
}

// source gives back the text as written, with placeholders.
func (tx *text) source() string {
	var b strings.Builder
	for _, p := range tx.parts {
		if p.ph != "" {
			b.WriteString("{" + p.ph + "}")
			continue
		}
		b.WriteString(strings.NewReplacer("{", "{{", "}", "}}").Replace(p.lit))
	}
	return b.String()
}

// DefaultMaxItems is the default cap on the instances of one set
// (templates × variants × instances): a set of this many instances is about
// 100 MB of JSON Lines, and a larger one is more often a mistyped
// --instances than a plan.
const DefaultMaxItems = 100_000

// CheckSetSize refuses, before any instance is drawn, a set that opt would
// draw from nTemplates templates with more than maxItems instances
// (maxItems ≤ 0: DefaultMaxItems): templates × kinds × opt.Instances, where
// the kinds are opt.Variants, base (always drawn) and, with ReferenceDrawn
// and a variant of DrawnReferenceVariants, symbolic (their reference) and
// the placebo read against it (Generate adds both). The
// message says how to raise the cap (--max-items).
func CheckSetSize(nTemplates int, opt Options, maxItems int) error {
	if maxItems <= 0 {
		maxItems = DefaultMaxItems
	}
	kinds := slices.Clone(opt.Variants)
	if !slices.Contains(kinds, VariantBase) {
		kinds = append(kinds, VariantBase)
	}
	if opt.Reference == ReferenceDrawn && slices.ContainsFunc(kinds, func(v Variant) bool { return slices.Contains(DrawnReferenceVariants, v) }) {
		for _, v := range []Variant{VariantSymbolic, VariantPlacebo} {
			if !slices.Contains(kinds, v) {
				kinds = append(kinds, v)
			}
		}
	}
	perIndex := nTemplates * len(kinds)
	if perIndex == 0 || opt.Instances <= maxItems/perIndex {
		return nil
	}
	return fmt.Errorf("--instances %d with %d template(s) and %d variant(s) (base, the drawn reference and the placebo included) makes more than %d instances, the cap: --max-items N raises it",
		opt.Instances, nTemplates, len(kinds), maxItems)
}
