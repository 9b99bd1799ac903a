package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestWilsonTextbook checks the Wilson score interval against the values
// published in R. G. Newcombe, "Two-sided confidence intervals for the
// single proportion: comparison of seven methods", Statistics in Medicine
// 17:857–872 (1998), Table I, method 3 (score method without continuity
// correction), to the four decimals printed there.
func TestWilsonTextbook(t *testing.T) {
	cases := []struct {
		k, n   float64
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0.0000, 0.1611},
		{1, 29, 0.0061, 0.1718},
		{29, 29, 0.8830, 1.0000},
	}
	for _, c := range cases {
		lo, hi, ok := Wilson(c.k, c.n, 0.95)
		if !ok || math.Abs(lo-c.lo) > 0.00005 || math.Abs(hi-c.hi) > 0.00005 {
			t.Errorf("Wilson(%v, %v) = [%.5f, %.5f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	for _, bad := range [][2]float64{{0, 0}, {-1, 5}, {6, 5}, {math.NaN(), 5}} {
		if _, _, ok := Wilson(bad[0], bad[1], 0.95); ok {
			t.Errorf("Wilson(%v, %v) accepted", bad[0], bad[1])
		}
	}
	if _, _, ok := Wilson(1, 2, 1); ok {
		t.Error("Wilson accepted confidence 1")
	}
}

// TestTQuantile compares with scipy.stats.t.ppf (scipy 1.17.1):
// t.ppf(0.975, 5) = 2.5705818356363146, t.ppf(0.8, 5) = 0.9195437802408271,
// t.ppf(0.975, 1) = 12.706204736174694, t.ppf(0.995, 30) = 2.7499956535672254.
func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 5, 2.5705818356363146}, {0.8, 5, 0.9195437802408271},
		{0.975, 1, 12.706204736174694}, {0.995, 30, 2.7499956535672254},
	} {
		if got := TQuantile(c.p, c.df); !near(got, c.want, 1e-9) {
			t.Errorf("TQuantile(%v, %v) = %.17g, want %.17g", c.p, c.df, got, c.want)
		}
	}
	if !math.IsNaN(TQuantile(0.5, 0)) || !math.IsNaN(TQuantile(1, 3)) {
		t.Error("TQuantile accepted df 0 or p 1")
	}
}

// ratioOf builds a Ratio of unit values grouped by cluster.
func ratioOf(groups [][]float64) Ratio {
	r := NewRatio(len(groups))
	for g, ys := range groups {
		for _, y := range ys {
			r.Add(g, y)
		}
	}
	return r
}

// TestCR1ByHand: the mean of 0/1 values in clusters A = {1,1,0}, B = {1,0},
// C = {0,0,0,1}, D = {1}. By hand: n = 10, mean 0.5; the within-cluster
// residual sums are 0.5, 0, −1, 0.5, so Σ² = 1.5, Σ²/n² = 0.015, times
// G/(G−1) = 4/3 gives 0.02 and SE = √0.02 = 0.1414213562373095.
// Independently, statsmodels 0.15.0 OLS(y, 1).fit(cov_type="cluster")
// gives SE 0.14142135623730942 (its factor G/(G−1)·(N−1)/(N−K) is G/(G−1)
// for an intercept), and scipy's t.ppf(0.975, 3) = 3.1824463052837078 gives
// the cluster-t interval [0.04993412735436331, 0.9500658726456367] and the
// two-sided p of the t test 0.03848644485325067.
func TestCR1ByHand(t *testing.T) {
	r := ratioOf([][]float64{{1, 1, 0}, {1, 0}, {0, 0, 0, 1}, {1}})
	m, _ := r.Value()
	inf, _ := r.Influence()
	se, g, ok := inf.CR1()
	if !ok || g != 4 || !near(m, 0.5, 1e-15) || !near(se, 0.1414213562373095, 1e-12) {
		t.Fatalf("mean %v se %v g %d ok %v", m, se, g, ok)
	}
	lo, hi, ok := ClusterT(m, se, g, 0.95)
	if !ok || !near(lo, 0.04993412735436331, 1e-9) || !near(hi, 0.9500658726456367, 1e-9) {
		t.Errorf("cluster-t [%v, %v]", lo, hi)
	}
	if p := ClusterTP(m, se, g); !near(p, 0.03848644485325067, 1e-8) {
		t.Errorf("t-test p %v", p)
	}
	if _, _, ok := ClusterT(m, se, 1, 0.95); ok {
		t.Error("cluster-t with G = 1 accepted")
	}
}

// TestCR1PairedByHand: paired differences A = {1,0,1}, B = {0,−1},
// C = {1,1,0,0}, D = {−1}, E = {1,0}: mean 3/12 = 0.25; statsmodels 0.15.0
// clustered SE 0.2398096756921113 and, with scipy t.ppf(0.975, 4), the
// cluster-t interval [−0.4158184002544327, 0.9158184002544327].
func TestCR1PairedByHand(t *testing.T) {
	r := ratioOf([][]float64{{1, 0, 1}, {0, -1}, {1, 1, 0, 0}, {-1}, {1, 0}})
	m, _ := r.Value()
	inf, _ := r.Influence()
	se, g, _ := inf.CR1()
	lo, hi, _ := ClusterT(m, se, g, 0.95)
	if !near(m, 0.25, 1e-15) || !near(se, 0.2398096756921113, 1e-12) ||
		!near(lo, -0.4158184002544327, 1e-9) || !near(hi, 0.9158184002544327, 1e-9) {
		t.Errorf("mean %v se %v [%v, %v]", m, se, lo, hi)
	}
}

// TestCR1DifferenceByHand: the difference of two means sharing clusters,
// base A = {1,1}, B = {1,0}, C = {1,1,1} and variant A = {1,0}, B = {0,0,1},
// C = {1,1}: drop 6/7 − 4/7 = 2/7. statsmodels 0.15.0 OLS(y, [1, variant])
// with clustered errors gives SE 0.11037401863665255 for the variant
// coefficient, with its factor G/(G−1)·(N−1)/(N−K), N = 14, K = 2; removing
// (N−1)/(N−K) leaves the CR1 factor G/(G−1) alone: 0.10604392699401273,
// which the delta method (influence of base − influence of variant) must
// give.
func TestCR1DifferenceByHand(t *testing.T) {
	b := ratioOf([][]float64{{1, 1}, {1, 0}, {1, 1, 1}})
	v := ratioOf([][]float64{{1, 0}, {0, 0, 1}, {1, 1}})
	ib, _ := b.Influence()
	iv, _ := v.Influence()
	se, g, _ := ib.Combine(1, iv, -1).CR1()
	if g != 3 || !near(se, 0.10604392699401273, 1e-12) {
		t.Errorf("se %v over %d clusters", se, g)
	}
}

// TestInfluenceAbsentClusters: a cluster without data for a statistic does
// not count in its G (nor in its degrees of freedom).
func TestInfluenceAbsentClusters(t *testing.T) {
	r := ratioOf([][]float64{{1, 1, 0}, {1, 0}, {}, {0, 0, 0, 1}, {1}})
	inf, _ := r.Influence()
	se, g, _ := inf.CR1()
	if g != 4 || !near(se, 0.1414213562373095, 1e-12) || r.Clusters() != 4 {
		t.Errorf("se %v g %d", se, g)
	}
}

// TestSignFlipByHand: cluster sums D = (2, −1, 2, −1, 1) of the paired case
// above, |ΣD| = 3. Enumerating the 32 sign vectors in Python
// (itertools.product) gives 18 with |Σ s·D| ≥ 3, so p = 18/32 = 0.5625.
// By hand for a smaller case, D = (1, 1, 1): only +++ and −−− reach 3, p =
// 2/8 = 0.25, which is also the smallest p at G = 3.
func TestSignFlipByHand(t *testing.T) {
	r := SignFlip([]float64{2, -1, 2, -1, 1}, ExactMaxClusters, 0, nil)
	if !r.Exact || r.Draws != 32 || r.P != 0.5625 || r.MinP != 1.0/16 || r.Clusters != 5 {
		t.Errorf("%+v", r)
	}
	r = SignFlip([]float64{1, 1, 1}, ExactMaxClusters, 0, nil)
	if r.P != 0.25 || r.MinP != 0.25 {
		t.Errorf("%+v", r)
	}
	// All-zero sums: every sign vector ties, p = 1.
	if r := SignFlip([]float64{0, 0, 0, 0}, ExactMaxClusters, 0, nil); r.P != 1 {
		t.Errorf("zero sums: %+v", r)
	}
	// Flipped pairs: base right on 3 templates, variant right on 3, 5 pairs
	// each: ΣD = 0, p = 1.
	if r := SignFlip([]float64{5, 5, 5, -5, -5, -5}, ExactMaxClusters, 0, nil); r.P != 1 {
		t.Errorf("flipped pairs: %+v", r)
	}
	// Six templates all with a drop: the smallest attainable p, 2/64.
	if r := SignFlip([]float64{1, 2, 3, 1, 2, 3}, ExactMaxClusters, 0, nil); r.P != 2.0/64 || r.MinP != 2.0/64 {
		t.Errorf("all positive: %+v", r)
	}
}

// TestSignFlipMonteCarlo: above the exact limit the Monte Carlo p agrees
// with exact enumeration of the same sums (within its sampling error) and
// is never below 1/(M+1).
func TestSignFlipMonteCarlo(t *testing.T) {
	d := []float64{3, -1, 2, 0.5, 1, -2, 1.5, 2, -0.5, 1, 0, 2.5, 1, -1, 0.5, 1, 2, -1}
	exact := SignFlip(d, 20, 0, nil)
	mc := SignFlip(d, 16, 20000, rand.New(rand.NewPCG(1, 2)))
	if exact.Draws != 1<<18 || mc.Exact || mc.Draws != 20000 || mc.MinP != 1.0/20001 {
		t.Fatalf("exact %+v mc %+v", exact, mc)
	}
	se := math.Sqrt(exact.P * (1 - exact.P) / 20000)
	if math.Abs(mc.P-exact.P) > 4*se+1.0/20001 {
		t.Errorf("Monte Carlo p %v, exact %v (se %v)", mc.P, exact.P, se)
	}
	big := make([]float64, 40)
	for i := range big {
		big[i] = 1
	}
	if r := SignFlip(big, 16, 999, rand.New(rand.NewPCG(1, 2))); r.P != 1.0/1000 {
		t.Errorf("all positive, 40 clusters: p %v, want the floor 1/1000", r.P)
	}
}

func TestSignFlipMinClusters(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		want  int
	}{{0.05, 6}, {0.05 / 2, 7}, {0.05 / 3, 7}, {0.05 / 5, 8}, {0.25, 3}, {1, 1}} {
		if got := SignFlipMinClusters(c.alpha); got != c.want {
			t.Errorf("SignFlipMinClusters(%v) = %d, want %d", c.alpha, got, c.want)
		}
	}
}

// TestHolm compares with statsmodels 0.15.0 multipletests(p, method="holm"):
// p = (0.01, 0.04, 0.03, 0.005, 0.2) → (0.04, 0.09, 0.09, 0.025, 0.2).
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005, 0.2})
	want := []float64{0.04, 0.09, 0.09, 0.025, 0.2}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Errorf("Holm[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	got = Holm([]float64{0.5, math.NaN(), 0.01})
	if got[0] != 0.5 || !math.IsNaN(got[1]) || got[2] != 0.02 {
		t.Errorf("with NaN: %v", got)
	}
}

// TestVarianceComponentsByHand compares with the ANOVA estimators computed
// in numpy for the groups {1,0,1}, {0,−1}, {1,1,0,0}, {−1}, {1,0}:
// MSB = 0.8958333333333333, MSW = 0.380952380952381, n₀ = 2.2916666666666665,
// σ²_b = (MSB − MSW)/n₀ = 0.22467532467532467.
func TestVarianceComponentsByHand(t *testing.T) {
	c, ok := VarianceComponents([][]float64{{1, 0, 1}, {0, -1}, {1, 1, 0, 0}, {-1}, {1, 0}})
	if !ok || !c.WithinIdentified || c.Clusters != 5 || c.Units != 12 ||
		!near(c.Within, 0.380952380952381, 1e-12) || !near(c.N0, 2.2916666666666665, 1e-12) ||
		!near(c.Between, 0.22467532467532467, 1e-12) {
		t.Errorf("%+v", c)
	}
	// One unit per cluster: the within part is not identified.
	c, ok = VarianceComponents([][]float64{{1}, {0}, {1}, {1}})
	if !ok || c.WithinIdentified || c.Within != 0 || !near(c.Between, 0.25, 1e-12) {
		t.Errorf("one unit per cluster: %+v", c)
	}
	if _, ok := VarianceComponents([][]float64{{1, 2}, {}}); ok {
		t.Error("one group accepted")
	}
}

// TestMDE compares with scipy: (t.ppf(0.975, G−1) + t.ppf(0.8, G−1)) ·
// √((0.05 + 0.2/5)/G) is 0.427451344855794 at G = 6, 0.19815864059599114 at
// G = 20 and 0.121279856666224 at G = 50 (the 44, 20 and 12 pp the issue
// quotes under these variance components).
func TestMDE(t *testing.T) {
	c := Components{Between: 0.05, Within: 0.2}
	for _, x := range []struct {
		g    int
		want float64
	}{{6, 0.427451344855794}, {20, 0.19815864059599114}, {50, 0.121279856666224}} {
		if got := MDE(x.g, 5, c, 0.05, 0.8); !near(got, x.want, 1e-9) {
			t.Errorf("MDE(%d) = %.15g, want %.15g", x.g, got, x.want)
		}
		// Power at the MDE is 80% by construction.
		if p := Power(x.g, 5, c, MDE(x.g, 5, c, 0.05, 0.8), 0.05); !near(p, 0.8, 1e-9) {
			t.Errorf("power at the MDE, G = %d: %v", x.g, p)
		}
	}
	// RequiredClusters inverts PairedDropMDE, MDE plus the sign-flip
	// lattice's continuity correction 1/(5G): 0.198 + 0.010 at G = 20.
	g, ok := RequiredClusters(0.20, 5, c, 0.05, 0.8, 0, 100000, never)
	if !ok || g != 22 || PairedDropMDE(22, 5, c, 0.05, 0.8, never) > 0.20 {
		t.Errorf("required clusters for 20 pp: %d %v", g, ok)
	}
	if PairedDropMDE(21, 5, c, 0.05, 0.8, never) <= 0.20 {
		t.Error("PairedDropMDE(21) already below 0.20: the check above proves nothing")
	}
	if _, ok := RequiredClusters(0.001, 5, c, 0.05, 0.8, 0, 1000, never); ok {
		t.Error("a 0.1 pp drop found detectable with 1000 clusters")
	}
	if g, _ := RequiredClusters(0.9, 5, c, 0.05, 0.8, SignFlipMinClusters(0.05), 1000, never); g != 6 {
		t.Errorf("the sign-flip floor is not applied: %d", g)
	}
	// With a quarter of the clusters informative (c then the informative
	// clusters' components) the search runs on G' = round(g/4) of them:
	// the g found has the informed MDE at or below the drop, g − 1 not.
	for _, x := range []struct {
		g     int
		share float64
		want  int
	}{{68, 0.25, 17}, {68, 0, 68}, {68, 1, 68}, {68, 1.5, 68}, {3, 0.1, 1}, {10, 0.25, 3}} {
		if got := InformativeOf(x.g, x.share); got != x.want {
			t.Errorf("InformativeOf(%d, %v) = %d, want %d", x.g, x.share, got, x.want)
		}
	}
	gi, ok := RequiredClustersInformed(0.10, 5, 0.25, c, 0.05, 0.8, 0, 100000, never)
	mdeAt := func(g int) float64 { return PairedDropMDEInformed(g, InformativeOf(g, 0.25), 5, c, 0.05, 0.8, never) }
	if !ok || mdeAt(gi) > 0.10 || mdeAt(gi-1) <= 0.10 {
		t.Errorf("informed required clusters for 10 pp at share 0.25: %d %v (MDE %v there, %v at one fewer)", gi, ok, mdeAt(gi), mdeAt(gi-1))
	}
	if g1, _ := RequiredClustersInformed(0.20, 5, 1, c, 0.05, 0.8, 0, 100000, never); g1 != g {
		t.Errorf("share 1 is not RequiredClusters: %d, want %d", g1, g)
	}
}

