package report

import (
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/compare"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one plot of the report: an inline SVG and a caption that says
// what is plotted and, for intervals, how they were computed. A figure whose
// data the run does not have carries a Note instead of an SVG.
type Figure struct {
	ID      string        // anchor in the page, e.g. "fig-accuracy"
	Title   string        // short heading
	Caption string        // what is plotted, the unit, the interval method
	SVG     template.HTML // the <svg> element; "" with a Note
	Wide    bool          // the plot needs the page's full width
	Note    string        // why there is no plot; "" with an SVG
}

// view is the run as the figures see it: the summary's models and variants
// in its order, and the trials grouped by them.
type view struct {
	run      *Run
	sum      *summary.Summary
	models   []modelRef
	labelOf  map[string]string // trial model key -> model label
	variants []string
}

func newView(r *Run) *view {
	v := &view{run: r, sum: r.Summary, models: summaryModels(r.Summary), labelOf: map[string]string{}, variants: r.Summary.Variants}
	for _, m := range v.models {
		v.labelOf[m.Key] = m.Label
	}
	return v
}

// label returns the model label of a trial.
func (v *view) label(t *results.Trial) string {
	if l, ok := v.labelOf[trialModelKey(t)]; ok {
		return l
	}
	return t.ModelName
}

// nonBase returns the variants other than base, in summary order.
func (v *view) nonBase() []string {
	var out []string
	for _, x := range v.variants {
		if x != summary.BaseVariant {
			out = append(out, x)
		}
	}
	return out
}

// figures builds every figure of the report, in page order.
func (v *view) figures() ([]Figure, error) {
	builders := []func() (Figure, error){
		v.accuracyFigure, v.flipsFigure, v.dropFigure, v.errorsFigure, v.heatmapFigure,
		v.answerEntropyFigure, v.positionEntropyFigure, v.ddcFigure, v.difficultyFigure,
	}
	if hasAnswerProb(v.sum) {
		builders = append(builders, v.answerProbFigure)
	}
	if hasAnswerFirst(v.sum) {
		builders = append(builders, v.answerFirstFigure)
	}
	if v.run.Compare != nil {
		builders = append(builders, v.compareFigure)
	}
	if v.sum.Paper != nil {
		builders = append(builders, v.paperFigure)
	}
	var out []Figure
	for _, b := range builders {
		f, err := b()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.ID, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// offset spreads n series around a category's x position.
func offset(i, n int) float64 {
	if n <= 1 {
		return 0
	}
	w := math.Min(0.7, 0.18*float64(n))
	return -w/2 + w*float64(i)/float64(n-1)
}

// errPoints are points with asymmetric vertical error bars, given as their
// lower and upper ends.
type errPoints struct {
	xs, ys, lo, hi []float64
}

func (e *errPoints) add(x, y, lo, hi float64) {
	e.xs, e.ys, e.lo, e.hi = append(e.xs, x), append(e.ys, y), append(e.lo, lo), append(e.hi, hi)
}
func (e *errPoints) Len() int                        { return len(e.xs) }
func (e *errPoints) XY(i int) (float64, float64)     { return e.xs[i], e.ys[i] }
func (e *errPoints) YError(i int) (float64, float64) { return e.ys[i] - e.lo[i], e.hi[i] - e.ys[i] }
func (e *errPoints) points() plotter.XYs             { return xys(e.xs, e.ys) }
func (e *errPoints) hasBars() bool {
	return slices.ContainsFunc(e.lo, func(x float64) bool { return !math.IsNaN(x) })
}
func xys(xs, ys []float64) plotter.XYs {
	out := make(plotter.XYs, len(xs))
	for i := range xs {
		out[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	return out
}

// addSeries draws points with error bars in series colour i and adds them to
// the legend under name (when legend is not nil). Points without an interval
// (lo = hi = value) get no bar.
func addSeries(p *plot.Plot, l *plot.Legend, name string, i int, e *errPoints) error {
	if e.Len() == 0 {
		return nil
	}
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return err
	}
	bars.LineStyle.Color = seriesColor(i)
	bars.LineStyle.Width = vg.Points(1.2)
	bars.CapWidth = vg.Points(6)
	sc, err := plotter.NewScatter(e.points())
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Shape: seriesGlyph(i), Radius: vg.Points(3.5)}
	p.Add(bars, sc)
	if l != nil {
		l.Add(name, sc)
	}
	return nil
}

// hline returns a horizontal line at y from x0 to x1.
func hline(y, x0, x1 float64, c color.Color, dashed bool) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return nil, err
	}
	l.LineStyle.Color = c
	l.LineStyle.Width = vg.Points(1)
	if dashed {
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return l, nil
}

// band returns a filled rectangle from (x0, y0) to (x1, y1) with no outline.
func band(x0, y0, x1, y1 float64, c color.Color) (*plotter.Polygon, error) {
	pg, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	if err != nil {
		return nil, err
	}
	pg.Color = c
	pg.LineStyle.Width = 0
	return pg, nil
}

// widthFor returns a chart width fitting n categories of series points,
// and a legend beside them when legend is set.
func widthFor(n, series int, legend bool) vg.Length {
	w := 110 + (70+14*float64(max(series-1, 0)))*float64(n)
	if legend {
		w += 150
	}
	return vg.Points(math.Max(430, math.Min(900, w)))
}

// wideFrom is the chart width from which a figure takes the page's full
// width instead of half of it.
const wideFrom = 470

// draw renders c into the figure.
func (f *Figure) draw(c chart) error {
	svg, err := c.svg()
	f.SVG, f.Wide = svg, c.w > vg.Points(wideFrom)
	return err
}

// legendFor returns l when there is more than one series to tell apart.
func legendFor(l *plot.Legend, series int) *plot.Legend {
	if series > 1 {
		return l
	}
	return nil
}

// accuracyFigure: accuracy per model × variant with the summary's interval,
// base marked.
func (v *view) accuracyFigure() (Figure, error) {
	s := v.sum
	f := Figure{ID: "fig-accuracy", Title: "Accuracy per model and variant"}
	cells := accuracyCells(s)
	if len(cells) == 0 || len(v.variants) == 0 {
		f.Note = "No scored trials."
		return f, nil
	}
	p := newPanel("", "variant", "accuracy, % correct")
	p.NominalX(v.variants...)
	nv, nm := len(v.variants), len(v.models)
	if bi := slices.Index(v.variants, summary.BaseVariant); bi >= 0 {
		b, err := band(float64(bi)-0.45, 0, float64(bi)+0.45, 100, baseBand)
		if err != nil {
			return f, err
		}
		p.Add(b)
	}
	l := newLegend()
	var kx, ky []float64
	var kt []string
	for mi, m := range v.models {
		var e errPoints
		var base *accuracyCell
		for _, c := range cells {
			if c.Model != m.Label || c.Acc == nil {
				continue
			}
			vi := slices.Index(v.variants, c.Variant)
			x := float64(vi) + offset(mi, nm)
			lo, hi := c.Acc.bounds()
			e.add(x, c.Acc.Value, lo, hi)
			kx, ky, kt = append(kx, x), append(ky, -2), append(kt, countText(c.K, c.N))
			if c.Variant == summary.BaseVariant {
				cc := c
				base = &cc
			}
		}
		if base != nil {
			ln, err := hline(base.Acc.Value, -0.5, float64(nv)-0.5, withAlpha(seriesColor(mi), 0x99), true)
			if err != nil {
				return f, err
			}
			p.Add(ln)
		}
		if err := addSeries(p, l, m.Label, mi, &e); err != nil {
			return f, err
		}
	}
	if nm <= 3 {
		lb, err := labels(kx, ky, kt, textStyle(7, refColor, draw.XCenter, draw.YTop))
		if err != nil {
			return f, err
		}
		p.Add(lb)
	}
	p.X.Min, p.X.Max = -0.5, float64(nv)-0.5
	p.Y.Min, p.Y.Max = -8, 100
	p.Y.Tick.Marker = plot.ConstantTicks(percentTicks())
	err := f.draw(single(p, legendFor(l, nm), widthFor(nv, nm, nm > 1), vg.Points(300)))
	kn := "; k/n under each point"
	if nm > 3 {
		kn = " (k/n in the narrative's tables)"
	}
	f.Caption = fmt.Sprintf("Share of %s answered correctly, per model (colour and marker) and variant (%d points drawn)%s. "+
		"The shaded column is base, the problems as authored, and the dashed line carries each model's base accuracy across, so a drop is the distance below it. "+
		"Error bars: %s.", unitText(s), len(cells), kn, accuracyIntervalText(s, cells))
	return f, err
}

func percentTicks() []plot.Tick {
	var t []plot.Tick
	for y := 0; y <= 100; y += 20 {
		t = append(t, plot.Tick{Value: float64(y), Label: fmt.Sprint(y)})
	}
	for y := 10; y < 100; y += 20 {
		t = append(t, plot.Tick{Value: float64(y)})
	}
	return t
}

// flipColors are the four cells of the paired table: both right, reference
// right and variant wrong, reference wrong and variant right, both wrong.
var flipColors = []color.Color{
	color.RGBA{0x00, 0x9E, 0x73, 0xff},
	color.RGBA{0xD5, 0x5E, 0x00, 0xff},
	color.RGBA{0x56, 0xB4, 0xE9, 0xff},
	color.Gray{0xbb},
}

var flipNames = []string{"both right", "reference right → variant wrong", "reference wrong → variant right", "both wrong"}

// panelGrid lays n panels out in rows of at most cols.
func panelGrid(ps []*plot.Plot, cols int) [][]*plot.Plot {
	var out [][]*plot.Plot
	for i := 0; i < len(ps); i += cols {
		out = append(out, ps[i:min(i+cols, len(ps))])
	}
	return out
}

// flipsFigure: the paired 2×2 table per model × variant as stacked bars.
func (v *view) flipsFigure() (Figure, error) {
	f := Figure{ID: "fig-flips", Title: "Paired flips against the reference"}
	cells := flipCells(v.sum)
	vars := v.nonBase()
	if len(cells) == 0 || len(vars) == 0 {
		f.Note = "No matched reference/variant pairs: the run has no base variant or no other variant."
		return f, nil
	}
	l := newLegend()
	var panels []*plot.Plot
	for mi, m := range v.models {
		p := newPanel(m.Label, "variant", "matched pairs")
		if len(v.models) == 1 {
			p.Title.Text = ""
		}
		p.NominalX(vars...)
		counts := make([]plotter.Values, 4)
		for k := range counts {
			counts[k] = make(plotter.Values, len(vars))
		}
		for _, c := range cells {
			if c.Model != m.Label {
				continue
			}
			vi := slices.Index(vars, c.Variant)
			counts[0][vi], counts[1][vi], counts[2][vi], counts[3][vi] = c.BothRight, c.BaseOnly, c.VariantOnly, c.BothBad
		}
		top, err := stackBars(p, counts, func(k int) color.Color { return flipColors[k] }, l, flipNames[:], mi == 0)
		if err != nil {
			return f, err
		}
		p.X.Min, p.X.Max = -0.5, float64(len(vars))-0.5
		p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.06)
		panels = append(panels, p)
	}
	cols := min(len(panels), 3)
	grid := panelGrid(panels, cols)
	w := vg.Points(math.Min(900, float64(cols)*(140+60*float64(len(vars)))+170))
	err := f.draw(chart{panels: grid, legend: l, w: w, h: vg.Points(260 * float64(len(grid)))})
	var drawn []string
	for _, c := range cells {
		drawn = append(drawn, fmt.Sprintf("%s%s %s", modelPrefix(c.Model, len(v.models)), c.Variant, countNum(c.BothRight+c.BaseOnly+c.VariantOnly+c.BothBad)))
	}
	f.Caption = "Counts of " + pairsText(v.sum) + ", split by outcome: right in both, right in the reference and wrong in the variant, " +
		"wrong in the reference and right in the variant, wrong in both. Pairs drawn: " + strings.Join(drawn, ", ") + ". Counts from summary.json; the difference between the two middle segments, over the pairs, is the paired drop."
	return f, err
}

// dropFigure: drop per variant per model with the summary's interval and the
// thresholds the verdicts are worded against.
func (v *view) dropFigure() (Figure, error) {
	s := v.sum
	f := Figure{ID: "fig-drop", Title: "Paired drop against the reference per variant"}
	cells := dropCells(s)
	vars := v.nonBase()
	if len(cells) == 0 || len(vars) == 0 {
		f.Note = "No drops: the run has no base variant or no other variant."
		return f, nil
	}
	neg, strong := dropThresholds(s)
	p := newPanel("", "variant", "drop, percentage points (reference − variant)")
	p.NominalX(vars...)
	nv, nm := len(vars), len(v.models)
	x0, x1 := -0.5, float64(nv)-0.5
	ymin, ymax := -5.0, strong+5
	zero, err := hline(0, x0, x1, refColor, false)
	if err != nil {
		return f, err
	}
	p.Add(zero)
	for _, th := range []float64{neg, strong} {
		ln, err := hline(th, x0, x1, lightColor, true)
		if err != nil {
			return f, err
		}
		p.Add(ln)
	}
	l := newLegend()
	for mi, m := range v.models {
		var e errPoints
		for _, c := range cells {
			if c.Model != m.Label {
				continue
			}
			x := float64(slices.Index(vars, c.Variant)) + offset(mi, nm)
			lo, hi := c.Drop.bounds()
			e.add(x, c.Drop.Value, lo, hi)
			ymin, ymax = math.Min(ymin, lo), math.Max(ymax, hi)
		}
		if err := addSeries(p, l, m.Label, mi, &e); err != nil {
			return f, err
		}
	}
	lb, err := labels([]float64{x1, x1}, []float64{neg, strong},
		[]string{fmt.Sprintf("negligible %g pp ", neg), fmt.Sprintf("strong %g pp ", strong)},
		textStyle(8, refColor, draw.XRight, draw.YBottom))
	if err != nil {
		return f, err
	}
	lb.Offset = vg.Point{Y: vg.Points(2)}
	p.Add(lb)
	p.X.Min, p.X.Max = x0, x1
	pad := (ymax - ymin) * 0.05
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	p.Y.Tick.Marker = dropTicks(strong)
	err = f.draw(single(p, legendFor(l, nm), widthFor(nv, nm, nm > 1), vg.Points(300)))
	f.Caption = fmt.Sprintf("%s, per model and variant (%d drawn). Error bars: %s. Dashed lines: the negligible (%g pp) and strong (%g pp) thresholds the verdicts are worded against; "+
		"the verdicts themselves are in the narrative above.", dropText(s), len(cells), intervalText(s, dropIntervals(cells)), neg, strong)
	return f, err
}

// grid is a templates × variants table of shares for plotter.HeatMap:
// column c is variant c, row r is template r.
type grid struct{ z [][]float64 } // z[r][c]

func (g grid) Dims() (int, int)   { return len(g.z[0]), len(g.z) }
func (g grid) Z(c, r int) float64 { return g.z[r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() float64       { return 0 }
func (g grid) Max() float64       { return 1 }

// sequential is a light-to-dark blue palette for shares in [0, 1].
type sequential []color.Color

func (s sequential) Colors() []color.Color { return s }

func blues(n int) sequential {
	a, b := [3]float64{0xf4, 0xf8, 0xfc}, [3]float64{0x08, 0x30, 0x6b}
	out := make(sequential, n)
	for i := range out {
		t := float64(i) / float64(n-1)
		out[i] = color.RGBA{uint8(a[0] + t*(b[0]-a[0])), uint8(a[1] + t*(b[1]-a[1])), uint8(a[2] + t*(b[2]-a[2])), 0xff}
	}
	return out
}

// heatmapFigure: per template and variant, the share of a model's trials
// answered correctly, templates sorted by base share.
func (v *view) heatmapFigure() (Figure, error) {
	f := Figure{ID: "fig-templates", Title: "Share correct per template and variant"}
	cnt := map[heatKey]*heatCount{}
	templateSet := map[string]bool{}
	for i := range v.run.Trials {
		t := &v.run.Trials[i]
		if t.Skipped() {
			continue
		}
		k := heatKey{v.label(t), t.TemplateID, t.Variant}
		c := cnt[k]
		if c == nil {
			c = &heatCount{}
			cnt[k] = c
		}
		c.n++
		if t.Correct {
			c.k++
		}
		templateSet[t.TemplateID] = true
	}
	if len(templateSet) == 0 || len(v.variants) == 0 {
		f.Note = "No scored trials."
		return f, nil
	}
	templates := sortedKeys(templateSet)
	pal := blues(21)
	var panels []*plot.Plot
	for _, m := range v.models {
		p, err := v.heatmapPanel(m, templates, cnt, pal)
		if err != nil {
			return f, err
		}
		panels = append(panels, p)
	}
	cols := min(len(panels), 3)
	gr := panelGrid(panels, cols)
	longest := 0
	for _, t := range templates {
		longest = max(longest, len(t))
	}
	w := math.Min(900, float64(cols)*(float64(longest)*5.5+60+55*float64(len(v.variants))))
	h := float64(len(gr)) * (70 + 17*float64(len(templates)))
	err := f.draw(chart{panels: gr, w: vg.Points(math.Max(w, 320)), h: vg.Points(h)})
	f.Caption = fmt.Sprintf("%d templates × %d variants", len(templates), len(v.variants)) + plural(len(panels), ", one panel per model", "") + ". " +
		"Share of scored trials answered correctly per template (row) and variant (column), k/n in each cell; darker is more often right, grey means no scored trial. " +
		"Rows are sorted by the share in base, highest at the top, so a template that is solved as authored and fails in a variant stands out as a light cell in a dark row. Plain counts from results.csv."
	return f, err
}

// heatKey is a cell of the template heatmap: a model, template and variant.
type heatKey struct{ model, template, variant string }

// heatCount is a cell's count of correct (k) of scored (n) trials.
type heatCount struct{ k, n int }

// heatmapPanel is model m's panel of the template heatmap: templates in
// rows sorted by base share, variants in columns, k/n in each cell.
func (v *view) heatmapPanel(m modelRef, templates []string, cnt map[heatKey]*heatCount, pal sequential) (*plot.Plot, error) {
	share := func(tmpl, variant string) float64 {
		c := cnt[heatKey{m.Label, tmpl, variant}]
		if c == nil || c.n == 0 {
			return math.NaN()
		}
		return float64(c.k) / float64(c.n)
	}
	rows := slices.Clone(templates)
	// Bottom row first: ascending base share, so the templates the
	// model solves as authored are at the top; ties by ID.
	slices.SortStableFunc(rows, func(a, b string) int {
		x, y := share(a, summary.BaseVariant), share(b, summary.BaseVariant)
		if math.IsNaN(x) {
			x = -1
		}
		if math.IsNaN(y) {
			y = -1
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
		return strings.Compare(b, a)
	})
	g := grid{z: make([][]float64, len(rows))}
	var lx, ly []float64
	var lt []string
	var dark []bool
	for r, tmpl := range rows {
		g.z[r] = make([]float64, len(v.variants))
		for c, vn := range v.variants {
			g.z[r][c] = share(tmpl, vn)
			if kn := cnt[heatKey{m.Label, tmpl, vn}]; kn != nil {
				lx, ly, lt = append(lx, float64(c)), append(ly, float64(r)), append(lt, fmt.Sprintf("%d/%d", kn.k, kn.n))
				dark = append(dark, g.z[r][c] > 0.55)
			}
		}
	}
	hm := plotter.NewHeatMap(g, pal)
	hm.NaN = color.Gray{0xf0}
	p := newPanel(m.Label, "variant", "")
	if len(v.models) == 1 {
		p.Title.Text = ""
	}
	p.Add(hm)
	p.NominalX(v.variants...)
	p.NominalY(rows...)
	lb, err := labels(lx, ly, lt, textStyle(8, color.Black, draw.XCenter, draw.YCenter))
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		if dark[i] {
			lb.TextStyle[i].Color = color.White
		}
	}
	p.Add(lb)
	return p, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// answerSpan returns the token index range [from, to) of a trial's answer
// tokens, the way probe defines them (the generated tokens that overlap the
// extracted number; every token when no rule fired), found by running the
// answer extraction on the recorded response as the run did (a response the
// output budget or a full context cut read by answer.Truncated). ok is false when the recorded
// extraction differs from today's rules, so the span is not known.
func answerSpan(t *results.Trial, toks []Token) (from, to int, ok bool) {
	ex := answer.Extract(t.Response)
	if t.StopReason == llm.StopMaxTokens || t.StopReason == llm.StopContextFull {
		ex = answer.Truncated(ex)
	}
	if ex.Value != t.Extracted || ex.Rule != t.Rule {
		return 0, 0, false
	}
	if ex.Rule == answer.RuleNone {
		return 0, len(toks), true
	}
	from, to = -1, -1
	off := 0
	for i, tok := range toks {
		start, end := off, off+len(tok.Piece)
		off = end
		if start < ex.End && end > ex.Start {
			if from < 0 {
				from = i
			}
			to = i + 1
		}
	}
	if from < 0 {
		return 0, len(toks), true // no token overlaps: probe then takes every token
	}
	return from, to, true
}

// addBox adds a box plot of vals at x in series colour i.
func addBox(p *plot.Plot, vals []float64, x float64, i int, width vg.Length) (*plotter.BoxPlot, error) {
	b, err := plotter.NewBoxPlot(width, x, plotter.Values(vals))
	if err != nil {
		return nil, err
	}
	b.FillColor = withAlpha(seriesColor(i), 0x55)
	b.BoxStyle.Color = seriesColor(i)
	b.MedianStyle.Color = seriesColor(i)
	b.MedianStyle.Width = vg.Points(1.5)
	b.WhiskerStyle.Color = seriesColor(i)
	b.GlyphStyle.Color = withAlpha(seriesColor(i), 0xaa)
	b.GlyphStyle.Radius = vg.Points(1.5)
	p.Add(b)
	return b, nil
}

// mvKey names a model and a variant.
type mvKey struct{ model, variant string }

// answerEntropies returns the entropy of every answer token of the scored
// trials with a trace, by model and variant, the trials they come from, and
// the count of trials left out because their recorded answer is not the
// one today's extraction rules give.
func (v *view) answerEntropies() (vals map[mvKey][]float64, trials map[mvKey]int, mismatched int) {
	vals, trials = map[mvKey][]float64{}, map[mvKey]int{}
	for i := range v.run.Trials {
		t := &v.run.Trials[i]
		tr := v.run.Traces[t.ItemID]
		if t.Skipped() || tr == nil || len(tr.Tokens) == 0 {
			continue
		}
		from, to, ok := answerSpan(t, tr.Tokens)
		if !ok {
			mismatched++
			continue
		}
		k := mvKey{v.label(t), t.Variant}
		trials[k]++
		for _, tok := range tr.Tokens[from:to] {
			vals[k] = append(vals[k], tok.EntropyBits)
		}
	}
	return vals, trials, mismatched
}

// answerEntropyFigure: the distribution of per-token entropy on answer
// tokens, base and each variant, per model.
func (v *view) answerEntropyFigure() (Figure, error) {
	f := Figure{ID: "fig-answer-entropy", Title: "Entropy on answer tokens"}
	if v.run.Traces == nil {
		f.Note = "No traces.jsonl in the run directory: per-token entropies are not available."
		return f, nil
	}
	vals, trials, mismatched := v.answerEntropies()
	if len(vals) == 0 {
		f.Note = "No generated tokens."
		return f, nil
	}
	p := newPanel("", "variant", "entropy per answer token, bits")
	p.NominalX(v.variants...)
	nm := len(v.models)
	l := newLegend()
	w := vg.Points(math.Min(28, 50/float64(nm)))
	for mi, m := range v.models {
		var first *plotter.BoxPlot
		for vi, vn := range v.variants {
			xs := vals[mvKey{m.Label, vn}]
			if len(xs) == 0 {
				continue
			}
			b, err := addBox(p, xs, float64(vi)+offset(mi, nm), mi, w)
			if err != nil {
				return f, err
			}
			if first == nil {
				first = b
			}
		}
		if first != nil && nm > 1 {
			key, err := plotter.NewScatter(plotter.XYs{{}})
			if err != nil {
				return f, err
			}
			key.GlyphStyle = draw.GlyphStyle{Color: first.FillColor, Shape: draw.BoxGlyph{}, Radius: vg.Points(4)}
			l.Add(m.Label, key)
		}
	}
	p.X.Min, p.X.Max = -0.5, float64(len(v.variants))-0.5
	top := 0.0
	var counts []string
	for _, m := range v.models {
		for _, vn := range v.variants {
			xs := vals[mvKey{m.Label, vn}]
			top = math.Max(top, slices.Max(append([]float64{0}, xs...)))
			if len(xs) > 0 {
				counts = append(counts, fmt.Sprintf("%s%s %d tokens of %d trials", modelPrefix(m.Label, nm), vn, len(xs), trials[mvKey{m.Label, vn}]))
			}
		}
	}
	entropyAxis(p, top)
	var leg *plot.Legend
	if nm > 1 {
		leg = l
	}
	err := f.draw(single(p, leg, widthFor(len(v.variants), nm, nm > 1), vg.Points(280)))
	f.Caption = "Distribution of the entropy (bits, over the full vocabulary) of each answer token, pooled over a model's scored trials in each variant; " +
		"answer tokens are the generated tokens of the extracted number (all generated tokens when no number was extracted), as in results.csv's answer-entropy columns. " +
		fmt.Sprintf("Boxes: quartiles; whiskers: the most extreme values within 1.5 × IQR; points: values beyond. The axis is logarithmic in H + %g bits, so that the many tokens at 0 bits sit at its foot and the spread above them shows. Drawn: %s. From traces.jsonl.", entropyFloor, strings.Join(counts, "; "))
	if mismatched > 0 {
		f.Caption += fmt.Sprintf(" %d trials whose recorded answer differs from this version's extraction rules are left out.", mismatched)
	}
	return f, err
}

// minPositionTrials is the fewest trials a token position must have to be
// drawn in the entropy-by-position plot.
const minPositionTrials = 5

// positionEntropyFigure: mean entropy at each generated-token position, for
// correct and wrong trials.
func (v *view) positionEntropyFigure() (Figure, error) {
	f := Figure{ID: "fig-position-entropy", Title: "Entropy along the answer, correct vs wrong"}
	if v.run.Traces == nil {
		f.Note = "No traces.jsonl in the run directory: per-token entropies are not available."
		return f, nil
	}
	type key struct {
		model   string
		correct bool
	}
	sum, cnt, trials := map[key][]float64{}, map[key][]int{}, map[key]int{}
	for i := range v.run.Trials {
		t := &v.run.Trials[i]
		tr := v.run.Traces[t.ItemID]
		if t.Skipped() || tr == nil || len(tr.Tokens) == 0 {
			continue
		}
		k := key{v.label(t), t.Correct}
		trials[k]++
		for j, tok := range tr.Tokens {
			if j >= len(sum[k]) {
				sum[k] = append(sum[k], 0)
				cnt[k] = append(cnt[k], 0)
			}
			sum[k][j] += tok.EntropyBits
			cnt[k][j]++
		}
	}
	if len(trials) == 0 {
		f.Note = "No generated tokens."
		return f, nil
	}
	p := newPanel("", "generated token position", "mean entropy, bits")
	l := newLegend()
	drawn := 0
	for mi, m := range v.models {
		for _, correct := range []bool{true, false} {
			k := key{m.Label, correct}
			need := min(minPositionTrials, trials[k])
			var xs, ys []float64
			for j := range sum[k] {
				if cnt[k][j] < need || need == 0 {
					break
				}
				xs, ys = append(xs, float64(j+1)), append(ys, sum[k][j]/float64(cnt[k][j]))
			}
			if len(xs) == 0 {
				continue
			}
			ln, err := plotter.NewLine(xys(xs, ys))
			if err != nil {
				return f, err
			}
			ln.LineStyle.Color = seriesColor(mi)
			ln.LineStyle.Width = vg.Points(1.3)
			what := "correct"
			if !correct {
				what = "wrong"
				ln.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			name := fmt.Sprintf("%s (%d trials)", what, trials[k])
			if len(v.models) > 1 {
				name = m.Label + ", " + name
			}
			p.Add(ln)
			l.Add(name, ln)
			drawn++
		}
	}
	if drawn == 0 {
		f.Note = "No token position was reached by enough trials to draw."
		return f, nil
	}
	p.X.Min, p.Y.Min = 1, 0
	err := f.draw(single(p, l, vg.Points(760), vg.Points(280)))
	f.Caption = fmt.Sprintf("Mean per-token entropy (bits) at each position of the generated text, over scored trials answered correctly (solid) and wrongly (dashed), all variants together. "+
		"A line stops at the last position at least %d of its trials reach (all of them when it has fewer), so the tail does not rest on one or two long answers. From traces.jsonl.", minPositionTrials)
	return f, err
}

// ddcFigure: the DDC margin of the distinct prompts of each variant.
func (v *view) ddcFigure() (Figure, error) {
	f := Figure{ID: "fig-ddc", Title: "DDC margin per variant"}
	vals := map[string][]float64{}
	seen := map[[2]string]bool{}
	for i := range v.run.Trials {
		t := &v.run.Trials[i]
		if t.DDCTop == "" || math.IsNaN(t.DDCMargin) {
			continue
		}
		k := [2]string{t.Variant, t.Question}
		if seen[k] {
			continue
		}
		seen[k] = true
		vals[t.Variant] = append(vals[t.Variant], t.DDCMargin)
	}
	if len(vals) == 0 {
		f.Note = "The run has no DDC classification (run without --no-ddc to get one)."
		return f, nil
	}
	p := newPanel("", "variant", "DDC margin, cosine(top) − cosine(runner-up)")
	p.NominalX(v.variants...)
	var counts []string
	for vi, vn := range v.variants {
		if len(vals[vn]) == 0 {
			continue
		}
		if _, err := addBox(p, vals[vn], float64(vi), 0, vg.Points(30)); err != nil {
			return f, err
		}
		counts = append(counts, fmt.Sprintf("%s %d", vn, len(vals[vn])))
	}
	p.X.Min, p.X.Max = -0.5, float64(len(v.variants))-0.5
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, xs := range vals {
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	// Room above and below the outermost points, so no outlier is cut.
	pad := math.Max((hi-lo)*0.06, 0.005)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	err := f.draw(single(p, nil, widthFor(len(v.variants), 1, false), vg.Points(260)))
	f.Caption = "How the sentence embedder reads each prompt: the margin between the cosine similarity of the best Dewey Decimal class and the runner-up, " +
		"over the distinct prompts of each variant (the margin depends on the prompt only, not on the model; prompts per variant: " + strings.Join(counts, ", ") +
		"). A lower margin means the prompt reads less clearly as one subject. Boxes: quartiles; whiskers: 1.5 × IQR. From results.csv; the paired shifts and their intervals are in the narrative."
	return f, err
}

// difficultyFigure: accuracy by each difficulty axis the summary reports,
// per model and variant, with the summary's intervals.
func (v *view) difficultyFigure() (Figure, error) {
	s := v.sum
	f := Figure{ID: "fig-difficulty", Title: "Accuracy by difficulty"}
	cells := difficultyCells(s)
	var axes []string
	groups := map[string][]string{}
	for _, c := range cells {
		if !slices.Contains(difficultyAxes, c.Axis) {
			continue
		}
		if !slices.Contains(axes, c.Axis) {
			axes = append(axes, c.Axis)
		}
		if !slices.Contains(groups[c.Axis], c.Group) {
			groups[c.Axis] = append(groups[c.Axis], c.Group)
		}
	}
	axes = slices.DeleteFunc(axes, func(a string) bool { return len(groups[a]) < 2 })
	if len(axes) == 0 {
		f.Note = "Every template of the run has the same number of steps and the same difficulty level: there is no difficulty axis to plot."
		return f, nil
	}
	l := newLegend()
	var rows [][]*plot.Plot
	for mi, m := range v.models {
		var row []*plot.Plot
		for _, axis := range axes {
			title := "by " + axis
			if len(v.models) > 1 {
				title = m.Label + ", by " + axis
			}
			p := newPanel(title, axis, "accuracy, % correct")
			names := make([]string, len(groups[axis]))
			for i, g := range groups[axis] {
				names[i] = cmpOr(g, "(none)")
			}
			p.NominalX(names...)
			for vi, vn := range v.variants {
				var e errPoints
				for _, c := range cells {
					if c.Model != m.Label || c.Axis != axis || c.Variant != vn || c.Acc == nil {
						continue
					}
					x := float64(slices.Index(groups[axis], c.Group)) + offset(vi, len(v.variants))
					lo, hi := c.Acc.bounds()
					e.add(x, c.Acc.Value, lo, hi)
				}
				var lg *plot.Legend
				if mi == 0 && slices.Index(axes, axis) == 0 {
					lg = l
				}
				if err := addSeries(p, lg, vn, vi, &e); err != nil {
					return f, err
				}
			}
			p.X.Min, p.X.Max = -0.5, float64(len(groups[axis]))-0.5
			p.Y.Min, p.Y.Max = 0, 100
			p.Y.Tick.Marker = plot.ConstantTicks(percentTicks())
			row = append(row, p)
		}
		rows = append(rows, row)
	}
	maxGroups := 0
	for _, a := range axes {
		maxGroups = max(maxGroups, len(groups[a]))
	}
	w := math.Min(900, float64(len(axes))*(120+70*float64(maxGroups))+120)
	err := f.draw(chart{panels: rows, legend: l, w: vg.Points(math.Max(w, 420)), h: vg.Points(250 * float64(len(rows)))})
	f.Caption = fmt.Sprintf("The difficulty axis, apart from robustness: accuracy of the templates grouped by their number of solution steps and, for GSM-Symbolic templates, their difficulty level, per variant (colour). "+
		"Error bars: %s. Accuracy by relation type is in the narrative's tables.", intervalText(s, groupIntervals(cells)))
	return f, err
}

// difficultyAxes are the axes of the summary's difficulty groups that the
// difficulty plot shows: solution steps and the GSM-Symbolic level.
var difficultyAxes = []string{"steps", "level"}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// compareFigure: KL divergence of each quantization against the reference,
// next to its accuracy drops.
func (v *view) compareFigure() (Figure, error) {
	c := v.run.Compare
	f := Figure{ID: "fig-compare", Title: "Quantizations: KL divergence and accuracy drop"}
	var others []compare.ModelComparison
	var ref string
	for _, m := range c.Models {
		if m.Reference {
			ref = m.Label
		} else if m.Agreement != nil {
			others = append(others, m)
		}
	}
	if len(others) == 0 {
		f.Note = "compare.json holds no model besides the reference."
		return f, nil
	}
	l := newLegend()
	kl, err := klPanel(others, l)
	if err != nil {
		return f, err
	}
	all := c.Models
	dp, drops, err := v.comparisonDropPanel(all, l)
	if err != nil {
		return f, err
	}
	err = f.draw(chart{panels: [][]*plot.Plot{{kl, dp}}, legend: l, w: vg.Points(math.Min(900, 420+110*float64(len(all)))), h: vg.Points(280)})
	f.Caption = fmt.Sprintf("Left: KL divergence from the reference (%s) to each other file, in nats per token over the reference's own generated tokens "+
		"(teacher forcing, full vocabulary): mean and 99th percentile, from compare.json. Right: each file's drop against its reference per variant (%s), "+
		"with %s. A file whose KL is high while its drops match the reference's changed its token probabilities without changing its accuracy on these items.",
		ref, dropText(v.sum), intervalText(v.sum, drops))
	return f, err
}

// comparisonName is how the comparison figure names a file: its
// quantization type, or its label when unknown.
func comparisonName(m compare.ModelComparison) string {
	if m.Quantization != "" {
		return m.Quantization
	}
	return m.Label
}

// klPanel is the comparison figure's left panel: each file's mean and 99th
// percentile KL divergence from the reference, as bars.
func klPanel(others []compare.ModelComparison, l *plot.Legend) (*plot.Plot, error) {
	kl := newPanel("KL(reference ‖ file), nats per token", "file", "nats")
	names := make([]string, len(others))
	means, p99s := make(plotter.Values, len(others)), make(plotter.Values, len(others))
	for i, m := range others {
		names[i] = comparisonName(m)
		means[i], p99s[i] = m.Agreement.KL.Mean, m.Agreement.KL.P99
	}
	kl.NominalX(names...)
	bw := vg.Points(math.Min(24, 140/float64(len(others))))
	for i, vals := range []plotter.Values{means, p99s} {
		bc, err := plotter.NewBarChart(vals, bw)
		if err != nil {
			return nil, err
		}
		bc.Color = []color.Color{seriesColor(0), seriesColor(5)}[i]
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-0.5) * bw
		kl.Add(bc)
		l.Add([]string{"KL mean", "KL 99th percentile"}[i], bc)
	}
	kl.X.Min, kl.X.Max = -0.5, float64(len(others))-0.5
	top := 0.0
	for i := range others {
		top = math.Max(top, math.Max(means[i], p99s[i]))
	}
	kl.Y.Min, kl.Y.Max = 0, math.Max(top*1.08, 1e-6)
	return kl, nil
}

// comparisonDropPanel is the comparison figure's right panel: each file's
// drop against its reference per variant, with the summary's intervals where it has
// them (returned as drops) and compare.json's point estimates otherwise.
func (v *view) comparisonDropPanel(all []compare.ModelComparison, l *plot.Legend) (*plot.Plot, []interval, error) {
	dp := newPanel("drop against the reference, pp", "file", "drop, pp")
	fn := make([]string, len(all))
	for i, m := range all {
		fn[i] = comparisonName(m)
	}
	dp.NominalX(fn...)
	vars := slices.DeleteFunc(slices.Clone(v.run.Compare.Variants), func(s string) bool { return s == summary.BaseVariant })
	zero, err := hline(0, -0.5, float64(len(all))-0.5, refColor, false)
	if err != nil {
		return nil, nil, err
	}
	dp.Add(zero)
	var drops []interval
	for vi, vn := range vars {
		var e errPoints
		for mi, m := range all {
			x := float64(mi) + offset(vi, len(vars))
			if d := summaryDropByPath(v.sum, m.Path, vn); d != nil {
				lo, hi := d.bounds()
				e.add(x, d.Value, lo, hi)
				drops = append(drops, *d)
				continue
			}
			for _, a := range m.Accuracy {
				if a.Variant == vn && a.DropPP != nil {
					e.add(x, *a.DropPP, *a.DropPP, *a.DropPP)
				}
			}
		}
		if err := addSeries(dp, l, "drop on "+vn, vi+1, &e); err != nil {
			return nil, nil, err
		}
	}
	dp.X.Min, dp.X.Max = -0.5, float64(len(all))-0.5
	return dp, drops, nil
}

// stackBars adds the series counts[k] (one value per x position) to p as
// bars stacked in order k = 0, 1, …, coloured by col(k), adds each series
// to the legend l under names[k] when legend is set, and returns the
// height of the tallest stack (0 without series).
func stackBars(p *plot.Plot, counts []plotter.Values, col func(int) color.Color, l *plot.Legend, names []string, legend bool) (float64, error) {
	var prev *plotter.BarChart
	n := 0
	for k := range counts {
		n = len(counts[k])
		bc, err := plotter.NewBarChart(counts[k], vg.Points(math.Min(40, 240/float64(max(1, n)))))
		if err != nil {
			return 0, err
		}
		bc.Color = col(k)
		bc.LineStyle.Color = color.White
		bc.LineStyle.Width = vg.Points(0.5)
		if prev != nil {
			bc.StackOn(prev)
		}
		prev = bc
		p.Add(bc)
		if legend {
			l.Add(names[k], bc)
		}
	}
	top := 0.0
	for i := 0; prev != nil && i < n; i++ {
		top = math.Max(top, prev.BarHeight(i))
	}
	return top, nil
}
