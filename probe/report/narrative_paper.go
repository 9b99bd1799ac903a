package report

import (
	"fmt"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// writePaper writes the GSM-Symbolic paper's view of each model (summary
// PaperView): the table in the shape of the paper's Table 1 (Mirzadeh et
// al., arXiv:2410.05229) with N, the templates per dataset, beside each sd,
// then each row with our clustered intervals beside it, the sd that
// independent templates would give, what the sd is and is not, and where
// the originals' accuracy falls among the datasets (the paper's first
// finding, descriptive). Nothing when ps is empty.
func writePaper(b *strings.Builder, ps []summary.PaperView, conf string) {
	if len(ps) == 0 {
		return
	}
	b.WriteString("\n## The paper's view (GSM-Symbolic, Table 1)\n\n")
	b.WriteString("The same trials as above, read as the paper reads them: a *dataset* is the j-th instance of every template (instance index j), so a run with `--instances 50` has 50 datasets; each column is the mean ± sd of the datasets' accuracies, in percent, with N, the templates in a dataset. GSM8K is the base variant at level symbolic (for GSM-Symbolic files the published original questions), Symbolic, P1 and P2 the symbolic variant at each level, NoOp the noop-seeming variant (our GSM-NoOp clauses). The sd depends on N: the paper's datasets held 100 templates, and from fewer the same model gives a larger sd, so compare an sd with the paper's only at the same N.\n\n")
	cols := paperColumns(ps)
	b.WriteString("| model | " + strings.Join(cols, " | ") + " |\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, v := range ps {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = paperCell(v, c)
		}
		fmt.Fprintf(b, "| %s | %s |\n", v.Model, strings.Join(cells, " | "))
	}
	for _, v := range ps {
		writePaperModel(b, v, conf)
	}
}

// paperColumns are the table's columns: "GSM8K (N)" when some model has
// originals (N the largest number of them), then the rows present in any
// model, in the paper's order.
func paperColumns(ps []summary.PaperView) []string {
	var cols []string
	n := 0
	for _, v := range ps {
		if v.Originals != nil {
			n = max(n, v.Originals.Templates)
		}
	}
	if n > 0 {
		cols = append(cols, fmt.Sprintf("%s (%d)", summary.PaperOriginals, n))
	}
	for _, name := range []string{summary.PaperSymbolic, summary.PaperP1, summary.PaperP2, summary.PaperNoOp} {
		for _, v := range ps {
			if paperRowOf(v, name) != nil {
				cols = append(cols, name)
				break
			}
		}
	}
	return cols
}

// paperRowOf returns the row of v named name, nil when it has none.
func paperRowOf(v summary.PaperView, name string) *summary.PaperRow {
	for i := range v.Rows {
		if v.Rows[i].Name == name {
			return &v.Rows[i]
		}
	}
	return nil
}

// paperCell is one cell of the paper-shaped table: the originals'
// accuracy, or a row's mean ± sd over its datasets with N, its templates
// per dataset.
func paperCell(v summary.PaperView, col string) string {
	if strings.HasPrefix(col, summary.PaperOriginals+" (") {
		if v.Originals == nil {
			return "—"
		}
		return fnum(v.Originals.AccuracyPct.Value, 1)
	}
	r := paperRowOf(v, col)
	if r == nil {
		return "—"
	}
	return meanSD(*r) + " (N = " + templatesPerDataset(*r) + ")"
}

// meanSD is a row's mean ± sd over its datasets, in percent.
func meanSD(r summary.PaperRow) string {
	if r.SDPct == nil {
		return fnum(r.MeanPct, 1) + " (1 dataset)"
	}
	return fnum(r.MeanPct, 1) + " ± " + fnum(*r.SDPct, 1)
}

// templatesPerDataset is a row's N: one number when every dataset holds
// the same number of templates, else the range.
func templatesPerDataset(r summary.PaperRow) string {
	if r.TemplatesPerDataset == r.TemplatesPerDatasetMax {
		return fmt.Sprint(r.TemplatesPerDataset)
	}
	return fmt.Sprintf("%d–%d", r.TemplatesPerDataset, r.TemplatesPerDatasetMax)
}

