package probe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// narrativeIntro is the fixed paragraph on what the probe tests. It is the
// only text of the narrative with numbers that are not from the Summary (the
// citation).
const narrativeIntro = `This probe asks each model the same grade-school word problems in controlled surface variants and measures what changes. It follows the GSM-Symbolic method (Mirzadeh et al., 2024, "GSM-Symbolic: Understanding the Limitations of Mathematical Reasoning in Large Language Models", arXiv:2410.05229): each template is instantiated with fresh names (names), fresh numbers with every answer recomputed (numbers), both (symbolic), reworded phrasing (paraphrase), or an irrelevant clause that does not change the answer (noop), and compared with its base instance. A model that computes the answer should score about the same on every variant; a model that matches the surface pattern of problems it has seen loses accuracy when names or numbers change, and a model that cannot tell relevant from irrelevant information loses it on no-op clauses. Alongside exactness the probe reports how uncertain the model is while it answers (token entropy) and how an embedding classifier reads the prompt (DDC margin).`

// Narrative renders the summary as Markdown for a reader: what the probe
// tests, the run's denominators and interval methods, per model a verdict with
// accuracies (k/n) and drops (in percentage points and relative percent,
// labelled), the paired flips (robustness), entropy and DDC-margin shifts with
// whether they are meaningful, accuracy by steps and relation (difficulty),
// output format versus computation, a cross-model comparison when several
// models ran, and the thresholds behind the wording.
//
// It is deterministic and uses nothing but s: every number printed, apart
// from the citation in the opening paragraph, is a field of s (rounded for
// display: percentages and pp to 1 decimal, bits and margins to 3), so a
// narrative can be checked against summary.json.
func Narrative(s *Summary) string {
	var b strings.Builder
	p := s.Params
	conf := fnum(100*p.Confidence, 0) + "%"

	b.WriteString("# Fragility report\n\n## What this probe tests\n\n")
	b.WriteString(narrativeIntro)
	b.WriteString("\n\n## Run\n\n")
	fmt.Fprintf(&b, "- Trials: %d in %d model(s); %d skipped (not run, excluded from every statistic). Nothing is filtered to items a model solved in the base variant: every denominator counts all scored trials.\n",
		s.Trials, len(s.Models), s.Skipped)
	fmt.Fprintf(&b, "- Templates (bootstrap clusters): %d. Variants: %s.\n", len(s.Templates), strings.Join(s.Variants, ", "))
	fmt.Fprintf(&b, "- Intervals: %s intervals throughout. Accuracy: %s. All statistics: %s, with B = %d resamples and seed %d.\n",
		conf, p.AccuracyInterval, p.Bootstrap, p.BootstrapResamples, p.Seed)
	fmt.Fprintf(&b, "- Drops are base accuracy minus variant accuracy in percentage points (pp; positive = worse than base); the relative drop is that drop as a percentage of the base accuracy.\n")
	fmt.Fprintf(&b, "- Answer extraction rules: %s.\n", p.ExtractionRules)

	if len(s.Models) == 0 {
		b.WriteString("\nNo trials: nothing to report.\n")
		return b.String()
	}
	for i := range s.Models {
		writeModel(&b, &s.Models[i], p, conf)
	}
	if len(s.Models) > 1 {
		writeComparison(&b, s, conf)
	}
	writeThresholds(&b, p, conf)
	return b.String()
}

