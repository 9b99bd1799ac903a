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
// (summary.StabilityVerdict) with the interval it rests on, its margin and
// null; it falls back to stabilitySentence for a summary without one.
func stabilityVerdictSentence(m *summary.ModelSummary, p summary.Params, conf string) string {
	s := m.Stability
	if s == nil {
		return stabilitySentence(m, conf)
	}
	v := m.Variant(s.Variant)
	if v == nil || v.Paired == nil || v.Paired.AnswerChanged == nil {
		return ""
	}
	r := v.Paired.AnswerChanged
	among := ""
	switch {
	case s.Among > 1 && s.Models > 1:
		among = fmt.Sprintf(", Bonferroni over the %d variants that keep the answer and the %d models", s.Among, s.Models)
	case s.Among > 1:
		among = fmt.Sprintf(", Bonferroni over the %d variants that keep the answer", s.Among)
	case s.Models > 1:
		among = fmt.Sprintf(", Bonferroni over the %d models", s.Models)
	}
	ev := fmt.Sprintf("on %s the extracted answer changed in %s of %d pairs whose problems have the same answer and that were answered on both sides (%s%%; %s%% CI %s, %s%s%s), right or wrong",
		s.Variant, countNum(r.Count), s.Pairs, fnum(s.ChangedPct, 1), confText(s.ConfidencePct), ivText(s.CI, 1), ivMethod(s.CI), among, leftOutText(v.Paired.AnswerLeftOut))
	margin := fnum(s.MarginPct, 1) + "%"
	why := fmt.Sprintf(" (the negligible drop margin: over the pairs answered on both sides the paired drop can be no larger than the share of changed answers; under greedy decoding the same prompt asked again keeps its answer, a rate of %s%%)", fnum(s.NullPct, 0))
	switch s.Verdict {
	case summary.StabilityUnstable:
		return fmt.Sprintf(" **Answers unstable:** %s; the interval lies above %s%s.", ev, margin, why)
	case summary.StabilityStable:
		return fmt.Sprintf(" **Answers stable:** every variant's interval lies below %s%s; the largest, %s.", margin, why, ev)
	case summary.StabilityNotAssessed:
		return fmt.Sprintf(" Answer stability is not assessed: this run sampled (temperature %s), so the same prompt asked again may change its answer at a rate this run does not measure; %s.", fnum(p.Temperature, 2), ev)
	}
	return fmt.Sprintf(" Answer stability is inconclusive: %s; the interval reaches %s without lying above it%s.", ev, margin, why)
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
			margins = append(margins, v.Variant+": "+strings.Join(ms, ", "))
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
		fmt.Fprintf(b, "\nMargins (the larger of the floor and %s between-template SDs of the measure on the reference side): %s.\n", fnum(p.ShiftMarginSD, 1), strings.Join(margins, "; "))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\nWithin pairs whose answers are both right and within pairs both wrong the accuracy does not move, so these shifts are not the drop measured again (wrong answers run at higher entropy). %s cluster-t intervals; p Holm-adjusted across both kinds, the three measures and the variants.\n\n| variant | kind of pair | answer-token entropy, bits | all-token entropy, bits | DDC margin |\n|---|---|---|---|---|\n", conf)
	b.WriteString(strings.Join(rows, "\n") + "\n")
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
	fmt.Fprintf(b, "- *%s* / *%s*: the share of pairs whose problems keep their answer, answered on both sides (a pair with no answer on a side is left out), and whose extracted answer changed has, for some variant, an interval above %s%% / for every variant an interval below it; anything between is *%s*. The margin is the negligible drop margin, because over those pairs the paired drop can be no larger than the share of changed answers; the null is that the same prompt asked again keeps its answer, as it does under greedy decoding (under sampling it is not assessed). The intervals are Korn–Graubard intervals (Clopper–Pearson on the share's effective sample size from its cluster-robust variance, with a t degrees-of-freedom factor; when the share does not vary between templates, each template counted as one unit), at 1 − α/(k·M) for the k variants the verdict may name and the M models (Bonferroni), so that the stability verdicts hold together at α whichever variant they name.\n",
		summary.StabilityUnstable, summary.StabilityStable, fnum(p.UnstableAnswerPct, 1), summary.StabilityInconclusive)
	b.WriteString("- The verdict line gives the stability verdict first when it says something (answers unstable or stable), then the drop's verdict. When the verdict variant was picked as the most severe of k variants, its paired drop also gets a cluster-t interval at 1 − α/k (Bonferroni), printed beside the verdict. With several models each model's verdict test is Holm-adjusted again across the models, and the differences between models are Holm-adjusted across every model pair together.\n")
}
