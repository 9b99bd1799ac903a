package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// This file is the only place that knows the shape of summary.json
// (probe.Summary) and the words for its statistics. Every interval, drop and
// verdict the report shows is read here, as the statistics computed it; the
// report computes none of them.

// modelRef is one model of the run as the summary names it.
type modelRef struct {
	Label string // display name, unique within the run
	Key   string // the trials' model key: the path, or the name without one
	Path  string
}

// summaryModels returns the models of the summary in its order.
func summaryModels(s *summary.Summary) []modelRef {
	out := make([]modelRef, len(s.Models))
	for i, m := range s.Models {
		key := m.Path
		if key == "" {
			key = m.Name
		}
		out[i] = modelRef{Label: m.Label, Key: withCondition(key, m.Condition), Path: m.Path}
	}
	return out
}

// trialModelKey is the key a trial's model has in summaryModels: its path,
// or its name when it has none, with its condition other than none
// (summary.Summarize groups trials this way: a model with the calculator is
// summarised apart).
func trialModelKey(t *results.Trial) string {
	if t.ModelPath != "" {
		return withCondition(t.ModelPath, t.Condition)
	}
	return withCondition(t.ModelName, t.Condition)
}

// withCondition appends "#condition" to a model key for a condition other
// than none.
func withCondition(key, cond string) string {
	if cond == "" || cond == results.ConditionNone {
		return key
	}
	return key + "#" + cond
}

// interval is an estimate with the interval the summary reports for it.
type interval struct {
	Value  float64
	Lo, Hi float64
	HasCI  bool
	Method string // how the summary computed the interval
	G      int    // templates (clusters) the estimate rests on; 0 when not stated
}

// bounds returns the interval's ends, or the value twice without one.
func (iv interval) bounds() (lo, hi float64) {
	if !iv.HasCI {
		return iv.Value, iv.Value
	}
	return iv.Lo, iv.Hi
}

// countText writes k of n units ("4/12"; a fractional k as it is).
func countText(k float64, n int) string {
	return strconv.FormatFloat(k, 'f', -1, 64) + "/" + strconv.Itoa(n)
}

// unitText names the unit accuracies are counted in.
func unitText(s *summary.Summary) string {
	return "distinct prompts (copies of one prompt in a model × variant count once)"
}

// accuracyCell is one model × variant accuracy: K right of N units.
type accuracyCell struct {
	Model, Variant string
	K              float64
	N              int
	Acc            *interval // nil when N = 0
}

// reported returns an estimate with the interval the summary reports for it
// (Estimate.CI, whose Method names how it was computed) and the number of
// templates it rests on; nil for nil.
func reported(e *summary.Estimate) *interval {
	if e == nil {
		return nil
	}
	iv := &interval{Value: e.Value, G: e.Clusters}
	if e.CI != nil {
		iv.Lo, iv.Hi, iv.HasCI, iv.Method = e.CI.Lo, e.CI.Hi, true, e.CI.Method
	}
	return iv
}

// accuracyCells returns every model × variant accuracy of the summary with
// its reported interval.
func accuracyCells(s *summary.Summary) []accuracyCell {
	var out []accuracyCell
	for _, m := range s.Models {
		for i := range m.Variants {
			v := &m.Variants[i]
			out = append(out, accuracyCell{Model: m.Label, Variant: v.Variant, K: v.K, N: v.N, Acc: reported(v.AccuracyPct)})
		}
	}
	return out
}