func writeModel(b *strings.Builder, m *ModelSummary, p Params, conf string) {
	fmt.Fprintf(b, "\n## %s\n\n", m.Label)
	if m.Path != "" {
		fmt.Fprintf(b, "File `%s`; %d trials, %d skipped.\n\n", m.Path, m.Trials, m.Skipped)
	} else {
		fmt.Fprintf(b, "%d trials, %d skipped.\n\n", m.Trials, m.Skipped)
	}
	base := m.variant(BaseVariant)
	worst := m.variant(m.WorstVariant)
	switch {
	case base == nil:
		b.WriteString("**No base variant in this run:** drops, pairs and verdicts need one and are not computed.\n\n")
	case m.Verdict == "" || worst == nil:
		b.WriteString("**No verdict:** no variant other than base, or no scored trials.\n\n")
	case m.Verdict == VerdictFloor:
		fmt.Fprintf(b, "**Verdict: %s.** Base accuracy %s is below %s%%: the model rarely solves the problems as authored, so it has no accuracy to lose and the drops below say nothing about its robustness. Run a stronger model, add worked examples (--shots) or use easier templates.\n\n",
			m.Verdict, accText(base), fnum(FloorAccuracyPct, 0))
	default:
		fmt.Fprintf(b, "**Verdict: %s.** ", m.Verdict)
		rel := "relative drop n/a (base accuracy 0)"
		if worst.RelativeDropPct != nil {
			rel = fmt.Sprintf("relative drop %s%% of base accuracy %s", fopt(worst.RelativeDropPct, 1), ciText(worst.RelativeDropPct, 1))
		}
		fmt.Fprintf(b, "Base accuracy %s; on %s (the variant with the most severe verdict) %s: a drop of %s pp %s, %s.",
			accText(base), worst.Variant, accText(worst), fopt(worst.DropPP, 1), ciText(worst.DropPP, 1), rel)
		b.WriteString(" " + verdictReason(worst.DropPP, m.Verdict, p, conf) + "\n\n")
	}

	fmt.Fprintf(b, "### Accuracy and drops\n\n| variant | accuracy (k/n) | %s Wilson | %s bootstrap | drop, pp [%s CI] | relative drop, %% of base [%s CI] | skipped | verdict |\n|---|---|---|---|---|---|---|---|\n", conf, conf, conf, conf)
	for i := range m.Variants {
		v := &m.Variants[i]
		drop, rel, verdict := "—", "—", "—"
		if v.Variant != BaseVariant {
			drop = fopt(v.DropPP, 1) + " " + ciText(v.DropPP, 1)
			rel = fopt(v.RelativeDropPct, 1) + " " + ciText(v.RelativeDropPct, 1)
			verdict = cmpOr(v.Verdict, "n/a")
		}
		wil := "n/a"
		if v.AccuracyPct != nil {
			wil = ivText(v.AccuracyPct.CI, 1)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d | %s |\n", v.Variant, accText(v), wil, ivText(v.AccuracyBootstrap, 1), drop, rel, v.Skipped, verdict)
	}

	if base == nil || len(m.Variants) < 2 {
		writeDifficulty(b, m)
		return
	}
	b.WriteString("\n### Robustness: paired flips against base\n\nA pair is the same template and instance in base and the variant, both scored. Shares are of the pairs, with " + conf + " bootstrap intervals.\n\n")
	b.WriteString("| variant | pairs | both right | base right → variant wrong | base wrong → variant right | both wrong | paired drop, pp | skipped pairs | unmatched |\n|---|---|---|---|---|---|---|---|---|\n")
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Paired == nil {
			continue
		}
		q := v.Paired
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %d | %d |\n", v.Variant, q.Pairs,
			cellText(q.BothCorrect), cellText(q.BaseOnly), cellText(q.VariantOnly), cellText(q.BothWrong),
			fopt(q.PairedDropPP, 1)+" "+ciText(q.PairedDropPP, 1), q.SkippedPairs, q.Unmatched)
	}

	b.WriteString("\n### Uncertainty and reading: shifts against base\n\nMean over pairs of (variant − base): entropy in bits per token over the answer tokens and over all generated tokens; DDC margin in cosine units. Marked **meaningful** when the shift reaches the threshold and its interval excludes 0.\n\n")
	b.WriteString("| variant | answer-token entropy, bits | all-token entropy, bits | DDC margin |\n|---|---|---|---|\n")
	var flagged []string
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Paired == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", v.Variant, shiftText(v.AnswerEntropyShift), shiftText(v.EntropyShift), shiftText(v.DDCMarginShift))
		for _, x := range []struct {
			name, unit string
			sh         *Shift
		}{{"answer-token entropy", " bits", v.AnswerEntropyShift}, {"all-token entropy", " bits", v.EntropyShift}, {"DDC margin", "", v.DDCMarginShift}} {
			if x.sh != nil && x.sh.Meaningful {
				dir := "rises"
				if x.sh.Shift.Value < 0 {
					dir = "falls"
				}
				flagged = append(flagged, fmt.Sprintf("%s %s by %s%s on %s (%s → %s)", x.name, dir, fnum(abs(x.sh.Shift.Value), 3), x.unit, v.Variant, fnum(x.sh.BaseMean, 3), fnum(x.sh.VariantMean, 3)))
			}
		}
	}
	if len(flagged) == 0 {
		b.WriteString("\nNo meaningful shift: the model is about as certain on the variants as on base, and the classifier reads the prompts alike.\n")
	} else {
		b.WriteString("\nMeaningful shifts: " + strings.Join(flagged, "; ") + ".\n")
	}
	writeDifficulty(b, m)
}

