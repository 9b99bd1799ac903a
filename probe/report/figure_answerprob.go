package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/fragility/fragility/probe/summary"
	"gonum.org/v1/plot/vg"
)

// hasAnswerProb reports whether some variant of the summary has a paired
// shift of the right answer's log-probability (a run recorded with the
// answer-scoring pass).
func hasAnswerProb(s *summary.Summary) bool {
	for _, m := range s.Models {
		for _, v := range m.Variants {
			if v.AnswerLogProbShift != nil {
				return true
			}
		}
	}
	return false
}

// answerProbFigure plots, per template, the mean paired shift of the right
// answer's log-probability (summary.TemplateShift, nats) of every model and
// variant, with each series' overall shift as a dashed line.
func (v *view) answerProbFigure() (Figure, error) {
	f := Figure{ID: "fig-answer-logprob", Title: "Belief in the right answer: paired shift per template", Wide: true}
	var tmpls []string
	type series struct {
		name  string
		shift *summary.AnswerLogProbShift
	}
	var ss []series
	for _, m := range v.sum.Models {
		for _, x := range m.Variants {
			if sh := x.AnswerLogProbShift; sh != nil {
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
		f.Note = "No paired shifts of the right answer's log-probability in this run."
		return f, nil
	}
	slices.Sort(tmpls)
	p := newPanel("", "template", "shift of log p(right answer), nats (variant − reference)")
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
	f.Caption = fmt.Sprintf("Per template, the mean over its distinct pairs of the change in the natural log-probability of the expected answer, teacher-forced after the model's own reasoning (variant − reference, nats); below 0 the variant lowered the model's belief in the right answer, whether or not its answer was right. Dashed: each series' mean over all pairs (its interval and test are in the narrative). %d templates, %d series.", len(tmpls), len(ss))
	return f, err
}