func TestClassifyDrop(t *testing.T) {
	r := DropRule{Negligible: 3, Strong: 10, Alpha: 0.05}
	cases := []struct {
		lo, hi, p      float64
		has            bool
		want           string
		loOpen, hiOpen bool
	}{
		{-66.7, 66.7, 1, true, VerdictInconclusive, false, false},       // the flipped-pairs case
		{-66.7, 33.3, 0.6, true, VerdictInconclusive, false, false},     // a 0.5B model's −16.7 pp
		{0.5, 25, 0.01, true, VerdictUnclearSize, false, false},         // 12 pp [0.5, 25]: no longer "strong"
		{-1, 2.5, 0.4, true, VerdictNoDrop, false, false},               // upper bound below the margin
		{-20, -4, 0.01, true, VerdictNoDrop, false, false},              // the variant did better
		{-1, 9, 0.3, true, VerdictInconclusive, false, false},           // a small drop not ruled out
		{1, 9, 0.01, true, VerdictModerate, false, false},               // shown, strong ruled out
		{1, 9, 0.06, true, VerdictInconclusive, false, false},           // interval excludes 0, adjusted test does not reach alpha
		{10, 40, 0.01, true, VerdictStrong, false, false},               // lower bound clears the strong threshold
		{12, 40, 0.2, true, VerdictInconclusive, false, false},          // Holm keeps it back
		{0, 0, 0, false, VerdictInconclusive, false, false},             // no interval
		{0.5, 2.5, 0.01, true, VerdictNoDrop, false, false},             // a real but negligible drop
		{math.Inf(-1), 5, 0.5, true, VerdictInconclusive, false, false}, // open interval
		{0, 9, 0.01, true, VerdictInconclusive, false, false},           // [0, 9]: 0 not excluded
		{0, 9, 0.01, true, VerdictModerate, true, false},                // (0, 9]: randomized test rejects 0
		{-1, 3, 0.4, true, VerdictInconclusive, false, false},           // [−1, 3]: reaches the margin
		{-1, 3, 0.4, true, VerdictNoDrop, false, true},                  // [−1, 3): below the margin
	}
	for _, c := range cases {
		if got := ClassifyDrop(Limits{Lo: c.lo, Hi: c.hi, OK: c.has, LoOpen: c.loOpen, HiOpen: c.hiOpen}, c.p, r); got != c.want {
			t.Errorf("ClassifyDrop([%v, %v] open %v %v, p %v) = %q, want %q", c.lo, c.hi, c.loOpen, c.hiOpen, c.p, got, c.want)
		}
	}
	if !(Severity(VerdictNoDrop) < Severity(VerdictInconclusive) && Severity(VerdictInconclusive) < Severity(VerdictModerate) &&
		Severity(VerdictModerate) < Severity(VerdictUnclearSize) && Severity(VerdictUnclearSize) < Severity(VerdictStrong)) {
		t.Error("severity order")
	}
}