// writeDifficulty writes accuracy by steps and by relation where the data
// has more than one group, and the format-versus-computation table.
func writeDifficulty(b *strings.Builder, m *ModelSummary) {
	for _, axis := range []string{"steps", "relation"} {
		var groups []string
		cell := map[[2]string]*GroupAccuracy{}
		for i := range m.Difficulty {
			g := &m.Difficulty[i]
			if g.Axis != axis {
				continue
			}
			if !slices.Contains(groups, g.Group) {
				groups = append(groups, g.Group)
			}
			cell[[2]string{g.Group, g.Variant}] = g
		}
		if len(groups) < 2 {
			continue
		}
		fmt.Fprintf(b, "\n### Difficulty: accuracy by %s\n\nThe difficulty axis, apart from robustness: accuracy (k/n) of the templates in each group.\n\n| %s |", axis, axis)
		for _, v := range m.Variants {
			fmt.Fprintf(b, " %s |", v.Variant)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(m.Variants)) + "\n")
		for _, g := range groups {
			fmt.Fprintf(b, "| %s |", cmpOr(g, "(none)"))
			for _, v := range m.Variants {
				x := cell[[2]string{g, v.Variant}]
				if x == nil || x.AccuracyPct == nil {
					b.WriteString(" — |")
					continue
				}
				fmt.Fprintf(b, " %s%% (%d/%d) |", fnum(x.AccuracyPct.Value, 1), x.K, x.N)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n### Format versus computation\n\nWhether the expected value appears anywhere in the output, next to whether the extracted final answer is correct: a gap means the model wrote the right number but gave another as its answer (or the answer was not where the extraction rules look). No calculator condition is part of this run, so the exact-arithmetic (calculator) axis is not measured separately here.\n\n| variant | correct (k/n) | expected value anywhere (k/n) |\n|---|---|---|\n")
	for _, v := range m.Variants {
		fmt.Fprintf(b, "| %s | %d/%d | %d/%d |\n", v.Variant, v.K, v.N, v.ExpectedAnywhere, v.N)
	}
}

func writeComparison(b *strings.Builder, s *Summary, conf string) {
	b.WriteString("\n## Cross-model comparison\n\nModels ordered from most robust to most fragile by the drop on their most severe variant. The intervals are per model; differences between models are not tested here.\n\n")
	fmt.Fprintf(b, "| model | base accuracy (k/n) | most severe variant | drop, pp [%s CI] | relative drop, %% | verdict |\n|---|---|---|---|---|---|\n", conf)
	order := make([]*ModelSummary, len(s.Models))
	for i := range s.Models {
		order[i] = &s.Models[i]
	}
	worstDrop := func(m *ModelSummary) (float64, bool) {
		if v := m.variant(m.WorstVariant); v != nil && v.DropPP != nil {
			return v.DropPP.Value, true
		}
		return 0, false
	}
	slices.SortStableFunc(order, func(x, y *ModelSummary) int {
		if c := severity(x.Verdict) - severity(y.Verdict); c != 0 {
			return c
		}
		dx, _ := worstDrop(x)
		dy, _ := worstDrop(y)
		switch {
		case dx < dy:
			return -1
		case dx > dy:
			return 1
		}
		return 0
	})
	var robust, fragile, unclear, floor, none []string
	for _, m := range order {
		base, worst := m.variant(BaseVariant), m.variant(m.WorstVariant)
		baseText, wv, drop, rel := "n/a", "—", "n/a", "n/a"
		if base != nil {
			baseText = accText(base)
		}
		if worst != nil {
			wv = worst.Variant
			drop = fopt(worst.DropPP, 1) + " " + ciText(worst.DropPP, 1)
			rel = fopt(worst.RelativeDropPct, 1)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", m.Label, baseText, wv, drop, rel, cmpOr(m.Verdict, "n/a"))
		switch m.Verdict {
		case VerdictComputing:
			robust = append(robust, m.Label)
		case VerdictModerate, VerdictStrong:
			fragile = append(fragile, fmt.Sprintf("%s (%s on %s)", m.Label, m.Verdict, wv))
		case VerdictInconclusive:
			unclear = append(unclear, m.Label)
		case VerdictFloor:
			floor = append(floor, m.Label)
		default:
			none = append(none, m.Label)
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "- Robust (no meaningful drop on any variant): %s.\n", listOr(robust))
	fmt.Fprintf(b, "- Fragile (a fragility signal on at least one variant): %s.\n", listOr(fragile))
	if len(unclear) > 0 {
		fmt.Fprintf(b, "- Inconclusive (a drop the intervals can neither confirm nor rule out): %s.\n", listOr(unclear))
	}
	if len(floor) > 0 {
		fmt.Fprintf(b, "- Not assessable (base accuracy below %s%%): %s.\n", fnum(FloorAccuracyPct, 0), listOr(floor))
	}
	if len(none) > 0 {
		fmt.Fprintf(b, "- No verdict (no base or no other variant): %s.\n", listOr(none))
	}
}

func writeThresholds(b *strings.Builder, p Params, conf string) {
	neg, strong := fnum(p.NegligibleDropPP, 1), fnum(p.StrongDropPP, 1)
	b.WriteString("\n## How the wording is decided\n\n")
	fmt.Fprintf(b, "- *%s*: the drop is below %s pp, or its %s bootstrap interval includes 0 and stays below %s pp.\n", VerdictComputing, neg, conf, strong)
	fmt.Fprintf(b, "- *%s*: a drop of at least %s pp whose interval includes 0 but reaches %s pp (or has no interval): the data can neither confirm nor rule out a strong drop.\n", VerdictInconclusive, neg, strong)
	fmt.Fprintf(b, "- *%s*: the interval excludes 0 and the drop is at least %s pp but below %s pp.\n", VerdictModerate, neg, strong)
	fmt.Fprintf(b, "- *%s*: the interval excludes 0 and the drop is at least %s pp.\n", VerdictStrong, strong)
	fmt.Fprintf(b, "- A model's verdict is its most severe verdict over the variants.\n")
	fmt.Fprintf(b, "- An entropy shift is meaningful when its absolute value is at least %s bits and its interval excludes 0; a DDC-margin shift when it is at least %s and its interval excludes 0.\n",
		fnum(p.EntropyShiftBits, 3), fnum(p.DDCMarginShift, 3))
}

// verdictReason says which rule of ClassifyDrop gave the verdict.
func verdictReason(d *Estimate, verdict string, p Params, conf string) string {
	neg, strong := fnum(p.NegligibleDropPP, 1), fnum(p.StrongDropPP, 1)
	switch verdict {
	case VerdictComputing:
		if d != nil && d.Value < p.NegligibleDropPP {
			return "The drop is below " + neg + " pp: no meaningful drop."
		}
		return "The " + conf + " interval of the drop includes 0 and stays below " + strong + " pp: no meaningful drop."
	case VerdictInconclusive:
		return "The interval of the drop includes 0 but reaches " + strong + " pp: too few templates to tell."
	case VerdictModerate:
		return "The " + conf + " interval of the drop excludes 0; the drop is below " + strong + " pp."
	case VerdictStrong:
		return "The " + conf + " interval of the drop excludes 0 and the drop is at least " + strong + " pp."
	}
	return ""
}

// variant returns the summary of the named variant, or nil.
func (m *ModelSummary) variant(name string) *VariantSummary {
	for i := range m.Variants {
		if m.Variants[i].Variant == name {
			return &m.Variants[i]
		}
	}
	return nil
}

func accText(v *VariantSummary) string {
	if v.AccuracyPct == nil {
		return fmt.Sprintf("n/a (%d/%d)", v.K, v.N)
	}
	return fmt.Sprintf("%s%% (%d/%d)", fnum(v.AccuracyPct.Value, 1), v.K, v.N)
}

func cellText(c Cell) string {
	if c.SharePct == nil {
		return strconv.Itoa(c.Count)
	}
	return fmt.Sprintf("%d (%s%% %s)", c.Count, fnum(c.SharePct.Value, 1), ciText(c.SharePct, 1))
}

func shiftText(sh *Shift) string {
	if sh == nil || sh.Shift == nil {
		return "n/a (no pairs)"
	}
	t := fmt.Sprintf("%s %s (n=%d)", signed(sh.Shift.Value, 3), ivText(sh.Shift.CI, 3), sh.Pairs)
	if sh.Meaningful {
		t += " **meaningful**"
	}
	return t
}

func fopt(e *Estimate, prec int) string {
	if e == nil {
		return "n/a"
	}
	return fnum(e.Value, prec)
}

func ciText(e *Estimate, prec int) string {
	if e == nil {
		return ""
	}
	return ivText(e.CI, prec)
}

func ivText(iv *Interval, prec int) string {
	if iv == nil {
		return "[n/a]"
	}
	return "[" + fnum(iv.Lo, prec) + ", " + fnum(iv.Hi, prec) + "]"
}

// fnum formats x with prec decimals.
func fnum(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// signed formats x with prec decimals and an explicit "+" when positive.
func signed(x float64, prec int) string {
	s := fnum(x, prec)
	if !strings.HasPrefix(s, "-") && strings.Trim(s, "0.") != "" {
		s = "+" + s
	}
	return s
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func listOr(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
