package stats

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestPairedDropInformed checks PairedDropMDEInformed and
// PairedDropPowerInformed against the closed form computed here with
// gonum's distuv.StudentsT for g = 20 templates of m = 5 pairs, σ²_b =
// 0.01, σ²_w = 0.2 (of the informative templates' pairs), α = 0.05, 80%
// power: on the G' informative templates (all 20 when the count is 0 or
// 20) the MDE is (G'/g)·((t_{.975,G'−1} + t_{.8,G'−1})·√(0.05/G') +
// 1/(5G')), the lattice's continuity correction included (0.1581 at G' =
// 20, 0.1056 at G' = 6); the power at a drop of 0.1 with G' = 6 is the
// central t's at 0.1·20/6 − 1/30 = 0.3; below SignFlipMinClusters the
// power is 0 and the MDE +Inf; with one pair per template the exact sign
// test's MDE on the informative templates, scaled by G'/g.
func TestPairedDropInformed(t *testing.T) {
	c := Components{Between: 0.01, Within: 0.2}
	closed := func(gi int) float64 {
		st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(gi - 1)}
		return float64(gi) / 20 * ((st.Quantile(0.975)+st.Quantile(0.8))*math.Sqrt(0.05/float64(gi)) + 1/(5*float64(gi)))
	}
	for _, tc := range []struct{ informative, frame int }{{6, 6}, {20, 20}, {0, 20}} {
		if got, want := PairedDropMDEInformed(20, tc.informative, 5, c, 0.05, 0.8, never), closed(tc.frame); math.Abs(got-want) > 1e-9 {
			t.Errorf("informative %d: MDE %.9f, want %.9f", tc.informative, got, want)
		}
	}
	for _, inf := range []int{1, 5} {
		if got := PairedDropMDEInformed(20, inf, 5, c, 0.05, 0.8, never); !math.IsInf(got, 1) {
			t.Errorf("%d informative (the sign-flip test cannot reject): MDE %v, want +Inf", inf, got)
		}
	}
	if got := PairedDropMDEInformed(20, 6, 5, c, 0.05, 0.8, never); math.Abs(got-0.10558) > 1e-4 {
		t.Errorf("MDE at 6 informative %.5f, want 0.10558", got)
	}
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 5}
	want := 1 - st.CDF(st.Quantile(0.975)-0.3/math.Sqrt(0.05/6))
	if got := PairedDropPowerInformed(20, 6, 5, c, 0.1, 0.05, never); math.Abs(got-want) > 1e-9 {
		t.Errorf("power %.9f, want %.9f", got, want)
	}
	if got := PairedDropPowerInformed(20, 5, 5, c, 0.1, 0.05, never); got != 0 {
		t.Errorf("5 informative templates (the sign-flip test cannot reject): power %v, want 0", got)
	}
	if got, want := PairedDropMDEInformed(20, 20, 5, c, 0.05, 0.8, never), PairedDropMDE(20, 5, c, 0.05, 0.8, never); got != want {
		t.Errorf("all informative: %v, PairedDropMDE %v", got, want)
	}
	if got, want := PairedDropMDEInformed(68, 34, 1, c, 0.05, 0.8, never), 0.5*PairedDropMDE(34, 1, c, 0.05, 0.8, never); math.Abs(got-want) > 1e-12 {
		t.Errorf("one pair per template: %v, want half the sign test's %v on the 34 informative", got, want)
	}
	if got := InformativeClusters([]float64{0, 0.2, -1, 1e-15, 0, 0.5}); got != 3 {
		t.Errorf("InformativeClusters = %d, want 3", got)
	}
}
