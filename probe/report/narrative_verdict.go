package report

import (
	"fmt"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// verdictHead is the verdict line's bold text: the model's headline
// (summary.ModelSummary.Headline: stability, then the drop), or its drop
// verdict when the summary has no headline.
func verdictHead(m *summary.ModelSummary) string {
	return cmpOr(m.Headline, m.Verdict)
}

// stabilityVerdictSentence states the model's stability verdict
// (summary.StabilityVerdict): the loss of solved problems on the variant
// and on the placebo, the excess with its interval and test, and the rule
// it was read by; "" for a summary without one.
func stabilityVerdictSentence(m *summary.ModelSummary, p summary.Params, conf string) string {
	s := m.Stability
	if s == nil {
		return ""
	}
	if s.Verdict == summary.StabilityNotAssessed {
		return fmt.Sprintf(" Answer stability is not assessed: %s.", s.Reason)
	}
	ev, finished := excessEvidence(s, conf)
	margin := fnum(s.MarginPct, 1) + " pp"
	var out string
	switch {
	case s.Verdict == summary.StabilityUnstable:
		out = fmt.Sprintf(" **Answers unstable:** %s. The interval lies above 0 and the test reaches α.", ev)
	case s.Verdict == summary.StabilityStable:
		out = fmt.Sprintf(" **Answers stable:** every variant's excess interval lies below %s. The largest: %s.", margin, ev)
	case s.BudgetConfounded:
		out = fmt.Sprintf(" Answer stability is inconclusive: %s. The budget cut the variant's answers more often than the placebo's by more than %s pp, so the budget, not the change, may carry the excess (raise --max-tokens).", ev, fnum(p.NegligibleDropPP, 1))
	default:
		out = fmt.Sprintf(" Answer stability is inconclusive: %s. The interval neither lies above 0 with the test at α nor below %s.", ev, margin)
	}
	out += finished
	if len(s.NotAssessed) > 0 {
		out += fmt.Sprintf(" Not assessed against the placebo (another reference, or no solved instance): %s.", strings.Join(s.NotAssessed, ", "))
	}
	if s.PNonRandomized != nil {
		same := ", the same"
		if s.NonRandomized != s.Verdict {
			same = ": they differ, so the recorded tie-breaking uniform decided it"
		}
		out += fmt.Sprintf(" Counting every tie against instability (not randomized): adjusted p = %s, %s%s.", pText(*s.PNonRandomized), s.NonRandomized, same)
	}
	if s.PAcrossModels != nil {
		out += fmt.Sprintf(" Across the %d models' stability tests (Holm): p = %s.", s.Models, pText(*s.PAcrossModels))
	}
	return out
}

// excessEvidence is what a stability verdict rests on, in words: the loss
// of solved problems on its variant and on the placebo, and the excess
// with its interval, adjusted p and what the budget did to both sides
// (ev: a clause, then a sentence without its final period); finished is
// the sentence on the excess over the pairs finished on both sides, with
// a leading space, or "".
func excessEvidence(s *summary.StabilityVerdict, conf string) (ev, finished string) {
	x := s.Excess
	loss := func(pct *float64, pairs int) string {
		if pct == nil {
			return "n/a"
		}
		return fmt.Sprintf("%s%% of %d", fnum(*pct, 1), pairs)
	}
	out := fmt.Sprintf("of the problems the reference solved, %s lost %s and the placebo %s", s.Variant, loss(s.LossPct, s.LossPairs), loss(s.PlaceboLossPct, s.PlaceboLossPairs))
	if x == nil || x.ExcessPP == nil {
		return out, ""
	}
	out += fmt.Sprintf(". On the %d solved instances both were asked, the excess over the placebo is %s pp (%s CI %s", x.Pairs, fnum(x.ExcessPP.Value, 1), conf, ivText(x.ExcessPP.CI, 1))
	if x.Test != nil && x.Test.Family > 1 {
		out += fmt.Sprintf(", p = %s adjusted across %d variants", pText(x.Test.PAdjusted), x.Test.Family)
	} else if x.Test != nil {
		out += fmt.Sprintf(", p = %s", pText(x.Test.PAdjusted))
	}
	out += fmt.Sprintf("; no answer on %s and %s of them, cut by the budget on %s and %s)", countNum(x.VariantNoAnswer), countNum(x.PlaceboNoAnswer), countNum(x.VariantCut), countNum(x.PlaceboCut))
	if d := x.FinishedExcessPP; d != nil {
		finished = fmt.Sprintf(" On the %d finished on both sides the excess is %s pp %s.", x.FinishedPairs, fnum(d.Value, 1), ivText(d.CI, 1))
	}
	return out, finished
}

// ivMethod names an interval's method, or "n/a".
func ivMethod(iv *summary.Interval) string {
	if iv == nil {
		return "n/a"
	}
	return iv.Method
}

// selectionSentence states the verdict variant's interval widened for
// having been picked, and the verdict test adjusted across models; ""
// when neither applies.
func selectionSentence(m *summary.ModelSummary, p summary.Params) string {
	var out string
	signal := summary.VerdictRank(m.Verdict) >= 3
	if iv := m.VerdictPickedCI; iv != nil {
		out = fmt.Sprintf(" Picked as the most severe of %d variants, its paired drop's interval widened for the choice (%s) is %s pp", m.VerdictPickedAmong, iv.Method, ivText(iv, 1))
		if signal && !iv.Excludes0() {
			out += ": with the choice accounted for it includes 0, so the signal rests on the adjusted test alone"
		}
		out += "."
	}
	if m.VerdictUnpicked != "" {
		out += fmt.Sprintf(" The signal's strength is read from that interval: the variant's own interval alone gave %s.", m.VerdictUnpicked)
	}
	if pn := m.VerdictPNonRandomized; pn != nil {
		same := ", the same"
		if m.VerdictNonRandomized != m.Verdict {
			same = ": they differ, so the recorded tie-breaking uniform (tie_u) decided the verdict"
		}
		out += fmt.Sprintf(" Counting every tie against the drop (the test not randomized): adjusted p = %s, verdict %s%s.", pText(*pn), m.VerdictNonRandomized, same)
	}
	if pa := m.VerdictPAcrossModels; pa != nil {
		out += fmt.Sprintf(" Across the %d models' verdicts (Holm over each model's adjusted p): p = %s", m.VerdictModels, pText(*pa))
		if signal && *pa > p.Alpha {
			out += fmt.Sprintf(", above α = %s: the signal does not hold once the number of models is accounted for", alphaText(p.Alpha))
		}
		out += "."
	}
	return out
}

// writeShiftStrata writes the shifts within pairs both right and within
// pairs both wrong, where accuracy does not move, and each measure's
// margin; nothing when no variant has a stratum.
func writeShiftStrata(b *strings.Builder, m *summary.ModelSummary, p summary.Params, conf string) {
	var rows, margins []string
	for i := range m.Variants {
		v := &m.Variants[i]
		shs := []*summary.Shift{v.AnswerEntropyShift, v.EntropyShift, v.DDCMarginShift}
		if v.Paired == nil || shs[0] == nil {
			continue
		}
		var ms []string
		for j, sh := range shs {
			if sh != nil && sh.Shift != nil {
				ms = append(ms, fmt.Sprintf("%s ±%s (SD %s)", []string{"answer-token", "all-token", "DDC"}[j], fnum(sh.Threshold, 3), fnum(sh.ReferenceSD, 3)))
			}
		}
		if len(ms) > 0 {
			margins = appendMargins(margins, v.Variant, strings.Join(ms, ", "))
		}
		for _, st := range []struct {
			name string
			get  func(*summary.Shift) *summary.Stratum
		}{{"both right", func(s *summary.Shift) *summary.Stratum { return s.BothRight }}, {"both wrong", func(s *summary.Shift) *summary.Stratum { return s.BothWrong }}} {
			cells := []string{v.Variant, st.name}
			any := false
			for _, sh := range shs {
				var x *summary.Stratum
				if sh != nil {
					x = st.get(sh)
				}
				any = any || x != nil
				cells = append(cells, stratumText(x))
			}
			if any {
				rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
			}
		}
	}
	if len(margins) > 0 {
		fmt.Fprintf(b, "\nMargins (the larger of the floor and %s between-template SDs of the measure on the reference side):\n\n- %s\n", fnum(p.ShiftMarginSD, 1), strings.Join(margins, "\n- "))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\nWithin pairs whose answers are both right and within pairs both wrong the accuracy does not move, so these shifts are not the drop measured again (wrong answers run at higher entropy). %s cluster-t intervals; p Holm-adjusted across both kinds, the three measures and the variants.\n\n| variant | kind of pair | answer-token entropy, bits | all-token entropy, bits | DDC margin |\n|---|---|---|---|---|\n", conf)
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

// appendMargins adds variant's margins (text) to the list of margin lines
// ("variant, variant: text"), on the line of the variants before it when
// their margins read the same (variants with one reference share them).
func appendMargins(lines []string, variant, text string) []string {
	for i, l := range lines {
		if names, t, _ := strings.Cut(l, ": "); t == text {
			lines[i] = names + ", " + variant + ": " + text
			return lines
		}
	}
	return append(lines, variant+": "+text)
}

// stratumText is a within-stratum shift's table cell.
func stratumText(x *summary.Stratum) string {
	if x == nil || x.Shift == nil {
		return "n/a"
	}
	return shiftCell(x.Shift, x.Test, x.Pairs, x.Meaningful)
}

// writeStabilityRule writes the rules of the stability verdict and of the
// adjustments for picking a variant and for several models.
func writeStabilityRule(b *strings.Builder, p summary.Params) {
	fmt.Fprintf(b, "- *%s* / *%s*: read on problems the reference solved, against the placebo (the same problem asked in other tokens). For each variant that keeps the answer, the excess is its share of solved instances whose answer changed minus the placebo's on the same instances, templates weighted equally, with the paired drop's interval and sign-flip test. *%s* when some variant's interval lies above 0 and its test, Holm-adjusted across the variants, reaches α; *%s* when every variant's interval lies below %s pp; anything between is *%s*. Without a placebo, under sampling or at the accuracy floor it is *%s*. The change rate of wrong answers is reported apart; no verdict reads it.\n",
		summary.StabilityUnstable, summary.StabilityStable, summary.StabilityUnstable, summary.StabilityStable, fnum(p.UnstableAnswerPct, 1), summary.StabilityInconclusive, summary.StabilityNotAssessed)
	b.WriteString("- The verdict line gives the stability verdict first when it says something (answers unstable or stable), then the drop's verdict. When the verdict variant was picked as the most severe of k variants, its paired drop also gets a cluster-t interval at 1 − α/k (Bonferroni), printed beside the verdict. With several models each model's verdict test is Holm-adjusted again across the models, and the differences between models are Holm-adjusted across every model pair together.\n")
}
