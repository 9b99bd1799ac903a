package report

import (
	"fmt"
	"strings"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/summary"
)

// answerProbSentence is the verdict's further line of evidence from the
// right answer's probability (summary.AnswerLogProbShift) on the verdict's
// variant: its paired shift in nats with the interval, the test and the
// shift the run can detect, said for what it is (the model's belief in the
// right answer, teacher-forced after its own reasoning, not its accuracy);
// "" when the run did not record it.
func answerProbSentence(m *summary.ModelSummary, conf string) string {
	v := m.Variant(m.VerdictVariant)
	if v == nil || v.AnswerLogProbShift == nil || v.AnswerLogProbShift.Shift == nil || v.AnswerLogProbShift.Test == nil {
		return ""
	}
	sh := v.AnswerLogProbShift
	reading := "the interval includes 0: no shift in belief is shown"
	switch {
	case sh.Shown && sh.Shift.Value < 0:
		reading = "the variant lowered the probability the model gives the right answer"
	case sh.Shown:
		reading = "the variant raised the probability the model gives the right answer"
	case sh.Shift.CI.Excludes0():
		reading = "the interval excludes 0, but the adjusted test does not reach α: no shift in belief is shown"
	case sh.Shift.CI == nil && sh.Shift.NoCI != "":
		reading = "no interval is given from " + sh.Shift.NoCI + " (a shift that lives in a few collapsed answers can be missed by any interval from them), so no shift in belief is shown"
	}
	mde := ""
	if sh.MDENats != nil {
		mde = fmt.Sprintf("; this run detects a shift of %s nats", fnum(*sh.MDENats, 2))
	}
	return fmt.Sprintf(" Belief in the right answer (its log-probability teacher-forced after the model's own reasoning; not accuracy): on %s it moved by %s nats per pair (%s → %s), %s CI %s over %d pairs, sign-flip p = %s%s%s; %s.",
		v.Variant, signed(sh.Shift.Value, 2), fnum(sh.BaseMean, 2), fnum(sh.VariantMean, 2), conf, ivOpt(sh.Shift, 2), sh.Pairs,
		pText(sh.Test.P), adjText(sh.Test), mde, reading)
}

// writeAnswerProb writes the table of the right answer's probability by
// variant (summary.AnswerLogProbShift); nothing for a run without it.
func writeAnswerProb(b *strings.Builder, m *summary.ModelSummary, conf string) {
	var rows []string
	power := 0.0
	for i := range m.Variants {
		v := &m.Variants[i]
		sh := v.AnswerLogProbShift
		if sh == nil || sh.Shift == nil || sh.Test == nil {
			continue
		}
		mde := "n/a"
		power = sh.Power
		if sh.MDENats != nil {
			mde = fnum(*sh.MDENats, 2)
		}
		shown := ""
		if sh.Shown {
			shown = " **shown**"
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s | %s %s%s | %s%s | %s |", v.Variant, sh.Pairs, fnum(sh.BaseMean, 2), fnum(sh.VariantMean, 2),
			signed(sh.Shift.Value, 2), ivOpt(sh.Shift, 2), shown, pText(sh.Test.P), adjText(sh.Test), mde))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Belief in the right answer\n\nAfter each answer, the expected answer was teacher-forced in the prompt's final-answer form right after the model's own reasoning (up to its final-answer marker, or where the budget cut it), in the same context, and its log-probability summed over the number's tokens (natural log, nats; %s). The shift is the mean over distinct pairs of (variant − reference), with the %s interval, the sign-flip p (Holm-adjusted across the variants) and the shift this run detects at %s%% power (MDE). It measures how much probability the model puts on the right answer, not whether it gave it: it moves also in pairs where both answers are wrong. **shown**: the interval excludes 0 and the adjusted test reaches α.\n\n| variant | pairs | reference, nats | variant, nats | shift, nats | p | MDE, nats |\n|---|---|---|---|---|---|---|\n", probe.AnswerScoreVersion, conf, fnum(100*power, 0))
	b.WriteString(strings.Join(rows, "\n") + "\n")
}
