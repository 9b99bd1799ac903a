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
	// N and the binomial sd, by hand. Symbolic: S1 1 1 0, S2 1 0 0, S3 0 0
	// 1 over n = 3 datasets, p = 2/3, 1/3, 1/3, s² = p(1 − p)·3/2 = 1/3
	// each, Σ = 1, N = 3: 100·√1/3 = 33.333 (the observed 19.245 is below:
	// the sample covariances across datasets are 1/6 (S1, S2), −1/3 (S1,
	// S3), −1/6 (S2, S3), sum −1/3, and 19.245² − 33.333² = 100²·(2/9)·(−1/3)
	// = −740.74). P1: Q1 0 0 1 (s² = 1/3), Q2 0 0 0 (0), N = 2: 100·√(1/3)/2
	// = 28.868, the observed sd (Q2 never varies). NoOp: S1 1 0 0, S2 0 0 0,
	// S3 0 0 1: 100·√(2/3)/3 = 27.217.
	for _, c := range []struct {
		r      summary.PaperRow
		n      int
		bin    float64
		covSum float64
	}{{sym, 3, 100.0 / 3, -1.0 / 3}, {p1, 2, 100 * math.Sqrt(1.0/3) / 2, 0}, {noop, 3, 100 * math.Sqrt(2.0/3) / 3, math.NaN()}} {
		if c.r.TemplatesPerDataset != c.n || c.r.TemplatesPerDatasetMax != c.n || c.r.BinomialSDPct == nil || !closeTo(*c.r.BinomialSDPct, c.bin) {
			t.Errorf("%s: N %d–%d, binomial sd %v, want N = %d, %.3f", c.r.Name, c.r.TemplatesPerDataset, c.r.TemplatesPerDatasetMax, c.r.BinomialSDPct, c.n, c.bin)
			continue
		}
		if !math.IsNaN(c.covSum) {
			n2 := float64(c.n * c.n)
			if d := *c.r.SDPct**c.r.SDPct - *c.r.BinomialSDPct**c.r.BinomialSDPct; !closeTo(d, 1e4*2/n2*c.covSum) {
				t.Errorf("%s: sd² − binomial sd² = %v, want %v", c.r.Name, d, 1e4*2/n2*c.covSum)
			}
		}
	}
}

// TestPaperBinomialSDUnequalDatasets: datasets of different sizes. A
// (original OA) right in dataset 0 and wrong in 1, B (OB) wrong in dataset
// 0 only: datasets 50% and 0%, mean 25, sd √(2·25²) = 35.355; N from 1 to
// 2; s²_A = ½·½·2/1 = ½, s²_B = 0 (one trial), so the binomial variance is
// ½/2² = 0.125 in dataset 0 and ½/1² = 0.5 in dataset 1, mean 0.3125:
// 100·√0.3125 = 55.902. One dataset: no sd, no binomial sd.
func TestPaperBinomialSDUnequalDatasets(t *testing.T) {
	mk := func(tmpl, orig string, inst int, ok bool) results.Trial {
		x := tr(tmpl, "symbolic", inst, ok)
		x.IDOrig, x.Level = orig, "symbolic"
		return x
	}
	ts := []results.Trial{mk("A", "OA", 0, true), mk("A", "OA", 1, false), mk("B", "OB", 0, false)}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Paper[0].Rows[0]
	if r.TemplatesPerDataset != 1 || r.TemplatesPerDatasetMax != 2 || !closeTo(r.MeanPct, 25) || !closeTo(*r.SDPct, math.Sqrt(2*25*25)) ||
		r.BinomialSDPct == nil || !closeTo(*r.BinomialSDPct, 100*math.Sqrt(0.3125)) {
		t.Errorf("N %d–%d, mean %v, sd %v, binomial sd %v; want 1–2, 25, 35.355, 55.902", r.TemplatesPerDataset, r.TemplatesPerDatasetMax, r.MeanPct, *r.SDPct, r.BinomialSDPct)
	}
	s, err = summary.Summarize(ts[:1], summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Paper[0].Rows[0]; r.SDPct != nil || r.BinomialSDPct != nil || r.TemplatesPerDataset != 1 {
		t.Errorf("one dataset: sd %v, binomial sd %v, N %d", r.SDPct, r.BinomialSDPct, r.TemplatesPerDataset)
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
