package stats

import (
	"math"
	"testing"
)

// TestPairedMOVERWilsonByHand checks PairedMOVERWilson against an
// independent Python computation (plain Python, written from the formulas
// of Kish, Korn & Graubard, Wilson and Zou & Donner, not from this code):
// six templates with paired (base, variant) outcomes A = (111, 101),
// B = (11, 00), C = (000, 010), D = (1111, 1101), E = (1, 1), F = (11, 01);
// n = 15 pairs, base 12/15 = 0.8, variant 8/15. With the CR1 variances
// V = G/(G−1)·Σ_c(Σ_i(y_ci − ȳ))²/n², the base's effective n is
// min(15, 6, 0.8·0.2/V_A) = 4.213483146067414 (6 is the cap: one distinct
// base prompt per template), the variant's is 15 (its design effect is
// below 1, truncated), the unit (phi) correlation of the 15 pairs
// 0.20044593143431824, the correlation r = (v*_A + v*_B − max(V_D,
// s²_D/n))/(2√(v*_A v*_B)) = 0.4787708312212122 (v*_X = p_X q_X / n_eff,X;
// here V_D, the clustered variance of the difference, is the larger), and
// with scipy's t.ppf(0.975, 5) = 2.5705818356363146 the interval is
// [−0.21226227921809088, 0.5214855400685146].
func TestPairedMOVERWilsonByHand(t *testing.T) {
	base := ratioOf([][]float64{{1, 1, 1}, {1, 1}, {0, 0, 0}, {1, 1, 1, 1}, {1}, {1, 1}})
	vari := ratioOf([][]float64{{1, 0, 1}, {0, 0}, {0, 1, 0}, {1, 1, 0, 1}, {1}, {0, 1}})
	m, ok := PairedMOVERWilson(base, vari, 6, 15, 0.20044593143431824, 0.95)
	if !ok {
		t.Fatal("not ok")
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"A", m.A, 0.8}, {"B", m.B, 8.0 / 15},
		{"NEffA", m.NEffA, 4.213483146067414}, {"NEffB", m.NEffB, 15},
		{"Corr", m.Corr, 0.4787708312212122}, {"Crit", m.Crit, 2.5705818356363146},
		{"Lo", m.Lo, -0.21226227921809088}, {"Hi", m.Hi, 0.5214855400685146},
	} {
		if !near(c.got, c.want, 1e-9) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	if m.Clusters != 6 || m.Units != 15 {
		t.Errorf("clusters %d units %v", m.Clusters, m.Units)
	}
}

// TestMOVERNewcombe2x2: with one pair per cluster (and no design effect
// truncated: each CR1 variance is p(1−p)/(n−1), above p(1−p)/n) the
// correlation is the phi coefficient of the paired 2×2 table, and MOVER on
// Wilson limits with z is Newcombe's (1998) method 10 (φ without his n/2
// adjustment). Table: both right 8, base only 5, variant only 1, both wrong
// 6 (N = 20). Python (statistics.NormalDist for z = 1.9599639845400536):
// φ = 0.4530333378893934, interval [−0.022427229023660927,
// 0.3895991658307496].
func TestMOVERNewcombe2x2(t *testing.T) {
	var b, v [][]float64
	add := func(k int, x, y float64) {
		for range k {
			b = append(b, []float64{x})
			v = append(v, []float64{y})
		}
	}
	add(8, 1, 1)
	add(5, 1, 0)
	add(1, 0, 1)
	add(6, 0, 0)
	m, ok := PairedMOVERWilson(ratioOf(b), ratioOf(v), 20, 20, 0.4530333378893934, 0.95)
	if !ok || !near(m.Corr, 0.4530333378893934, 1e-12) {
		t.Fatalf("corr %v ok %v", m.Corr, ok)
	}
	z := 1.9599639845400536
	l1, u1, _ := WilsonCrit(0.65, 20, z)
	l2, u2, _ := WilsonCrit(0.45, 20, z)
	lo, hi := MOVER(0.65, l1, u1, 0.45, l2, u2, m.Corr)
	if !near(lo, -0.022427229023660927, 1e-12) || !near(hi, 0.3895991658307496, 1e-12) {
		t.Errorf("MOVER [%.17g, %.17g]", lo, hi)
	}
	// WilsonCrit with z is Wilson.
	wl, wh, _ := Wilson(13, 20, 0.95)
	if !near(wl, l1, 1e-12) || !near(wh, u1, 1e-12) {
		t.Errorf("WilsonCrit [%v, %v], Wilson [%v, %v]", l1, u1, wl, wh)
	}
}

