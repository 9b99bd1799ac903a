package summary

import (
	"slices"

	"github.com/fragility/fragility/probe/anatomy"

	"github.com/fragility/fragility/probe/results"
)

// CalculatorSummary is the calculator condition as its own axis: for each
// model that ran under both conditions, per variant, accuracy without and
// with the calculator on the same items, how many answers wrong without it
// it fixed (and right ones it broke), and the calls per item. Counts are of
// trials matched by template, variant and instance index; the intervals of
// the accuracy difference are in Summary.ModelPairs (the model against
// itself with the calculator, paired over the same prompts).
type CalculatorSummary struct {
	Protocol  string             `json:"protocol"`   // CalcProtocolVersion of the binary that summarised
	CallLimit int                `json:"call_limit"` // calls per item that got a result (from the manifest; 0 when unknown)
	Models    []CalcModelSummary `json:"models"`
}

// CalcModelSummary is one model's calculator section.
type CalcModelSummary struct {
	Label     string `json:"label"`      // the model's label without the calculator (Summary.Models)
	CalcLabel string `json:"calc_label"` // its label with the calculator
	Path      string `json:"path"`
	// Variants holds one row per variant in Summary.Variants order, then a
	// row "all" over every variant.
	Variants []CalcVariantSummary `json:"variants"`
}

// CalcVariantSummary compares the conditions on one variant's items.
type CalcVariantSummary struct {
	Variant string `json:"variant"`
	Items   int    `json:"items"` // items scored under both conditions
	// NoneCorrect and CalcCorrect are the items answered right without and
	// with the calculator; Fixed the items wrong without it and right with
	// it, Broken the reverse. FixedShare = Fixed / (Items − NoneCorrect),
	// the share of wrong answers the calculator fixed (0 when none were
	// wrong).
	NoneCorrect int     `json:"none_correct"`
	CalcCorrect int     `json:"calculator_correct"`
	Fixed       int     `json:"fixed"`
	Broken      int     `json:"broken"`
	FixedShare  float64 `json:"fixed_share"`
	// Calls are the calculator calls made on these items (those past the
	// limit included), CallsPerItem = Calls / Items, ItemsWithCalls the
	// items with at least one call.
	Calls          int     `json:"calls"`
	CallsPerItem   float64 `json:"calls_per_item"`
	ItemsWithCalls int     `json:"items_with_calls"`
	unclassified   bool    // an item wrong without the calculator had no error kind
	// ByKind is "errors the calculator fixed" by error kind (package
	// anatomy): for each kind, in anatomy.Kinds order, the items wrong
	// without the calculator with that kind and how many of them the
	// calculator fixed; nil when the wrong answers carry no kind (runs
	// recorded before the error anatomy).
	ByKind []CalcKind `json:"by_kind,omitempty"`
}

// CalcKind is one error kind of CalcVariantSummary.ByKind.
type CalcKind struct {
	Kind  string `json:"kind"`
	Wrong int    `json:"wrong"` // items wrong without the calculator with this kind
	Fixed int    `json:"fixed"` // of them, right with the calculator
}

