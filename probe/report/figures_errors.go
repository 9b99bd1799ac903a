package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// errorsFigure: the error anatomy (summary.ErrorAnatomy) of each model and
// variant as stacked bars, one segment per kind of error, counts of wrong
// answers read from summary.json.
func (v *view) errorsFigure() (Figure, error) {
	f := Figure{ID: "fig-errors", Title: "Error anatomy of the wrong answers"}
	var kinds []string
	rules := ""
	for _, m := range v.sum.Models {
		for _, vs := range m.Variants {
			if vs.Errors == nil {
				continue
			}
			rules = vs.Errors.Rules
			for _, k := range vs.Errors.Kinds {
				if !slices.Contains(kinds, k.Kind) {
					kinds = append(kinds, k.Kind)
				}
			}
		}
	}
	if len(kinds) == 0 {
		f.Note = "No error anatomy in summary.json: the run recorded no error kinds, or no answer was wrong."
		return f, nil
	}
	l := newLegend()
	var panels []*plot.Plot
	var counted []string
	for mi := range v.sum.Models {
		p, drawn, err := v.errorsPanel(mi, kinds, l)
		if err != nil {
			return f, err
		}
		if p != nil {
			panels = append(panels, p)
			counted = append(counted, drawn...)
		}
	}
	cols := min(len(panels), 3)
	grid := panelGrid(panels, cols)
	w := vg.Points(math.Min(900, float64(cols)*(120+50*float64(len(v.variants)))+160))
	err := f.draw(chart{panels: grid, legend: l, w: w, h: vg.Points(260 * float64(len(grid)))})
	f.Caption = fmt.Sprintf("Wrong answers of each model and variant by the first error rule that fires (%s): the budget ended the answer (unfinished), no number given (no answer), "+
		"a stated operation with a wrong result carried into the answer (arithmetic), the irrelevant clause's quantity applied (clause used), the original problem's answer given (original recalled), anything else (other). "+
		"Wrong answers drawn: %s. Counts from summary.json; their shares with intervals are in the narrative's error anatomy.", rules, strings.Join(counted, ", "))
	return f, err
}

// errorsPanel is model mi's panel of the error anatomy figure: a stacked
// bar per variant with an anatomy, one segment per kind (in kinds' order,
// added to l for the first model), and the "variant count" texts of what it
// draws; nil when the model has no anatomy.
func (v *view) errorsPanel(mi int, kinds []string, l *plot.Legend) (*plot.Plot, []string, error) {
	m := &v.sum.Models[mi]
	p := newPanel(m.Label, "variant", "wrong answers")
	if len(v.sum.Models) == 1 {
		p.Title.Text = ""
	}
	var names, counted []string
	counts := make([]plotter.Values, len(kinds))
	for _, vs := range m.Variants {
		if vs.Errors == nil {
			continue
		}
		names = append(names, vs.Variant)
		counted = append(counted, fmt.Sprintf("%s%s %d", modelPrefix(m.Label, len(v.sum.Models)), vs.Variant, vs.Errors.Wrong))
		for ki, k := range kinds {
			n := 0.0
			for _, e := range vs.Errors.Kinds {
				if e.Kind == k {
					n = float64(e.Count)
				}
			}
			counts[ki] = append(counts[ki], n)
		}
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	p.NominalX(names...)
	labels := make([]string, len(kinds))
	for ki, k := range kinds {
		labels[ki] = strings.ReplaceAll(k, "_", " ")
	}
	top, err := stackBars(p, counts, seriesColor, l, labels, mi == 0)
	if err != nil {
		return nil, nil, err
	}
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.08)
	return p, counted, nil
}

// modelPrefix is "label " when a run has more than one model, else "".
func modelPrefix(label string, models int) string {
	if models > 1 {
		return label + " "
	}
	return ""
}

// dropTicks labels a drop axis in steps of 5, 10, 20, 25 or 50 pp (the
// smallest giving at most 8 labels) and always labels 0 and the strong
// threshold, which the verdicts are worded against.
func dropTicks(strong float64) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		step := 50.0
		for _, s := range []float64{5, 10, 20, 25, 50} {
			if (hi-lo)/s <= 8 {
				step = s
				break
			}
		}
		var ts []plot.Tick
		have := map[float64]bool{}
		for y := math.Ceil(lo/step) * step; y <= hi; y += step {
			if y == 0 {
				y = 0 // not −0, which would be labelled "-0"
			}
			ts = append(ts, plot.Tick{Value: y, Label: fnum(y, 0)})
			have[y] = true
		}
		for _, y := range []float64{0, strong} {
			if !have[y] && y >= lo && y <= hi {
				ts = append(ts, plot.Tick{Value: y, Label: strings.TrimSuffix(fnum(y, 1), ".0")})
			}
		}
		return ts
	})
}

// entropyFloor is the offset of the answer-entropy axis: it draws
// log10(H + entropyFloor), so that 0 bits, the entropy of most tokens of a
// greedy answer, has a place and the spread above it is visible.
const entropyFloor = 0.001

// offsetLog is the answer-entropy axis scale: log10(x + entropyFloor).
type offsetLog struct{}

// Normalize implements plot.Normalizer.
func (offsetLog) Normalize(lo, hi, x float64) float64 {
	f := func(v float64) float64 { return math.Log10(math.Max(v, 0) + entropyFloor) }
	return (f(x) - f(lo)) / (f(hi) - f(lo))
}

// entropyTicks labels 0 and the powers of ten from 10·entropyFloor up to
// hi (entropyFloor itself would crowd the label of 0).
func entropyTicks(lo, hi float64) []plot.Tick {
	ts := []plot.Tick{{Value: 0, Label: "0"}}
	for y := 10 * entropyFloor; y <= hi*1.0001; y *= 10 {
		ts = append(ts, plot.Tick{Value: y, Label: strings.TrimRight(strings.TrimRight(fnum(y, 3), "0"), ".")})
	}
	return ts
}

// plural returns one when n is 1, else many (0 instances, 2 instances).
func plural(n int, many, one string) string {
	if n != 1 {
		return many
	}
	return one
}

// entropyAxis sets p's y axis to the answer-entropy scale (offsetLog, ticks
// entropyTicks) from 0 bits to headroom above top, the highest value drawn,
// so that no outlier is cut off.
func entropyAxis(p *plot.Plot, top float64) {
	p.Y.Min, p.Y.Max = 0, (math.Max(top, 1)+entropyFloor)*1.6-entropyFloor
	p.Y.Scale = offsetLog{}
	p.Y.Tick.Marker = plot.TickerFunc(entropyTicks)
}
