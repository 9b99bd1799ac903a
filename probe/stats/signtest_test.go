package stats

import (
	"math"
	"testing"
)

// TestSignTestPower: against a brute-force Python computation (scipy:
// every number N of discordant clusters and every count K of positive
// ones, binomtest's exact two-sided p-value, rejection with K > N/2 and
// p ≤ α), from v = Between + Within and the drop; and the drop at which it
// reaches 80% (bisection on the same), 0.36646 at 20 clusters, v = 0.2.
func TestSignTestPower(t *testing.T) {
	for _, c := range []struct {
		g         int
		v, d, a   float64
		want      float64
		between30 bool
	}{
		{20, 0.2, 0.1, 0.05, 0.03361815786003911, false},
		{10, 0.3, 0.2, 0.05, 0.019775073146488242, true},
		{68, 0.25, 0.1, 0.025, 0.19466948022944708, false},
		{6, 0.3, 0.3, 0.05, 0.0016862212981406236, true},
	} {
		comp := Components{Between: c.v}
		if c.between30 {
			comp = Components{Between: 0.3 * c.v, Within: 0.7 * c.v}
		}
		if p := SignTestPower(c.g, comp, c.d, c.a, false); !near(p, c.want, 1e-9) {
			t.Errorf("SignTestPower(%d, v %v, %v, %v) = %v, want %v", c.g, c.v, c.d, c.a, p, c.want)
		}
		if p := SignTestPower(c.g, comp, -c.d, c.a, false); !near(p, c.want, 1e-9) {
			t.Errorf("a negative drop %v: %v, want %v", -c.d, p, c.want)
		}
	}
	if d := SignTestMDE(20, Components{Between: 0.2}, 0.05, 0.8, false); !near(d, 0.36645936965942383, 2e-6) {
		t.Errorf("SignTestMDE = %v, want 0.36646", d)
	}
	if d := SignTestMDE(5, Components{Between: 0.2}, 0.05, 0.8, false); !math.IsInf(d, 1) {
		t.Errorf("5 clusters (the sign test cannot reach 0.05): MDE %v, want +Inf", d)
	}
	c := Components{Between: 0.2}
	if PairedDropMDE(20, 1, c, 0.05, 0.8, never) != SignTestMDE(20, c, 0.05, 0.8, false) || !near(PairedDropMDE(20, 2, c, 0.05, 0.8, never), MDE(20, 2, c, 0.05, 0.8)+1.0/40, 1e-12) ||
		PairedDropMDE(5, 1, c, 0.05, 0.8, never) != MDE(5, 1, c, 0.05, 0.8) || PairedDropPower(20, 5, c, 0.1, 0.05, never) != Power(20, 5, c, 0.1-1.0/100, 0.05) {
		t.Error("PairedDropMDE/PairedDropPower do not dispatch on one pair per cluster")
	}
	if k := signCritical(20, 0.05); k != 15 {
		t.Errorf("signCritical(20, 0.05) = %d, want 15 (2·P(K ≥ 15) = 0.0414, 2·P(K ≥ 14) = 0.1153)", k)
	}
}

// never is a randomFrom above any number of clusters: the non-randomized
// sign-flip test.
const never = math.MaxInt