func TestShiftMeaningful(t *testing.T) {
	for _, c := range []struct {
		lo, hi, p float64
		want      bool
	}{
		{0.03, 0.08, 0.01, true},   // bound beyond 0.02
		{0.01, 0.08, 0.01, false},  // point may be large, bound is not
		{-0.08, -0.03, 0.01, true}, // a fall
		{0.03, 0.08, 0.2, false},   // test does not reach alpha
	} {
		if got := ShiftMeaningful(c.lo, c.hi, true, c.p, 0.02, 0.05); got != c.want {
			t.Errorf("[%v, %v] p %v: %v", c.lo, c.hi, c.p, got)
		}
	}
}

// TestJointBootstrapByHand recomputes a bootstrap independently: the same
// PCG stream, the resampled sums written out, and the percentile interval
// by sorting.
func TestJointBootstrapByHand(t *testing.T) {
	r := ratioOf([][]float64{{1, 1}, {1, 0}, {1, 1, 1}})
	const B = 500
	reps := JointBootstrap(3, B, rand.New(rand.NewPCG(12345, 7)), []Statistic{r.At})
	rng := rand.New(rand.NewPCG(12345, 7))
	num, den := []float64{2, 1, 3}, []float64{2, 2, 3}
	var want []float64
	for range B {
		var n, d float64
		for range 3 {
			j := rng.IntN(3)
			n, d = n+num[j], d+den[j]
		}
		want = append(want, n/d)
	}
	for i := range want {
		if reps[0][i] != want[i] {
			t.Fatalf("replicate %d: %v, want %v", i, reps[0][i], want[i])
		}
	}
	lo, hi, _ := Percentile(reps[0], 0.95)
	if lo >= hi {
		t.Errorf("degenerate interval [%v, %v]", lo, hi)
	}
}

// TestEmpiricalQuantileTextbook: with 1000 sorted replicates 1..1000 the
// 95% percentile interval is the 25th and the 975th (Efron & Tibshirani
// 1993, §13.3), although (1 − 0.95)/2·1000 is 25.000000000000021 in binary.
func TestEmpiricalQuantileTextbook(t *testing.T) {
	reps := make([]float64, 1000)
	for i := range reps {
		reps[i] = float64(1000 - i)
	}
	lo, hi, ok := Percentile(reps, 0.95)
	if !ok || lo != 25 || hi != 975 {
		t.Fatalf("got [%v, %v], want [25, 975]", lo, hi)
	}
	if q := EmpiricalQuantile([]float64{1, 2, 3}, 0.5); q != 2 {
		t.Fatalf("median of 1,2,3 = %v", q)
	}
	if _, _, ok := Percentile(nil, 0.95); ok {
		t.Fatal("no replicates gave an interval")
	}
}

// TestRatioEqualWeights: clusters {1}, {0, 0, 0, 1} and {0, 0} (and one
// empty) have means 1, 1/4 and 0; the equal-weight ratio is their mean
// 5/12 (the pooled ratio is 2/7), its CR1 SE is the standard deviation of
// the means over √3, √(0.27083333/3), a resample is the mean of its
// clusters' means, and the total weight stays 7.
func TestRatioEqualWeights(t *testing.T) {
	r := ratioOf([][]float64{{1}, {0, 0, 0, 1}, {}, {0, 0}})
	e := r.EqualWeights()
	if v, ok := e.Value(); !ok || math.Abs(v-5.0/12) > 1e-12 {
		t.Errorf("value %v, want 5/12", v)
	}
	if e.Den[2] != 0 || e.Clusters() != 3 || math.Abs(e.Den[0]+e.Den[1]+e.Den[3]-7) > 1e-12 {
		t.Errorf("weights %v", e.Den)
	}
	inf, _ := e.Influence()
	se, g, ok := inf.CR1()
	if !ok || g != 3 || math.Abs(se-math.Sqrt(0.2708333333333333/3)) > 1e-12 {
		t.Errorf("SE %v over %d clusters, want %v", se, g, math.Sqrt(0.2708333333333333/3))
	}
	if v, _ := e.At([]int{0, 0, 1}); math.Abs(v-(1+1+0.25)/3) > 1e-12 {
		t.Errorf("resample {0, 0, 1}: %v, want 0.75", v)
	}
}