// TestPairedMOVERWilsonEdges: all pairs right on both sides is not an
// interval of certainty; bad input is refused.
func TestPairedMOVERWilsonEdges(t *testing.T) {
	ones := ratioOf([][]float64{{1, 1}, {1, 1}, {1, 1}})
	m, ok := PairedMOVERWilson(ones, ones, 3, 6, 0, 0.95)
	if !ok || m.Lo >= 0 || m.Hi <= 0 || m.Lo < -1 || m.Hi > 1 {
		t.Errorf("all right: [%v, %v] ok %v", m.Lo, m.Hi, ok)
	}
	if _, ok := PairedMOVERWilson(ratioOf([][]float64{{1}}), ratioOf([][]float64{{0}}), 1, 1, 0, 0.95); ok {
		t.Error("one cluster accepted")
	}
	if _, ok := PairedMOVERWilson(ratioOf([][]float64{{1}, {1, 0}}), ratioOf([][]float64{{0}, {1}}), 2, 2, 0, 0.95); ok {
		t.Error("unequal denominators accepted")
	}
	if _, ok := PairedMOVERWilson(ones, ones, 3, 6, 0, 1); ok {
		t.Error("confidence 1 accepted")
	}
	if n := EffectiveN(0.5, 10, 0.1, 2); n != 2.5 {
		t.Errorf("EffectiveN(0.5, 10, 0.1, 2) = %v, want 0.25/0.1 = 2.5", n)
	}
	if n := EffectiveN(0.5, 10, 0.001, 2); n != 10 {
		t.Errorf("EffectiveN truncation: %v, want 10", n)
	}
	if n := EffectiveN(0, 10, 0, 3); n != 3 {
		t.Errorf("EffectiveN at p = 0: %v, want the caller's 3", n)
	}
	if n := EffectiveN(1, 10, 0, 30); n != 10 {
		t.Errorf("EffectiveN at p = 1: %v, want min(n, 30) = 10", n)
	}
	if lo, hi := MOVER(0.5, 0.4, 0.6, 0.5, 0.4, 0.6, 2); !near(lo, 0, 1e-12) || !near(hi, 0, 1e-12) {
		t.Errorf("r clipped to 1 with equal distances: [%v, %v]", lo, hi)
	}
	if _, _, ok := WilsonCrit(0.5, 0, 2); ok {
		t.Error("WilsonCrit with n = 0 accepted")
	}
	if math.IsNaN(m.Corr) {
		t.Error("NaN correlation")
	}
}

// TestKishN: by hand, weights (3, 3, 3) give 81/27 = 3; (1, 1, 2) give
// 16/6 = 2.6666…; a shared base prompt in 5 pairs alone gives 1.
func TestKishN(t *testing.T) {
	for _, c := range []struct {
		w    []float64
		want float64
	}{{[]float64{3, 3, 3}, 3}, {[]float64{1, 1, 2}, 16.0 / 6}, {[]float64{5}, 1}, {nil, 0}, {[]float64{0, -1}, 0}} {
		if got := KishN(c.w); !near(got, c.want, 1e-15) {
			t.Errorf("KishN(%v) = %v, want %v", c.w, got, c.want)
		}
	}
}

// TestPearsonPhi: for 0/1 pairs Pearson is the phi coefficient of the 2×2
// table; by hand for both 8, base only 5, variant only 1, neither 6:
// (8·6 − 5·1)/√(13·7·9·11) = 43/√9009 = 0.4530333378893934 (as in
// TestMOVERNewcombe2x2). With no variation in one side it is 0. When one
// side of a paired drop is at 100% (no variance to correlate),
// PairedMOVERWilson takes unitCorr.
func TestPearsonPhi(t *testing.T) {
	var x, y []float64
	for _, c := range []struct {
		k    int
		a, b float64
	}{{8, 1, 1}, {5, 1, 0}, {1, 0, 1}, {6, 0, 0}} {
		for range c.k {
			x = append(x, c.a)
			y = append(y, c.b)
		}
	}
	if r := Pearson(x, y); !near(r, 43/math.Sqrt(9009), 1e-15) {
		t.Errorf("phi %v", r)
	}
	if r := Pearson([]float64{1, 1, 1}, []float64{0, 1, 0}); r != 0 {
		t.Errorf("constant side: %v", r)
	}
	base := ratioOf([][]float64{{1, 1}, {1, 1}, {1, 1}})
	vari := ratioOf([][]float64{{1, 0}, {0, 0}, {1, 1}})
	m, ok := PairedMOVERWilson(base, vari, 6, 6, 0.42, 0.95)
	if !ok || m.Corr != 0.42 {
		t.Errorf("corr %v ok %v", m.Corr, ok)
	}
}

// TestNewcombePhi: Newcombe's continuity-corrected phi against values
// computed by hand.
func TestNewcombePhi(t *testing.T) {
	for _, c := range []struct{ a, b, c, d, want float64 }{
		{3, 0, 0, 3, 6.0 / 9},                                   // ad = 9 > n/2 = 3: (9 − 3)/√(3·3·3·3)
		{10, 2, 1, 7, 58 / math.Sqrt(12*8*11*9)},                // ad − bc = 68, n/2 = 10
		{2, 1, 1, 2, 0},                                         // ad − bc = 3 ≤ n/2 = 3: 0
		{1, 4, 3, 1, -11 / math.Sqrt(5*4*4*5)},                  // negative: unchanged
		{5, 0, 0, 0, 0},                                         // an empty margin
		{2.5, 0.5, 0.5, 2.5, (6.25 - 0.25 - 3) / math.Sqrt(81)}, // fractional counts
	} {
		if got := NewcombePhi(c.a, c.b, c.c, c.d); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("NewcombePhi(%v, %v, %v, %v) = %v, want %v", c.a, c.b, c.c, c.d, got, c.want)
		}
	}
}