// calculatorSummary computes the calculator section; nil when no trial ran
// under the calculator.
func calculatorSummary(trials []results.Trial, s *Summary) *CalculatorSummary {
	type k struct{ model, tmpl, variant string }
	type ik struct {
		k
		inst int
	}
	none := map[ik]*results.Trial{}
	var any bool
	for i := range trials {
		t := &trials[i]
		if t.Skipped() {
			continue
		}
		if results.ConditionName(t.Condition) == results.ConditionNone {
			none[ik{k{modelKey(t), t.TemplateID, t.Variant}, t.Instance}] = t
		} else {
			any = true
		}
	}
	if !any {
		return nil
	}
	label := map[string]string{}
	for _, m := range s.Models {
		label[results.ConditionItemID(summaryModelPath(&m), m.Condition)] = m.Label
	}
	out := &CalculatorSummary{}
	rows := map[string]map[string]*CalcVariantSummary{}
	var order []string
	for i := range trials {
		t := &trials[i]
		if t.Skipped() || results.ConditionName(t.Condition) != results.ConditionCalculator {
			continue
		}
		base := t.ModelPath
		if base == "" {
			base = t.ModelName
		}
		n, ok := none[ik{k{base, t.TemplateID, t.Variant}, t.Instance}]
		if !ok {
			continue
		}
		if rows[base] == nil {
			rows[base] = map[string]*CalcVariantSummary{}
			order = append(order, base)
			out.Models = append(out.Models, CalcModelSummary{Label: label[base], CalcLabel: label[modelKey(t)], Path: t.ModelPath})
		}
		for _, v := range []string{t.Variant, "all"} {
			r := rows[base][v]
			if r == nil {
				r = &CalcVariantSummary{Variant: v}
				rows[base][v] = r
			}
			countCalcPair(r, t, n)
		}
	}
	for i, base := range order {
		for _, v := range append(slices.Clone(s.Variants), "all") {
			if r := rows[base][v]; r != nil {
				out.Models[i].Variants = append(out.Models[i].Variants, finishCalcRow(*r))
			}
		}
	}
	return out
}

// countCalcPair adds to r one item run with the calculator (t) and without
// it (n): its calls and whether each answer is correct.
func countCalcPair(r *CalcVariantSummary, t, n *results.Trial) {
	r.Items++
	r.Calls += t.CalcCalls
	if t.CalcCalls > 0 {
		r.ItemsWithCalls++
	}
	switch {
	case n.Correct:
		r.NoneCorrect++
	case t.Correct:
		r.Fixed++
	}
	countCalcKind(r, t, n)
	if t.Correct {
		r.CalcCorrect++
	} else if n.Correct {
		r.Broken++
	}
}

// countCalcKind adds to r.ByKind an item wrong without the calculator (n),
// by its error kind, and whether the calculator (t) fixed it. An item
// wrong without a kind leaves ByKind nil for good (unclassified marks it).
func countCalcKind(r *CalcVariantSummary, t, n *results.Trial) {
	if n.Correct || r.unclassified {
		return
	}
	if n.ErrorKind == "" {
		r.ByKind, r.unclassified = nil, true
		return
	}
	if r.ByKind == nil {
		for _, k := range anatomy.Kinds {
			r.ByKind = append(r.ByKind, CalcKind{Kind: k})
		}
	}
	for i := range r.ByKind {
		if r.ByKind[i].Kind == n.ErrorKind {
			r.ByKind[i].Wrong++
			if t.Correct {
				r.ByKind[i].Fixed++
			}
			return
		}
	}
	r.ByKind = append(r.ByKind, CalcKind{Kind: n.ErrorKind, Wrong: 1, Fixed: map[bool]int{true: 1}[t.Correct]})
}

// finishCalcRow returns r with its shares computed: the share of the items
// wrong without the calculator that it fixed, and the calls per item.
func finishCalcRow(r CalcVariantSummary) CalcVariantSummary {
	if wrong := r.Items - r.NoneCorrect; wrong > 0 {
		r.FixedShare = float64(r.Fixed) / float64(wrong)
	}
	r.CallsPerItem = float64(r.Calls) / float64(r.Items)
	return r
}

// summaryModelPath is the path (or name) modelKey uses for a summarised model.
func summaryModelPath(m *ModelSummary) string {
	if m.Path != "" {
		return m.Path
	}
	return m.Name
}

// EffortSummary is one model's reasoning effort (Trial.EffortTokens) by
// variant and by difficulty, under one condition.
type EffortSummary struct {
	Label string `json:"label"` // the model's label in Summary.Models (condition included)
	// Source is "think" when every scored trial's effort is its reasoning
	// block, "all" when no trial had a block (effort is then the generated
	// tokens up to the answer region's end), "mixed" otherwise.
	Source     string        `json:"source"`
	ByVariant  []EffortGroup `json:"by_variant"`
	Difficulty []EffortGroup `json:"difficulty"` // by level, then by steps, easiest first
	// Falls lists each step between consecutive difficulty groups (of one
	// axis, easiest first) where mean effort fell while difficulty rose.
	Falls []EffortFall `json:"falls"`
}