// writePaperModel writes one model's rows with their intervals and the
// sentences on the sd and on the originals' percentile.
func writePaperModel(b *strings.Builder, v summary.PaperView, conf string) {
	fmt.Fprintf(b, "\n### %s: the paper's numbers beside ours\n\n", v.Model)
	fmt.Fprintf(b, "| | datasets | templates per dataset (N) | mean ± sd over datasets | sd if templates were independent | range | accuracy, %s interval | drop vs GSM8K, pp | NoOp vs Symbolic (paired), pp | GSM8K's percentile among the datasets (descriptive) |\n|---|---|---|---|---|---|---|---|---|---|\n", conf)
	if o := v.Originals; o != nil {
		fmt.Fprintf(b, "| %s (%d) | 1 | %d | %s | — | — | %s %s | — | — | — |\n", summary.PaperOriginals, o.Templates, o.Templates,
			fnum(o.AccuracyPct.Value, 1), fnum(o.AccuracyPct.Value, 1), estCI(o.AccuracyPct, 1))
	}
	for _, r := range v.Rows {
		drop, vsSym, pct, bin := "—", "—", "—", "—"
		if r.BinomialSDPct != nil {
			bin = fnum(*r.BinomialSDPct, 1)
		}
		if r.DropPP != nil {
			drop = signed(r.DropPP.Value, 1) + " " + estCI(r.DropPP, 1)
		}
		if r.DropVsSymbolicPP != nil {
			vsSym = fmt.Sprintf("%s %s (%d pairs)", signed(r.DropVsSymbolicPP.Value, 1), estCI(r.DropVsSymbolicPP, 1), r.PairsVsSymbolic)
		}
		if r.OriginalsPercentile != nil {
			pct = ordinal(*r.OriginalsPercentile)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s–%s | %s %s | %s | %s | %s |\n", r.Name, len(r.Datasets), templatesPerDataset(r),
			meanSD(r), bin, fnum(r.MinPct, 1), fnum(r.MaxPct, 1), fnum(r.AccuracyPct.Value, 1), estCI(r.AccuracyPct, 1), drop, vsSym, pct)
	}
	fmt.Fprintf(b, "\nThe ± is the sample standard deviation (divisor n − 1) of the datasets' accuracies: how far the accuracy of one dataset of N templates moves when its instances are drawn again, the spread the paper reports. It is not a confidence interval of the mean, and it does not shrink with more datasets; the mean's uncertainty is the %s interval beside it (cluster-t over templates, CR1 standard error, t on G − 1 degrees of freedom), which counts every dataset's item of one template as one cluster. It does shrink with more templates per dataset. Were each template's outcome an independent draw with its own accuracy p_g across the datasets, the sd would be 100·√(Σ p_g(1 − p_g))/N, the standard deviation of a mean of N independent Bernoulli outcomes (with each p_g(1 − p_g) estimated without bias from the datasets). That is about 1/√N of a template's own spread, the column \"sd if templates were independent\". An observed sd near it is what N independent templates give; one well above it means that templates rise and fall together from one dataset to the next. The drops vs GSM8K are paired on the original problem (each trial minus its own original's result, clustered by original); NoOp vs Symbolic pairs the clause-bearing instance with the same drawn instance without it, clustered by template.\n", conf)
	writePaperFinding(b, v)
}

// writePaperFinding writes where the originals' accuracy falls among the
// Symbolic datasets (the paper's first finding), labelled descriptive with
// the paired drop named for inference, or nothing when it cannot be said.
func writePaperFinding(b *strings.Builder, v summary.PaperView) {
	r := paperRowOf(v, summary.PaperSymbolic)
	if r == nil || r.OriginalsPercentile == nil {
		return
	}
	o := v.Originals.AccuracyPct.Value
	below := 0
	for _, d := range r.Datasets {
		if d.AccuracyPct < o-1e-9 {
			below++
		}
	}
	side := "at the middle of"
	switch p := *r.OriginalsPercentile; {
	case p > 50:
		side = "on the right (higher) side of"
	case p < 50:
		side = "on the left (lower) side of"
	}
	fmt.Fprintf(b, "\nOn the originals this model scored %s%%; among its %d Symbolic datasets (%s%% to %s%%), %d scored below that, so the original accuracy sits at the %s percentile, %s the distribution (the paper's first finding was that for most models it sits on the right side).",
		fnum(o, 1), len(r.Datasets), fnum(r.MinPct, 1), fnum(r.MaxPct, 1), below, ordinal(*r.OriginalsPercentile), side)
	if len(r.Datasets) < 10 {
		fmt.Fprintf(b, " With %d datasets the percentile moves in steps of %s points: read it as a rough position, not a measurement.", len(r.Datasets), fnum(100/float64(len(r.Datasets)), 0))
	}
	fmt.Fprintf(b, " The percentile is descriptive: it places one number among these datasets, whose spread depends on N (%s templates per dataset here), and tests nothing. Whether the drawn problems are answered worse than the originals is the paired drop vs GSM8K", templatesPerDataset(*r))
	if r.DropPP != nil {
		fmt.Fprintf(b, " (Symbolic: %s pp %s, each trial paired with its own original, clustered by original problem)", signed(r.DropPP.Value, 1), estCI(r.DropPP, 1))
	}
	b.WriteString(", the number to read for inference.")
	b.WriteString(" The figure \"Accuracy across datasets\" in report.html shows the distribution.\n")
}

// ordinal writes a percentile rounded to an integer with its English
// ordinal suffix: 1st, 2nd, 3rd, 11th, 83rd, 100th.
func ordinal(x float64) string {
	n := int(x + 0.5)
	suf := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suf = "st"
		case 2:
			suf = "nd"
		case 3:
			suf = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suf)
}
