package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The plots are drawn by gonum.org/v1/plot onto its SVG canvas (vgsvg) and
// inlined into the page. Text is laid out with the metrics of Liberation
// Sans (bundled with gonum); the page's style sheet names Liberation Sans
// first and then Arial and Helvetica, which have the same metrics, so labels
// fit wherever the page is opened. Fonts are not embedded in the SVG.

// sans is the typeface of every plot text.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// seriesColors is the palette of models and variants: the colour-blind-safe
// set of Okabe & Ito (2008, "Color Universal Design"), without yellow, which
// is hard to see on white.
var seriesColors = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
}

// seriesColor returns the colour of series i, cycling through seriesColors.
func seriesColor(i int) color.Color { return seriesColors[i%len(seriesColors)] }

// glyphs give each series its own marker shape as well as its colour, so a
// plot stays readable in grey.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

func seriesGlyph(i int) draw.GlyphDrawer { return glyphs[i%len(glyphs)] }

var (
	gridColor  = color.Gray{0xdd}
	baseBand   = color.Gray{0xee}
	refColor   = color.Gray{0x55}
	lightColor = color.Gray{0x99}
)

// withAlpha returns c with alpha a (0–255), premultiplied as color.RGBA wants.
func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	f := float64(a) / 255
	return color.RGBA{uint8(float64(r>>8) * f), uint8(float64(g>>8) * f), uint8(float64(b>>8) * f), a}
}

// newPanel returns a plot with the report's fonts, a title and axis labels,
// and a light horizontal grid.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.X.Label.TextStyle.Font = font.From(sans, 10)
	p.Y.Label.TextStyle.Font = font.From(sans, 10)
	p.X.Tick.Label.Font = font.From(sans, 9)
	p.Y.Tick.Label.Font = font.From(sans, 9)
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	g.Horizontal.Color = gridColor
	p.Add(g)
	return p
}

// newLegend returns an empty legend in the report's font, to be drawn beside
// the panels of a chart.
func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, 9)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(2)
	return &l
}

// textStyle returns the style of text drawn inside a plot (cell counts,
// threshold names).
func textStyle(size vg.Length, c color.Color, xa draw.XAlignment, ya draw.YAlignment) text.Style {
	return text.Style{Color: c, Font: font.From(sans, size), XAlign: xa, YAlign: ya, Handler: plot.DefaultTextHandler}
}

// labels returns a plotter that writes texts[i] at (xs[i], ys[i]) in style.
func labels(xs, ys []float64, texts []string, style text.Style) (*plotter.Labels, error) {
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: texts})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i] = style
	}
	return l, nil
}

// chart is one figure's drawing: panels in rows and columns, aligned so that
// their data areas line up, and an optional legend to the right.
type chart struct {
	panels [][]*plot.Plot
	legend *plot.Legend
	w, h   vg.Length
}

// single returns a chart of one panel.
func single(p *plot.Plot, l *plot.Legend, w, h vg.Length) chart {
	return chart{panels: [][]*plot.Plot{{p}}, legend: l, w: w, h: h}
}

// svg draws the chart on a gonum SVG canvas and returns the <svg> element to
// inline (the XML declaration and generator comment are dropped; nothing
// else is changed). A panic inside the plotting library is returned as an
// error.
func (c chart) svg() (out template.HTML, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing a plot: %v", r)
		}
	}()
	cv := vgsvg.New(c.w, c.h)
	dc := draw.New(cv)
	area := dc
	if c.legend != nil {
		r := c.legend.Rectangle(dc)
		lw := r.Max.X - r.Min.X + vg.Points(8)
		area = draw.Crop(dc, 0, -lw, 0, 0)
		strip := draw.Crop(dc, c.w-lw+vg.Points(4), 0, 0, -vg.Points(24))
		c.legend.Draw(strip)
	}
	rows := len(c.panels)
	cols := 0
	for _, r := range c.panels {
		cols = max(cols, len(r))
	}
	if rows == 1 && cols == 1 {
		c.panels[0][0].Draw(area)
	} else {
		grid := make([][]*plot.Plot, rows)
		for i := range grid {
			grid[i] = make([]*plot.Plot, cols)
			copy(grid[i], c.panels[i])
		}
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12)}
		canvases := plot.Align(grid, tiles, area)
		for i := range grid {
			for j, p := range grid[i] {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("drawing a plot: the SVG canvas wrote no <svg> element")
	}
	return template.HTML(s[i:]), nil
}
