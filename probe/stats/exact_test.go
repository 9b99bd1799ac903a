package stats

import (
	"math"
	"testing"
)

// TestClopperPearson: the limits of published cases (k = 0: hi =
// 1 − (α/2)^(1/n); k = n: lo = (α/2)^(1/n); 1 of 6 at 95%: [0.0042,
// 0.6412], Clopper & Pearson's tables), each side's miss at most α/2 over
// the binomial for every p on a grid (n = 20), and refusals.
func TestClopperPearson(t *testing.T) {
	lo, hi, ok := ClopperPearson(0, 40, 0.95)
	if !ok || lo != 0 || math.Abs(hi-(1-math.Pow(0.025, 1.0/40))) > 1e-9 {
		t.Errorf("0 of 40: [%v, %v]", lo, hi)
	}
	lo, hi, ok = ClopperPearson(40, 40, 0.95)
	if !ok || hi != 1 || math.Abs(lo-math.Pow(0.025, 1.0/40)) > 1e-9 {
		t.Errorf("40 of 40: [%v, %v]", lo, hi)
	}
	lo, hi, _ = ClopperPearson(1, 6, 0.95)
	if math.Abs(lo-0.0042) > 5e-5 || math.Abs(hi-0.6412) > 5e-5 {
		t.Errorf("1 of 6: [%.4f, %.4f], want [0.0042, 0.6412]", lo, hi)
	}
	const n = 20
	for p := 0.01; p < 1; p += 0.01 {
		var missLo, missHi float64
		for k := 0; k <= n; k++ {
			pk := math.Exp(lgamma(n+1)-lgamma(float64(k)+1)-lgamma(float64(n-k)+1)) * math.Pow(p, float64(k)) * math.Pow(1-p, float64(n-k))
			l, h, _ := ClopperPearson(float64(k), n, 0.95)
			if l > p {
				missLo += pk
			}
			if h < p {
				missHi += pk
			}
		}
		if missLo > 0.025+1e-9 || missHi > 0.025+1e-9 {
			t.Errorf("p = %.2f: misses %.4f below, %.4f above", p, missLo, missHi)
		}
	}
	for _, c := range [][3]float64{{1, 0, 0.95}, {-1, 5, 0.95}, {6, 5, 0.95}, {1, 5, 1}, {1, math.Inf(1), 0.95}} {
		if _, _, ok := ClopperPearson(c[0], c[1], c[2]); ok {
			t.Errorf("ClopperPearson%v accepted", c)
		}
	}
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }
