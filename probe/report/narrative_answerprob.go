package report

import (
	"fmt"
	"strings"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/summary"
)

// answerProbSentence is the verdict's further line of evidence from the
// right answer's probability on the verdict's variant: the answer first
// (summary.AnswerFirstLogProbShift: forced right after the prompt, a pair
// differing only in its prompts) when the run recorded it, else the right
// answer after the model's own reasoning (summary.AnswerLogProbShift, a
// soft accuracy, said for what it is); its paired shift in nats with the
// interval, the test and the shift the run can detect; "" when the run
// recorded neither.
func answerProbSentence(m *summary.ModelSummary, conf string) string {
	v := m.Variant(m.VerdictVariant)
	if v == nil {
		return ""
	}
	sh, what, moved := v.AnswerFirstLogProbShift, "The answer first (the right answer's log-probability forced right after the prompt, before any reasoning; the two sides of a pair differ only in their prompts)", "the probability the model gives the right answer from the problem alone"
	if sh == nil {
		sh, what, moved = v.AnswerLogProbShift, "The right answer after the model's own reasoning (soft accuracy: its log-probability forced after the model's text, which follows whether that text reached the answer and where the budget cut it; not belief)", "the right answer's log-probability after the model's reasoning"
	}
	if sh == nil || sh.Shift == nil || sh.Test == nil {
		return ""
	}
	reading := "The interval includes 0: no shift is shown"
	switch {
	case sh.Shown && sh.Shift.Value < 0:
		reading = "The variant lowered " + moved
	case sh.Shown:
		reading = "The variant raised " + moved
	case sh.Shift.CI.Excludes0():
		reading = "The interval excludes 0, but the adjusted test does not reach α: no shift is shown"
	case sh.Shift.CI == nil && sh.Shift.NoCI != "":
		reading = "No interval is given from " + sh.Shift.NoCI + " (a shift that lives in a few collapsed answers can be missed by any interval from them), so no shift is shown"
	case sh.Shift.CI == nil:
		reading = "No interval is given, so no shift is shown"
	}
	mde := ""
	if sh.MDENats != nil {
		mde = fmt.Sprintf("; this run detects a shift of %s nats", fnum(*sh.MDENats, 2))
	}
	return fmt.Sprintf(" %s moved on %s by %s nats per pair (%s → %s). Over %d pairs: %s CI %s, sign-flip p = %s%s%s. %s.",
		what, v.Variant, signed(sh.Shift.Value, 2), fnum(sh.BaseMean, 2), fnum(sh.VariantMean, 2), sh.Pairs, conf, ivOpt(sh.Shift, 2),
		pText(sh.Test.P), adjText(sh.Test), mde, reading)
}

// shiftCells formats a shift for a table: the shift with its interval
// (bold "shown" when shown), and p with the adjusted p in brackets
// (testText); "n/a" for none.
func shiftCells(sh *summary.AnswerLogProbShift) (shift, p string) {
	if sh == nil || sh.Shift == nil || sh.Test == nil {
		return "n/a", "n/a"
	}
	shown := ""
	if sh.Shown {
		shown = " **shown**"
	}
	p = testText(sh.Test)
	if sh.Test.Adjustment == "none: primary variant" {
		p += " (primary variant, not adjusted)"
	}
	return signed(sh.Shift.Value, 2) + " " + ivOpt(sh.Shift, 2) + shown, p
}

// mdeCell formats a shift's minimum detectable shift.
func mdeCell(sh *summary.AnswerLogProbShift) string {
	if sh == nil || sh.MDENats == nil {
		return "n/a"
	}
	return fnum(*sh.MDENats, 2)
}

// writeAnswerProb writes the tables of the right answer's probability by
// variant: after the model's own reasoning (summary.AnswerLogProbShift,
// with its finished-pairs and per-token shifts) and first
// (summary.AnswerFirstLogProbShift); nothing for a run without them.
func writeAnswerProb(b *strings.Builder, m *summary.ModelSummary, conf string) {
	var after, first []string
	power := 0.0
	family := 0
	for i := range m.Variants {
		v := &m.Variants[i]
		if sh := v.AnswerLogProbShift; sh != nil && sh.Shift != nil && sh.Test != nil {
			power = sh.Power
			family = max(family, sh.Test.Family)
			s, p := shiftCells(sh)
			fs, fp := shiftCells(sh.FinishedPairs)
			fn := 0
			if sh.FinishedPairs != nil {
				fn = sh.FinishedPairs.Pairs
			}
			ts, tp := shiftCells(sh.PerToken)
			after = append(after, fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |", v.Variant, sh.Pairs, fnum(sh.BaseMean, 2), fnum(sh.VariantMean, 2),
				s, p, mdeCell(sh), fn, fs, fp, ts, tp))
		}
		if sh := v.AnswerFirstLogProbShift; sh != nil && sh.Shift != nil && sh.Test != nil {
			power = sh.Power
			family = max(family, sh.Test.Family)
			s, p := shiftCells(sh)
			ts, tp := shiftCells(sh.PerToken)
			first = append(first, fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |", v.Variant, sh.Pairs, fnum(sh.BaseMean, 2), fnum(sh.VariantMean, 2),
				s, p, mdeCell(sh), ts, tp))
		}
	}
	across := "the variants"
	if family > 1 {
		across = fmt.Sprintf("the %d variants", family)
	}
	common := fmt.Sprintf("The shift is the mean over distinct pairs of (variant − reference), in nats, with the %s interval, the sign-flip p (in brackets Holm-adjusted across %s, each measure its own family) and the shift this run detects at %s%% power (MDE). **shown**: the interval excludes 0 and the adjusted test reaches α.", conf, across, fnum(100*power, 0))
	if len(after) > 0 {
		fmt.Fprintf(b, "\n### The right answer after the model's own reasoning (soft accuracy)\n\nAfter each answer, the expected answer was teacher-forced in the prompt's final-answer form right after the model's own reasoning (up to its final-answer marker, or where the budget cut it), in the same context. Its log-probability was summed over the number's tokens (natural log; %s). It follows whether the model's text reached the right answer (about 0 when it did, far below when it reached another or was cut), so it is a soft accuracy, not belief: the two sides of a pair are forced after different texts, and the sum moves with the answer's digit count. It is also given over the pairs finished on both sides (neither cut by the budget) and per forced token (the sum divided by the tokens scored). %s\n\n| variant | pairs | reference, nats | variant, nats | shift, nats | p (adjusted) | MDE, nats | finished pairs | shift over them, nats | p (adjusted) | per token, nats | p (adjusted) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", probe.AnswerScoreVersion, common)
		b.WriteString(strings.Join(after, "\n") + "\n")
	}
	if len(first) > 0 {
		fmt.Fprintf(b, "\n### The answer first\n\nBefore any reasoning, the expected answer was teacher-forced in the final-answer form right after the prompt (\"Final answer: N\"; no generated text, in the KV state that holds the prompt), and its log-probability summed over the number's tokens (%s). The two sides of a pair differ only in their prompts, so its shift is how much the variant moves the probability the model gives the right answer from the problem alone, whatever its reasoning then does; per token, the sum divided by the tokens scored. %s\n\n| variant | pairs | reference, nats | variant, nats | shift, nats | p (adjusted) | MDE, nats | per token, nats | p (adjusted) |\n|---|---|---|---|---|---|---|---|---|\n", probe.AnswerScoreVersion, common)
		b.WriteString(strings.Join(first, "\n") + "\n")
	}
}