// methodText describes an interval method (probe.Interval.Method) for a
// caption; g names the number of clusters the intervals rest on ("6",
// "2–6"): templates, or the items of a document run (clusterNoun).
func methodText(s *summary.Summary, method, g string) string {
	n := clusterNoun(s)
	switch method {
	case summary.MethodClusterT:
		t := fmt.Sprintf("cluster-t on G − 1 degrees of freedom with the CR1 cluster-robust standard error over the G = %s %s of the estimate (Miller 2024)", g, n+"s")
		if s.FewTemplates {
			t += fmt.Sprintf(", reported instead of the bootstrap as the run has fewer than %d %ss, where the percentile bootstrap under-covers", s.Params.FewTemplates, n)
		}
		return t
	case summary.MethodBootstrap:
		return fmt.Sprintf("%s, B = %d resamples, seed %d, over G = %s %s", s.Params.Bootstrap, s.Params.BootstrapResamples, s.Params.Seed, g, n+"s")
	case summary.MethodWilson:
		return "Wilson score interval over the distinct prompts, treated as independent, where every " + n + " gave the same outcome and no clustered interval can say anything"
	case summary.MethodMOVERWilson:
		return fmt.Sprintf("MOVER-Wilson for a paired drop (Wilson limits of base and variant accuracy on their Korn–Graubard effective sample sizes with t on G − 1 degrees of freedom, combined with their cluster-robust correlation; Newcombe 1998, Zou & Donner 2008) over G = %s %s", g, n+"s")
	case summary.MethodMOVERWilsonSignFlip:
		return fmt.Sprintf("MOVER-Wilson for a paired drop (Wilson limits of base and variant accuracy on their Korn–Graubard effective sample sizes with t on G − 1 degrees of freedom, combined with their cluster-robust correlation; Newcombe 1998, Zou & Donner 2008), its lower limit lowered to the inverted sign-flip test's where that is lower, over G = %s %s", g, n+"s")
	case summary.MethodSignFlip:
		return fmt.Sprintf("the inverted sign-flip test on the G = %s %s means of a paired drop (the drops the test does not reject; Fisher 1935, Pitman 1937), which excludes 0 exactly when the drop's test rejects", g, n)
	case summary.MethodSignFlipSkew:
		return fmt.Sprintf("the inverted sign-flip test on the G = %s %s means of a paired drop (Fisher 1935, Pitman 1937), which excludes 0 exactly when the drop's test rejects, its upper limit raised to the skew-corrected t interval's where higher (Johnson 1978, Hall 1992)", g, n)
	case summary.MethodSkewT:
		return fmt.Sprintf("skew-corrected t on the G = %s %s means of a paired drop (Johnson 1978, Hall 1992)", g, n)
	case summary.MethodWilsonDifference:
		return "difference of Wilson intervals (Bonferroni) over the distinct pairs, treated as independent, where every " + n + " gave the same difference"
	}
	return method
}

// intervalText says, for a caption, which intervals are drawn: the
// summary's confidence level and each method that gave one of ivs, with how
// many it gave when there are several.
func intervalText(s *summary.Summary, ivs []interval) string {
	count := map[string]int{}
	gmin, gmax := map[string]int{}, map[string]int{}
	var methods []string
	none := 0
	for _, iv := range ivs {
		if !iv.HasCI {
			none++
			continue
		}
		if count[iv.Method] == 0 {
			methods = append(methods, iv.Method)
			gmin[iv.Method], gmax[iv.Method] = iv.G, iv.G
		}
		count[iv.Method]++
		gmin[iv.Method], gmax[iv.Method] = min(gmin[iv.Method], iv.G), max(gmax[iv.Method], iv.G)
	}
	slices.Sort(methods)
	var parts []string
	for _, m := range methods {
		g := strconv.Itoa(gmax[m])
		if gmin[m] != gmax[m] {
			g = strconv.Itoa(gmin[m]) + "–" + g
		}
		t := methodText(s, m, g)
		if len(methods) > 1 {
			t = fmt.Sprintf("%s (%d of %d intervals)", t, count[m], len(ivs))
		}
		parts = append(parts, t)
	}
	out := fmt.Sprintf("the summary's %.0f%% interval", 100*s.Params.Confidence)
	if len(parts) > 0 {
		out += ": " + strings.Join(parts, "; ")
	}
	if none > 0 {
		out += fmt.Sprintf("; %d estimates have no interval and are drawn without a bar", none)
	}
	return out
}

// accuracyIntervalText is intervalText for accuracy cells.
func accuracyIntervalText(s *summary.Summary, cells []accuracyCell) string {
	var ivs []interval
	for _, c := range cells {
		if c.Acc != nil {
			ivs = append(ivs, *c.Acc)
		}
	}
	return intervalText(s, ivs)
}

// dropCell is one model × variant drop against base, in percentage points:
// the drop the verdict rests on.
type dropCell struct {
	Model, Variant string
	Drop           interval
	Verdict        string
}

// dropCells returns the paired drop of every non-base variant of every
// model that has one (the drop its verdict and test rest on), with its
// reported interval.
func dropCells(s *summary.Summary) []dropCell {
	var out []dropCell
	for _, m := range s.Models {
		for _, v := range m.Variants {
			if v.Paired == nil || v.Paired.PairedDropPP == nil {
				continue
			}
			out = append(out, dropCell{Model: m.Label, Variant: v.Variant, Verdict: v.Verdict, Drop: *reported(v.Paired.PairedDropPP)})
		}
	}
	return out
}

