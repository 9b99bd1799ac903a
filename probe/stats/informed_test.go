package stats

import (
	"math"
	"testing"
)

// TestPairedDropInformed checks PairedDropMDEInformed and
// PairedDropPowerInformed against values computed independently with
// scipy.stats.t (ppf, cdf) for g = 20 templates of m = 5 pairs, σ²_b =
// 0.01, σ²_w = 0.2, α = 0.05, 80% power: the t quantiles on informative − 1
// degrees of freedom (at least 1), on g − 1 when every template is
// informative or the count is unknown (0), and the exact sign test's MDE
// unchanged at one pair per template.
func TestPairedDropInformed(t *testing.T) {
	c := Components{Between: 0.01, Within: 0.2}
	for _, tc := range []struct {
		informative int
		want        float64
	}{
		{6, 0.1745062807938571},
		{1, 0.7041293328322934},
		{20, 0.14769873023386187},
		{0, 0.14769873023386187},
	} {
		if got := PairedDropMDEInformed(20, tc.informative, 5, c, 0.05, 0.8); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("informative %d: MDE %.9f, want %.9f", tc.informative, got, tc.want)
		}
	}
	if got, want := PairedDropPowerInformed(20, 6, 5, c, 0.1, 0.05), 0.2964839415672468; math.Abs(got-want) > 1e-6 {
		t.Errorf("power %.9f, want %.9f", got, want)
	}
	if got, want := PairedDropMDEInformed(20, 20, 5, c, 0.05, 0.8), PairedDropMDE(20, 5, c, 0.05, 0.8); got != want {
		t.Errorf("all informative: %v, PairedDropMDE %v", got, want)
	}
	if got, want := PairedDropMDEInformed(68, 10, 1, c, 0.05, 0.8), PairedDropMDE(68, 1, c, 0.05, 0.8); got != want {
		t.Errorf("one pair per template: %v, want the sign test's %v", got, want)
	}
	if got := InformativeClusters([]float64{0, 0.2, -1, 1e-15, 0, 0.5}); got != 3 {
		t.Errorf("InformativeClusters = %d, want 3", got)
	}
}
