package report

import (
	"fmt"
	"math"

	"github.com/fragility/fragility/probe/summary"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// paperFigure: the distribution of the datasets' accuracies (summary
// PaperView) per model and row, as histograms with the originals' accuracy
// marked: the paper's Figure 2 and its first finding (its percentile
// captioned as descriptive, the paired drop named for inference), each
// panel titled with N, the templates per dataset.
func (v *view) paperFigure() (Figure, error) {
	f := Figure{ID: "fig-paper-datasets", Title: "Accuracy across datasets (the paper's view)"}
	var rows [][]*plot.Plot
	var pcts []string
	for _, pv := range v.sum.Paper {
		var row []*plot.Plot
		for _, r := range pv.Rows {
			title := r.Name
			if len(v.sum.Paper) > 1 {
				title = pv.Model + ", " + r.Name
			}
			title += " (N = " + templatesPerDataset(r) + ")"
			p, err := paperHistogram(title, r, pv.Originals)
			if err != nil {
				return f, err
			}
			row = append(row, p)
			if r.OriginalsPercentile != nil {
				pcts = append(pcts, fmt.Sprintf("%s %s: %s", pv.Model, r.Name, ordinal(*r.OriginalsPercentile)))
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		f.Note = "The run has no drawn datasets."
		return f, nil
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	err := f.draw(chart{panels: rows, w: vg.Points(math.Min(900, math.Max(430, 220*float64(cols)))), h: vg.Points(210 * float64(len(rows)))})
	f.Caption = "Histograms of the accuracy of each dataset (the j-th instance of every template; one bar height = datasets in the bin), per level and NoOp. " +
		"Dashed line: the accuracy on the originals (GSM8K: the base variant at level symbolic). Its mid-rank percentile among the datasets, descriptive (the paired drop vs GSM8K in the narrative is the number for inference): " +
		listOr(pcts) + ". The spread is how much one dataset's accuracy moves between re-draws, not the uncertainty of the mean (see the narrative's table for the clustered intervals), and it depends on N, the templates in a dataset: the paper's datasets held 100, and from fewer the same model spreads more."
	if len(pcts) == 0 {
		f.Caption = "Histograms of the accuracy of each dataset (the j-th instance of every template), per level and NoOp; the run has no originals to mark."
	}
	return f, err
}

// paperHistogram is one panel: the datasets' accuracies of r binned on a
// 0–100 axis (bins of 100/items when a dataset has at most 25 items, so
// that each attainable accuracy has its own bin, else of 2 points), with
// the originals' accuracy as a dashed vertical line.
func paperHistogram(title string, r summary.PaperRow, o *summary.PaperOriginalRow) (*plot.Plot, error) {
	p := newPanel(title, "dataset accuracy, % correct", "datasets")
	w := 2.0
	if n := r.Datasets[0].Items; n <= 25 {
		w = 100 / float64(n)
	}
	counts := map[int]int{}
	top := 0
	for _, d := range r.Datasets {
		k := int(math.Floor(d.AccuracyPct/w + 0.5))
		counts[k]++
		top = max(top, counts[k])
	}
	for k, c := range counts {
		x := float64(k) * w
		bar, err := band(x-0.45*w, 0, x+0.45*w, float64(c), seriesColor(0))
		if err != nil {
			return nil, err
		}
		p.Add(bar)
	}
	p.X.Min, p.X.Max = -w/2, 100+w/2
	p.Y.Min, p.Y.Max = 0, float64(top)+0.5
	p.X.Tick.Marker = plot.ConstantTicks(percentTicks())
	if o != nil {
		l, err := plotter.NewLine(plotter.XYs{{X: o.AccuracyPct.Value, Y: 0}, {X: o.AccuracyPct.Value, Y: float64(top) + 0.5}})
		if err != nil {
			return nil, err
		}
		l.LineStyle.Color = refColor
		l.LineStyle.Width = vg.Points(1.2)
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
	}
	return p, nil
}