func dropIntervals(cells []dropCell) []interval {
	out := make([]interval, len(cells))
	for i, c := range cells {
		out[i] = c.Drop
	}
	return out
}

// dropText says what the drop of dropCells is.
func dropText(s *summary.Summary) string {
	return "Paired drop in percentage points: the mean over distinct reference/variant pairs of (reference right − variant right), positive when the variant does worse; the drop the verdict and its sign-flip test rest on" + referencesText(s)
}

// referencesText says, for a caption, what the paired variants of s are
// compared with: "; the reference is base" when every one is compared
// with base, else which variants have which other reference
// (summary.Paired.Reference: the drawn instance of a one-factor pair).
func referencesText(s *summary.Summary) string {
	var other []string
	for i := range s.Models {
		for j := range s.Models[i].Variants {
			v := &s.Models[i].Variants[j]
			if r := referenceOf(v); v.Paired != nil && r != summary.BaseVariant {
				if t := v.Variant + " against " + r; !slices.Contains(other, t) {
					other = append(other, t)
				}
			}
		}
	}
	if len(other) == 0 {
		return "; the reference is base"
	}
	return "; the reference is base, except " + strings.Join(other, ", ") + " (the drawn instance with the same values and names)"
}

// dropThresholds returns the drops, in pp, the verdicts are worded against:
// below negligible a drop does not matter, from strong on it is strong.
func dropThresholds(s *summary.Summary) (negligible, strong float64) {
	return s.Params.NegligibleDropPP, s.Params.StrongDropPP
}

// verdictOf returns a model's overall verdict, in the headline's words
// (verdictHead: with the stability verdict where there is one), and the
// variant its drop rests on.
func verdictOf(s *summary.Summary, label string) (verdict, variant string) {
	for _, m := range s.Models {
		if m.Label == label {
			return verdictHead(&m), m.VerdictVariant
		}
	}
	return "", ""
}

// flipCell is the paired 2×2 table of one model × variant against base:
// counts of matched pairs.
type flipCell struct {
	Model, Variant                            string
	BothRight, BaseOnly, VariantOnly, BothBad float64
}

// flipCells returns the paired tables of the summary.
func flipCells(s *summary.Summary) []flipCell {
	var out []flipCell
	for _, m := range s.Models {
		for _, v := range m.Variants {
			if v.Paired == nil {
				continue
			}
			q := v.Paired
			out = append(out, flipCell{Model: m.Label, Variant: v.Variant,
				BothRight: q.BothCorrect.Count, BaseOnly: q.BaseOnly.Count, VariantOnly: q.VariantOnly.Count, BothBad: q.BothWrong.Count})
		}
	}
	return out
}

// pairsText says what a pair of flipCells is.
func pairsText(s *summary.Summary) string {
	return "distinct reference/variant prompt pairs (same model and template, both scored; copies of one pair count once" + referencesText(s) + ")"
}

// groupCell is the accuracy of one model on one variant within one group
// of a difficulty axis (steps, level, relation).
type groupCell struct {
	Model, Axis, Group, Variant string
	K                           float64
	N                           int
	Acc                         *interval
}

// difficultyCells returns the difficulty axes of the summary.
func difficultyCells(s *summary.Summary) []groupCell {
	var out []groupCell
	for _, m := range s.Models {
		for _, g := range m.Difficulty {
			out = append(out, groupCell{Model: m.Label, Axis: g.Axis, Group: g.Group, Variant: g.Variant, K: g.K, N: g.N, Acc: reported(g.Accuracy)})
		}
	}
	return out
}

func groupIntervals(cells []groupCell) []interval {
	var out []interval
	for _, c := range cells {
		if c.Acc != nil {
			out = append(out, *c.Acc)
		}
	}
	return out
}

// summaryDropByPath returns the drop of the model with the given file path on
// a variant, for the quantization comparison; nil when the summary has none.
func summaryDropByPath(s *summary.Summary, path, variant string) *interval {
	label := ""
	for _, m := range s.Models {
		if m.Path == path && withCondition("", m.Condition) == "" { // the model alone
			label = m.Label
		}
	}
	for _, d := range dropCells(s) {
		if d.Model == label && d.Variant == variant {
			iv := d.Drop
			return &iv
		}
	}
	return nil
}
