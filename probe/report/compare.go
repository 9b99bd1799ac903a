package report

import (
	"fmt"
	"strconv"
)

// compareTable is compare.json as a table: per file its agreement with the
// reference and its accuracy per variant, as compare.json reports them.
type compareTable struct {
	Rule     string
	Variants []string
	Rows     []compareRow
}

type compareRow struct {
	Label, Quantization, BitsPerWeight string
	Reference                          bool
	Tokens                             int
	KLMean, KLP99, KLMax, SameTop      string
	Accuracy                           []string // per variant: "k/n (x%)" and the drop
}

// newCompareTable returns the comparison table of r, or nil without
// compare.json.
func newCompareTable(r *Run) *compareTable {
	c := r.Compare
	if c == nil {
		return nil
	}
	t := &compareTable{Rule: c.ReferenceRule, Variants: c.Variants}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	for _, m := range c.Models {
		row := compareRow{Label: m.Label, Quantization: m.Quantization, Reference: m.Reference, KLMean: "—", KLP99: "—", KLMax: "—", SameTop: "—"}
		if m.BitsPerWeight > 0 {
			row.BitsPerWeight = strconv.FormatFloat(m.BitsPerWeight, 'f', 2, 64)
		}
		if a := m.Agreement; a != nil {
			row.Tokens = a.Tokens
			row.KLMean = g(a.KL.Mean) + " ± " + g(a.KL.SE)
			row.KLP99, row.KLMax = g(a.KL.P99), g(a.KL.Max)
			row.SameTop = strconv.FormatFloat(a.SameTopPct, 'f', 1, 64)
		}
		for _, v := range c.Variants {
			cell := "—"
			for _, a := range m.Accuracy {
				if a.Variant != v {
					continue
				}
				cell = countText(float64(a.K), a.N)
				if a.Pct != nil {
					cell += fmt.Sprintf(" (%.1f%%)", *a.Pct)
				}
				if a.DropPP != nil {
					cell += fmt.Sprintf("; drop %.1f pp", *a.DropPP)
				}
			}
			row.Accuracy = append(row.Accuracy, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
