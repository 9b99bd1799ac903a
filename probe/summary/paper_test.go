package summary_test

import (
	"math"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// paperCase is a small GSM-Symbolic run whose paper view is computed by
// hand in TestPaperViewHandCase (1 = right):
//
//	original  template  level     base (2 copies)  symbolic 0 1 2  noop-seeming 0 1 2
//	O1        S1        symbolic  1 1              1 1 0           1 0 0
//	O2        S2        symbolic  1 1              1 0 0           0 0 0
//	O3        S3        symbolic  0 0              0 0 1           0 0 1
//	O1        Q1        p1        0 (ignored)      0 0 1
//	O2        Q2        p1                         0 0 0
func paperCase() []results.Trial {
	var ts []results.Trial
	add := func(tmpl, orig, level, variant string, rs ...int) {
		for i, r := range rs {
			t := tr(tmpl, variant, i, r == 1)
			t.IDOrig, t.Level = orig, level
			if variant == "noop-seeming" {
				t.Reference = "symbolic"
			}
			ts = append(ts, t)
		}
	}
	add("S1", "O1", "symbolic", "base", 1, 1)
	add("S2", "O2", "symbolic", "base", 1, 1)
	add("S3", "O3", "symbolic", "base", 0, 0)
	add("S1", "O1", "symbolic", "symbolic", 1, 1, 0)
	add("S2", "O2", "symbolic", "symbolic", 1, 0, 0)
	add("S3", "O3", "symbolic", "symbolic", 0, 0, 1)
	add("S1", "O1", "symbolic", "noop-seeming", 1, 0, 0)
	add("S2", "O2", "symbolic", "noop-seeming", 0, 0, 0)
	add("S3", "O3", "symbolic", "noop-seeming", 0, 0, 1)
	add("Q1", "O1", "p1", "base", 0)
	add("Q1", "O1", "p1", "symbolic", 0, 0, 1)
	add("Q2", "O2", "p1", "symbolic", 0, 0, 0)
	return ts
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 1e-3 }

// TestPaperViewHandCase checks the paper's view against hand-computed
// values: dataset accuracies, mean ± sd (divisor n − 1), the originals'
// percentile, the cluster-t intervals (CR1, t(0.975, 2) = 4.302653) and
// the drops paired on the original and on the drawn instance.
func TestPaperViewHandCase(t *testing.T) {
	s, err := summary.Summarize(paperCase(), summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Paper) != 1 {
		t.Fatalf("paper views: %d", len(s.Paper))
	}
	v := s.Paper[0]
	if v.Originals == nil || v.Originals.Templates != 3 || !closeTo(v.Originals.AccuracyPct.Value, 200.0/3) {
		t.Fatalf("originals: %+v", v.Originals)
	}
	if len(v.Rows) != 3 || v.Rows[0].Name != summary.PaperSymbolic || v.Rows[1].Name != summary.PaperP1 || v.Rows[2].Name != summary.PaperNoOp {
		t.Fatalf("rows: %+v", v.Rows)
	}
	sym, p1, noop := v.Rows[0], v.Rows[1], v.Rows[2]
	// Symbolic: datasets 2/3, 1/3, 1/3.
	want := []float64{200.0 / 3, 100.0 / 3, 100.0 / 3}
	for i, d := range sym.Datasets {
		if d.Instance != i || d.Items != 3 || !closeTo(d.AccuracyPct, want[i]) {
			t.Errorf("symbolic dataset %d: %+v", i, d)
		}
	}
	if !closeTo(sym.MeanPct, 400.0/9) || sym.SDPct == nil || !closeTo(*sym.SDPct, 19.245009) {
		t.Errorf("symbolic mean %v sd %v, want 44.444 ± 19.245", sym.MeanPct, sym.SDPct)
	}
	// Originals 66.7 %: two datasets below, one equal: (2 + 0.5)/3.
	if sym.OriginalsPercentile == nil || !closeTo(*sym.OriginalsPercentile, 250.0/3) {
		t.Errorf("percentile %v, want 83.333", sym.OriginalsPercentile)
	}
	// Template shares 2/3, 1/3, 1/3: SE = 11.111 pp, half-width 47.807.
	a := sym.AccuracyPct
	if a.SE == nil || !closeTo(*a.SE, 100.0/9) || a.CI.Lo != 0 || !closeTo(a.CI.Hi, 400.0/9+4.302653*100/9) || a.CI.Method != summary.MethodClusterT {
		t.Errorf("symbolic accuracy %+v %+v", a, a.CI)
	}
	// Drop vs originals: per-trial differences 0,0,1 | 0,1,1 | 0,0,−1 → 2/9.
	if sym.DropPP == nil || !closeTo(sym.DropPP.Value, 200.0/9) {
		t.Errorf("symbolic drop %+v", sym.DropPP)
	}
	// P1: datasets 0, 0, 50; paired on O1 and O2 (both right as originals): 5/6.
	if !closeTo(p1.MeanPct, 50.0/3) || !closeTo(*p1.SDPct, math.Sqrt(2500.0/3)) || p1.Templates != 2 {
		t.Errorf("p1 mean %v sd %v templates %d", p1.MeanPct, *p1.SDPct, p1.Templates)
	}
	if !closeTo(p1.DropPP.Value, 500.0/6) || !closeTo(*p1.OriginalsPercentile, 100) {
		t.Errorf("p1 drop %v percentile %v", p1.DropPP.Value, *p1.OriginalsPercentile)
	}
	// NoOp vs Symbolic on pairs: 0,1,0 | 1,0,0 | 0,0,0 → 2/9, SE 11.111 pp.
	d := noop.DropVsSymbolicPP
	if d == nil || noop.PairsVsSymbolic != 9 || !closeTo(d.Value, 200.0/9) || !closeTo(d.CI.Lo, 200.0/9-4.302653*100/9) || !closeTo(d.CI.Hi, 200.0/9+4.302653*100/9) {
		t.Errorf("noop vs symbolic %+v %+v", d, d.CI)
	}
	if !closeTo(noop.MeanPct, 200.0/9) || !closeTo(noop.DropPP.Value, 400.0/9) {
		t.Errorf("noop mean %v drop %v", noop.MeanPct, noop.DropPP.Value)
	}
}

// TestPaperViewOnlyForGSMSymbolic: trials of other templates (no IDOrig)
// get no paper view, so other runs' summaries are unchanged; a NoOp drawn
// at the original values (--reference original) has no pairs with Symbolic.
func TestPaperViewOnlyForGSMSymbolic(t *testing.T) {
	s, err := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Paper != nil {
		t.Fatalf("paper view on built-in style trials: %+v", s.Paper)
	}
	ts := paperCase()
	for i := range ts {
		ts[i].Reference = ""
	}
	s, err = summary.Summarize(ts, summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Paper[0].Rows[2]; n.DropVsSymbolicPP != nil || n.PairsVsSymbolic != 0 {
		t.Fatalf("noop paired without a drawn reference: %+v", n)
	}
}
