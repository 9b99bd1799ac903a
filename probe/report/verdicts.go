package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// Verdicts is the answer first: per model its verdict in one line, then
// the numbers it rests on in at most four short lines (the accuracies and
// the paired drop with its interval, the stability excess over the
// placebo, the answer-first shift, the budget's warning when it applies).
// It opens narrative.md and is what `fragility run` prints in the terminal.
// Every number is read from s.
func Verdicts(s *summary.Summary) string {
	var b strings.Builder
	for i := range s.Models {
		m := &s.Models[i]
		fmt.Fprintf(&b, "**%s: %s%s.**\n", m.Label, cmp.Or(m.Headline, m.Verdict, noVerdict(m)), floorCause(m))
		for _, l := range verdictLines(m) {
			b.WriteString("- " + l + "\n")
		}
		if i < len(s.Models)-1 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// verdictLines are the lines under a model's verdict (Verdicts).
func verdictLines(m *summary.ModelSummary) []string {
	if m.Verdict == summary.VerdictFloor {
		return floorLines(m)
	}
	var out []string
	v := m.Variant(m.VerdictVariant)
	if v != nil && v.Paired != nil && v.Paired.PairedDropPP != nil {
		ref := referenceOf(v)
		refAcc := "n/a"
		if r := m.Variant(ref); r != nil {
			refAcc = accShort(r)
		}
		line := fmt.Sprintf("Accuracy %s on %s, %s on %s: %s %s", refAcc, ref, accShort(v), v.Variant, pairedWords(v.Paired.PairedDropPP.Value), dropBoxCI(v.Paired.PairedDropPP))
		switch pw := v.Paired.Power; {
		case pw != nil && pw.MDEPP != nil && *pw.MDEPP <= 100:
			line += fmt.Sprintf("; detectable from about %s pp", fnum(*pw.MDEPP, 1))
		case pw != nil && pw.Templates >= 2:
			line += "; no drop is detectable at this size"
		}
		out = append(out, line+".")
	}
	if st := m.Stability; st != nil {
		switch {
		case st.Verdict == summary.StabilityNotAssessed:
			out = append(out, "Stability not assessed: "+st.Reason+".")
		case st.Excess != nil && st.Excess.ExcessPP != nil && st.LossPct != nil && st.PlaceboLossPct != nil:
			out = append(out, fmt.Sprintf("Solved problems lost: %s%% on %s, %s%% on the placebo: an excess of %s pp %s (%s).",
				fnum(*st.LossPct, 1), st.Variant, fnum(*st.PlaceboLossPct, 1), fnum(st.Excess.ExcessPP.Value, 1), boxCI(st.Excess.ExcessPP), st.Verdict))
		}
	}
	if v != nil && v.AnswerFirstLogProbShift != nil && v.AnswerFirstLogProbShift.Shift != nil {
		a := v.AnswerFirstLogProbShift
		out = append(out, fmt.Sprintf("Answer first (the right answer forced right after the prompt): %s nats per pair on %s %s.", fnum(a.Shift.Value, 2), v.Variant, boxCI(a.Shift)))
	}
	if w := budgetWarning(m, v); w != "" {
		out = append(out, w)
	}
	return out
}

// noVerdict says why a model has no verdict: no variant but base, no
// base, or no variant with pairs to read.
func noVerdict(m *summary.ModelSummary) string {
	others := 0
	for i := range m.Variants {
		if m.Variants[i].Variant != summary.BaseVariant {
			others++
		}
	}
	switch {
	case others == 0:
		return "no verdict: only base was run, and a verdict reads a variant against it"
	case m.Variant(summary.BaseVariant) == nil:
		return "no verdict: no base trial"
	}
	return "no verdict: no variant has pairs with its reference to read"
}

// floorCause is, for a floor verdict, the output budget as its likely
// cause when it cut CutShareNote percent or more of base's answers: ", with
// X% of base's answers cut by the output budget"; "" otherwise.
func floorCause(m *summary.ModelSummary) string {
	base := m.Variant(summary.BaseVariant)
	if m.Verdict != summary.VerdictFloor || base == nil {
		return ""
	}
	if x, ok := cutShare(base); ok && x >= CutShareNote {
		return fmt.Sprintf(", with %s%% of base's answers cut by the output budget", fnum(x, 0))
	}
	return ""
}

// cutShare is the percentage of a variant's scored answers the output
// budget cut; false when none was scored.
func cutShare(v *summary.VariantSummary) (float64, bool) {
	if v.Scored == 0 {
		return 0, false
	}
	return 100 * float64(v.CutByBudget) / float64(v.Scored), true
}

// floorLines are the lines under a floor verdict, which judged no
// variant: every variant's accuracy, the answer-first shift of each variant
// that has one (it needs no solved problem), and the budget's warning.
func floorLines(m *summary.ModelSummary) []string {
	var acc, first []string
	for i := range m.Variants {
		v := &m.Variants[i]
		acc = append(acc, fmt.Sprintf("%s on %s", accShort(v), v.Variant))
		if a := v.AnswerFirstLogProbShift; a != nil && a.Shift != nil {
			first = append(first, fmt.Sprintf("%s on %s", fnum(a.Shift.Value, 2), v.Variant))
		}
	}
	out := []string{fmt.Sprintf("Accuracy %s: too few solved problems for a drop to be read.", strings.Join(acc, ", "))}
	if len(first) > 0 {
		out = append(out, fmt.Sprintf("Answer first (the right answer forced right after the prompt), nats per pair: %s.", strings.Join(first, ", ")))
	}
	if w := budgetWarning(m, nil); w != "" {
		out = append(out, w)
	}
	return out
}

// budgetWarning is the terminal's and the verdict block's line on the
// output budget: when the verdict variant's cut shares differ by more than
// the margin (summary.Paired.BudgetConfounded), or a variant's answers
// were cut in CutShareNote percent or more; "" otherwise. Its advice
// follows the cause: raise --max-tokens.
func budgetWarning(m *summary.ModelSummary, v *summary.VariantSummary) string {
	if v != nil && v.Paired != nil && v.Paired.BudgetConfounded {
		pr := v.Paired
		effect := "the budget, not the variant, may carry the drop"
		if pr.CutVariantPct < pr.CutReferencePct {
			effect = "the drop may be understated"
		}
		return fmt.Sprintf("Budget: it cut %s%% of the answers on %s and %s%% on %s: %s; raise --max-tokens.",
			fnum(pr.CutVariantPct, 1), v.Variant, fnum(pr.CutReferencePct, 1), referenceOf(v), effect)
	}
	var cut []string
	all := true
	for i := range m.Variants {
		w := &m.Variants[i]
		x, ok := cutShare(w)
		switch {
		case !ok:
		case x >= CutShareNote:
			cut = append(cut, fmt.Sprintf("%s%% on %s", fnum(x, 0), w.Variant))
		default:
			all = false
		}
	}
	const advice = "; a cut answer counts as no answer, so raise --max-tokens."
	switch {
	case len(cut) == 0:
		return ""
	case all && len(cut) > 1:
		return "Budget: it cut the answers of every variant: " + strings.Join(cut, ", ") + advice
	}
	// "X% of the answers on V", then "Y% on W" for the others.
	first, rest, _ := strings.Cut(cut[0], " on ")
	return "Budget: it cut " + strings.Join(append([]string{first + " of the answers on " + rest}, cut[1:]...), ", ") + advice
}