// TestPairedEffectiveN: by hand. A proportion of 0 or 1 takes the other's
// design effect (effB = 0.25/(0.25/15) = 15 of 30 units: effA = 30·15/30
// = 15; nA = 20: 20·15/30 = 10), never below the 6 clusters (effB = 0.25/
// 0.05 = 5: effA = 6), and the number of clusters when neither has one.
func TestPairedEffectiveN(t *testing.T) {
	for _, c := range []struct {
		pa, pb, nA, nB, va, vb float64
		g                      int
		a, b                   float64
	}{
		{1, 0.5, 30, 30, 0, 0.25 / 15, 6, 15, 15},
		{1, 0.5, 20, 30, 0, 0.25 / 15, 6, 10, 15},
		{0.5, 0, 30, 30, 0.25 / 15, 0, 6, 15, 15},
		{1, 0.5, 30, 30, 0, 0.05, 6, 6, 5},
		{0, 0, 60, 60, 0, 0, 6, 6, 6},
		{0, 1, 4, 4, 0, 0, 6, 4, 4},
		{0.5, 0.5, 30, 30, 0.25 / 10, 0.25 / 20, 6, 10, 20},
	} {
		a, b := pairedEffectiveN(c.pa, c.pb, c.nA, c.nB, c.va, c.vb, c.g)
		if !near(a, c.a, 1e-12) || !near(b, c.b, 1e-12) {
			t.Errorf("%+v: effective n %v, %v; want %v, %v", c, a, b, c.a, c.b)
		}
	}
}

// TestMOVERWilsonNoSuccessClustered: 6 templates × 10 pairs, every pair
// wrong on both sides. The effective sample size of each side is the 6
// templates, not the 60 pairs, so the upper limit is Wilson's at p = 0 on
// n = 6 with t(0.975, 5): c²/(6 + c²) = 0.5241075598992433 (scipy), where
// the 60 pairs gave 0.0992 and missed a true drop of 10 pp.
func TestMOVERWilsonNoSuccessClustered(t *testing.T) {
	groups := make([][]float64, 6)
	for g := range groups {
		groups[g] = make([]float64, 10)
	}
	z := ratioOf(groups).EqualWeights()
	m, ok := PairedMOVERWilson(z, z, 60, 60, 0, 0.95)
	if !ok || m.NEffA != 6 || m.NEffB != 6 || !near(m.Hi, 0.5241075598992433, 1e-12) || !near(m.Lo, -0.5241075598992433, 1e-12) {
		t.Errorf("all wrong on 6 templates × 10: %+v", m)
	}
}

// TestPairedDropInterval: the rule by hand. From 4 templates (fewClusters
// 4) with a positive SE and a sign-flip interval: that interval, its upper
// limit raised to the skew-corrected one's where that is higher; below, or
// with SE 0: MOVER-Wilson, its lower limit lowered to the sign-flip
// interval's where that is defined and lower; none without MOVER-Wilson.
func TestPairedDropInterval(t *testing.T) {
	mw, sf := Limits{Lo: 0.15, Hi: 0.55, OK: true}, Limits{Lo: -0.1, Hi: 0.5, OK: true}
	up, down := Limits{Lo: 0.05, Hi: 0.7, OK: true}, Limits{Lo: -0.3, Hi: 0.4, OK: true}
	for _, c := range []struct {
		g        int
		se       float64
		mw       Limits
		sf, skew Limits
		want     Limits
		m        DropMethod
	}{
		{4, 0.1, mw, sf, Limits{}, sf, DropSignFlip},
		{4, 0.1, mw, sf, up, Limits{Lo: -0.1, Hi: 0.7, OK: true}, DropSignFlipSkew},
		{4, 0.1, mw, sf, down, sf, DropSignFlipSkew},
		{3, 0.1, mw, sf, up, Limits{Lo: -0.1, Hi: 0.55, OK: true}, DropMOVERWilsonSignFlip},
		{3, 0.1, Limits{Lo: -0.2, Hi: 0.55, OK: true}, sf, up, Limits{Lo: -0.2, Hi: 0.55, OK: true}, DropMOVERWilsonSignFlip},
		{4, 0, mw, sf, up, mw, DropMOVERWilson},
		{3, 0.1, mw, Limits{}, up, mw, DropMOVERWilson},
		{4, 0.1, mw, Limits{}, up, mw, DropMOVERWilson},
		{3, 0.1, Limits{}, sf, up, Limits{}, DropNone},
	} {
		got, m := PairedDropInterval(c.g, 4, c.se, c.mw, c.sf, c.skew)
		if got != c.want || m != c.m {
			t.Errorf("%+v: %+v (rule %d), want %+v (rule %d)", c, got, m, c.want, c.m)
		}
	}
}
