package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/fragility/fragility/probe/summary"
	"gonum.org/v1/plot/vg"
)

// hasAnswerProb reports whether some variant of the summary has a paired
// shift of the right answer's log-probability after the model's reasoning
// (a run recorded with the answer-scoring pass).
func hasAnswerProb(s *summary.Summary) bool {
	return hasShift(s, afterShift)
}

// hasAnswerFirst reports whether some variant of the summary has a paired
// shift of the answer first (a run recorded with answer-score/2).
func hasAnswerFirst(s *summary.Summary) bool {
	return hasShift(s, firstShift)
}

// afterShift and firstShift pick a variant's shift of the right answer
// after the model's reasoning and of the answer first.
func afterShift(v *summary.VariantSummary) *summary.AnswerLogProbShift { return v.AnswerLogProbShift }

func firstShift(v *summary.VariantSummary) *summary.AnswerLogProbShift {
	return v.AnswerFirstLogProbShift
}

// hasShift reports whether pick gives a shift for some variant.
func hasShift(s *summary.Summary, pick func(*summary.VariantSummary) *summary.AnswerLogProbShift) bool {
	for _, m := range s.Models {
		for i := range m.Variants {
			if pick(&m.Variants[i]) != nil {
				return true
			}
		}
	}
	return false
}

// answerProbFigure plots, per template, the mean paired shift of the right
// answer's log-probability after the model's own reasoning
// (summary.TemplateShift, nats) of every model and variant, with each
// series' overall shift as a dashed line.
func (v *view) answerProbFigure() (Figure, error) {
	f := Figure{ID: "fig-answer-logprob", Title: "The right answer after the model's own reasoning (soft accuracy): paired shift per template", Wide: true}
	return v.logProbFigure(f, afterShift, "shift of log p(right answer) after the reasoning, nats (variant − reference)",
		"Per template, the mean over its distinct pairs of the change in the natural log-probability of the expected answer, teacher-forced after the model's own reasoning (variant − reference, nats): a soft accuracy, about 0 where the text reached the right answer, far below where it reached another or the budget cut it, so it moves with accuracy, not belief.")
}

// answerFirstFigure plots, per template, the mean paired shift of the
// answer first (forced right after the prompt) of every model and variant.
func (v *view) answerFirstFigure() (Figure, error) {
	f := Figure{ID: "fig-answer-first-logprob", Title: "The answer first: paired shift per template", Wide: true}
	return v.logProbFigure(f, firstShift, "shift of log p(right answer) right after the prompt, nats (variant − reference)",
		"Per template, the mean over its distinct pairs of the change in the natural log-probability of the expected answer in the final-answer form, teacher-forced right after the prompt before any reasoning (variant − reference, nats): the two sides differ only in their prompts; below 0 the variant lowered the probability the model gives the right answer from the problem alone.")
}

// logProbFigure draws f: per template, the shift pick gives of every model
// and variant, ylabel on the y axis, lead opening the caption.
func (v *view) logProbFigure(f Figure, pick func(*summary.VariantSummary) *summary.AnswerLogProbShift, ylabel, lead string) (Figure, error) {
	var tmpls []string
	type series struct {
		name  string
		shift *summary.AnswerLogProbShift
	}
	var ss []series
	for _, m := range v.sum.Models {
		for i := range m.Variants {
			x := &m.Variants[i]
			if sh := pick(x); sh != nil {
				ss = append(ss, series{m.Label + " · " + x.Variant, sh})
				for _, t := range sh.PerTemplate {
					if !slices.Contains(tmpls, t.Template) {
						tmpls = append(tmpls, t.Template)
					}
				}
			}
		}
	}
	if len(ss) == 0 || len(tmpls) == 0 {
		f.Note = "No paired shifts of this log-probability in this run."
		return f, nil
	}
	slices.Sort(tmpls)
	p := newPanel("", "template", ylabel)
	p.NominalX(tmpls...)
	x0, x1 := -0.5, float64(len(tmpls))-0.5
	ymin, ymax := -1.0, 1.0
	zero, err := hline(0, x0, x1, refColor, false)
	if err != nil {
		return f, err
	}
	p.Add(zero)
	l := newLegend()
	for i, s := range ss {
		var e errPoints
		for _, t := range s.shift.PerTemplate {
			x := float64(slices.Index(tmpls, t.Template)) + offset(i, len(ss))
			e.add(x, t.Shift, t.Shift, t.Shift)
			ymin, ymax = math.Min(ymin, t.Shift), math.Max(ymax, t.Shift)
		}
		if err := addSeries(p, l, s.name, i, &e); err != nil {
			return f, err
		}
		if s.shift.Shift != nil {
			ln, err := hline(s.shift.Shift.Value, x0, x1, seriesColor(i), true)
			if err != nil {
				return f, err
			}
			p.Add(ln)
		}
	}
	p.X.Min, p.X.Max = x0, x1
	pad := (ymax - ymin) * 0.05
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	err = f.draw(single(p, legendFor(l, len(ss)), widthFor(len(tmpls), len(ss), len(ss) > 1), vg.Points(300)))
	f.Caption = fmt.Sprintf("%s Dashed: each series' mean over all pairs (its interval and test are in the narrative). %d templates, %d series.", lead, len(tmpls), len(ss))
	return f, err
}