// EffortGroup is the mean effort of a group of scored trials.
type EffortGroup struct {
	Axis       string  `json:"axis"` // "variant", "level" or "steps"
	Group      string  `json:"group"`
	Trials     int     `json:"trials"`
	MeanTokens float64 `json:"mean_effort_tokens"`
	// MeanThinkEntropy is the mean of the trials' think-block mean entropy
	// (bits), over trials with a block; 0 when none had one.
	MeanThinkEntropy float64 `json:"mean_think_entropy_bits"`
	Correct          int     `json:"correct"`
}

// EffortFall is a fall of mean effort from one difficulty group to the
// next harder one.
type EffortFall struct {
	Axis       string  `json:"axis"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	FromTokens float64 `json:"from_tokens"`
	ToTokens   float64 `json:"to_tokens"`
}

// effortSummaries computes the effort section of every summarised model.
func effortSummaries(trials []results.Trial, s *Summary) []EffortSummary {
	var out []EffortSummary
	for mi := range s.Models {
		m := &s.Models[mi]
		key := results.ConditionItemID(summaryModelPath(m), m.Condition)
		var mine []*results.Trial
		think, all := 0, 0
		for i := range trials {
			t := &trials[i]
			if t.Skipped() || modelKey(t) != key {
				continue
			}
			mine = append(mine, t)
			if t.EffortSource == "think" {
				think++
			} else {
				all++
			}
		}
		if len(mine) == 0 {
			continue
		}
		es := EffortSummary{Label: m.Label, Source: "mixed"}
		switch {
		case all == 0:
			es.Source = "think"
		case think == 0:
			es.Source = "all"
		}
		for _, v := range s.Variants {
			if g, ok := effortGroup(mine, "variant", v, func(t *results.Trial) string { return t.Variant }); ok {
				es.ByVariant = append(es.ByVariant, g)
			}
		}
		for _, axis := range []string{"level", "steps"} {
			val := func(t *results.Trial) string { return groupValue(axis, t.Level, t.Steps, t.Relation) }
			var groups []string
			for _, t := range mine {
				if g := val(t); !slices.Contains(groups, g) && !(axis == "level" && g == "") && !(axis == "steps" && t.Steps == 0) {
					groups = append(groups, g)
				}
			}
			if len(groups) < 2 {
				continue
			}
			slices.SortFunc(groups, func(a, b string) int { return compareGroups(axis, a, b) })
			var prev *EffortGroup
			for _, gv := range groups {
				g, _ := effortGroup(mine, axis, gv, val)
				es.Difficulty = append(es.Difficulty, g)
				if prev != nil && g.MeanTokens < prev.MeanTokens {
					es.Falls = append(es.Falls, EffortFall{Axis: axis, From: prev.Group, To: g.Group, FromTokens: prev.MeanTokens, ToTokens: g.MeanTokens})
				}
				prev = &es.Difficulty[len(es.Difficulty)-1]
			}
		}
		out = append(out, es)
	}
	return out
}

// effortGroup averages the effort of the trials whose val is group.
func effortGroup(ts []*results.Trial, axis, group string, val func(*results.Trial) string) (EffortGroup, bool) {
	g := EffortGroup{Axis: axis, Group: group}
	var sum, ent float64
	nThink := 0
	for _, t := range ts {
		if val(t) != group {
			continue
		}
		g.Trials++
		sum += float64(t.EffortTokens)
		if t.ThinkTokens > 0 {
			ent += t.ThinkEntropyMean
			nThink++
		}
		if t.Correct {
			g.Correct++
		}
	}
	if g.Trials == 0 {
		return g, false
	}
	g.MeanTokens = sum / float64(g.Trials)
	if nThink > 0 {
		g.MeanThinkEntropy = ent / float64(nThink)
	}
	return g, true
}
