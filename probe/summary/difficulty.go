package summary

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/stats"
)

// DifficultyAxes are the template attributes the difficulty axis groups by,
// in the order the summary and the narrative list them.
var DifficultyAxes = []string{"level", "steps", "relation"}

// difficulty returns accuracy by level, steps and relation for one model,
// with the paired flips within each group for the other variants and their
// paired drop (pairedDrop: summarizer.groupDrop, whose interval follows the
// rule of every paired drop).
func difficulty(cells []*cell, variants []string,
	accuracy func([]*unit) (*Estimate, stats.Ratio, float64, int),
	pairedDrop func(pairs []*pairUnit, variant string) (*Estimate, *Test, float64, float64)) []GroupAccuracy {
	var out []GroupAccuracy
	for _, axis := range DifficultyAxes {
		for vi, c := range cells {
			if c == nil {
				continue
			}
			byGroup := map[string][]*unit{}
			var groups []string
			for _, k := range c.unitOrder {
				u := c.units[k]
				g := groupValue(axis, u.level, u.steps, u.relation)
				if _, ok := byGroup[g]; !ok {
					groups = append(groups, g)
				}
				byGroup[g] = append(byGroup[g], u)
			}
			pairsBy := map[string][]*pairUnit{}
			for _, k := range c.pairOrder {
				q := c.pairs[k]
				g := groupValue(axis, q.level, q.steps, q.relation)
				pairsBy[g] = append(pairsBy[g], q)
			}
			slices.SortFunc(groups, func(a, b string) int { return compareGroups(axis, a, b) })
			for _, g := range groups {
				units := byGroup[g]
				ga := GroupAccuracy{Axis: axis, Group: g, Variant: variants[vi]}
				tm := map[int]bool{}
				for _, u := range units {
					tm[u.tmpl] = true
				}
				ga.Templates = len(tm)
				ga.Accuracy, _, ga.K, ga.N = accuracy(units)
				if variants[vi] != BaseVariant {
					if ps := pairsBy[g]; len(ps) > 0 {
						ga.Pairs = len(ps)
						ga.PairedDropPP, ga.Test, ga.BaseOnly, ga.VariantOnly = pairedDrop(ps, variants[vi])
					}
				}
				out = append(out, ga)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b GroupAccuracy) int {
		if c := cmp.Compare(slices.Index(DifficultyAxes, a.Axis), slices.Index(DifficultyAxes, b.Axis)); c != 0 {
			return c
		}
		if c := compareGroups(a.Axis, a.Group, b.Group); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(variants, a.Variant), slices.Index(variants, b.Variant))
	})
	return out
}

// groupValue returns the group of a template on a difficulty axis.
func groupValue(axis, level string, steps int, relation string) string {
	switch axis {
	case "level":
		return level
	case "steps":
		return strconv.Itoa(steps)
	}
	return relation
}

// levelOrder is the report order of the GSM-Symbolic difficulty levels.
var levelOrder = []string{"symbolic", "p1", "p2"}

// compareGroups orders the groups of an axis: steps numerically, levels as
// levelOrder (others after, alphabetically, "" last), relations
// alphabetically.
func compareGroups(axis, a, b string) int {
	switch axis {
	case "steps":
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return cmp.Compare(x, y)
	case "level":
		rank := func(s string) int {
			if s == "" {
				return len(levelOrder) + 1
			}
			if i := slices.Index(levelOrder, s); i >= 0 {
				return i
			}
			return len(levelOrder)
		}
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	}
	return strings.Compare(a, b)
}
