package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSignFlipIntervalByHand: with 6 clusters all 64 sign vectors are
// enumerated and the smallest p is 2/64 = 0.031: δ is rejected at 0.05
// only when every d_g − δ has one sign (just above max d or below min d:
// below max d, flipping the one positive difference and the mirror images
// give 4 vectors at least as extreme, p = 4/64 = 0.0625), so the 95%
// interval of {1, …, 6} is [1, 6]. With 5 clusters the smallest p is 2/32
// = 0.0625 and no δ is rejected: no interval.
func TestSignFlipIntervalByHand(t *testing.T) {
	ci, ok := SignFlipInterval([]float64{3, 1, 6, 2, 5, 4}, 0.95, ExactMaxClusters, 0, 1, nil)
	if !ok || ci.Lo != 1 || ci.Hi != 6 { // limits at a value are snapped to it
		t.Errorf("interval %+v ok %v, want [1, 6]", ci, ok)
	}
	if !ci.Test.Exact || ci.Test.P != 2.0/64 || ci.Test.MinP != 2.0/64 {
		t.Errorf("test %+v, want exact p = 2/64 (all six above 0)", ci.Test)
	}
	if _, ok := SignFlipInterval([]float64{1, 2, 3, 4, 5}, 0.95, ExactMaxClusters, 0, 1, nil); ok {
		t.Error("5 clusters: an interval although no δ can be rejected at 0.05")
	}
	if _, ok := SignFlipInterval([]float64{2, 2, 2, 2, 2, 2, 2}, 0.95, ExactMaxClusters, 0, 1, nil); ok {
		t.Error("all values equal: a zero-width interval was returned")
	}
}

// TestSignFlipIntervalMatchesTest: the interval's test equals SignFlip from
// the same generator state (exact at 12 clusters, Monte Carlo at 30), and
// the interval excludes 0 exactly when that test rejects at 0.05, over 300
// random data sets whose centre is near the edge of significance.
func TestSignFlipIntervalMatchesTest(t *testing.T) {
	data := rand.New(rand.NewPCG(5, 6))
	for _, g := range []int{12, 30} {
		disagree := 0
		for range 300 {
			d := make([]float64, g)
			shift := 0.6 * data.Float64()
			for j := range d {
				d[j] = data.NormFloat64() + shift
			}
			ci, ok := SignFlipInterval(d, 0.95, ExactMaxClusters, 999, 1, rand.New(rand.NewPCG(9, 9)))
			want := SignFlip(d, ExactMaxClusters, 999, rand.New(rand.NewPCG(9, 9)))
			if !ok || ci.Test != want {
				t.Fatalf("G = %d: interval test %+v, SignFlip %+v (ok %v)", g, ci.Test, want, ok)
			}
			if (ci.Lo > 0 || ci.Hi < 0) != (want.P <= 0.05) {
				disagree++
			}
			if !(ci.Lo < ci.Hi) {
				t.Fatalf("G = %d: interval [%v, %v]", g, ci.Lo, ci.Hi)
			}
		}
		if disagree > 0 {
			t.Errorf("G = %d: the interval and the test disagree on 0 in %d of 300 data sets", g, disagree)
		}
	}
}

// TestRandomizedSignFlipExactLevel: over the whole sign-flip orbit of
// template means with many ties (G = 8, values on the lattice of 0/1
// means of 5 pairs: three of them 0, or none 0, where signs cancel in
// pairs of equal values so that the ties at 0 come from sums; and the 11
// means of one pair per template, ±1), the
// randomized test (u uniform)
// rejects 0 with probability exactly α = 0.05 (its p is linear in u:
// p(u) = A + u·B, so P(reject) = clamp((α − A)/B, 0, 1)), where the
// non-randomized one (u = 1) rejects on less; and on every point of the
// orbit the randomized interval leaves 0 out exactly when the test of 0
// rejects at that u (Limits.Above / Below with the open limits), at nine
// values of u.
func TestRandomizedSignFlipExactLevel(t *testing.T) {
	for _, base := range [][]float64{{0.2, 0.4, 0, 0.2, 0, 0.6, 0, 0.2}, {0.2, 0.4, 0.2, 0.2, 0.6, 0.4, 0.8, 0.2}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}} {
		checkRandomizedOrbit(t, base)
	}
	// One pair per template, no template mean 0: 9 of 11 discordant pairs
	// one way. The randomized test rejects 0 (p = 0.012 at u = 0.01) where
	// the drops just above 0 are not rejected (flipping a 1 and a −1 keeps
	// the sum only at 0): the interval is (0, 1], Lo exactly 0 and open.
	d := []float64{1, 1, -1, 1, 1, 1, 1, 1, -1, 1, 1}
	ci, ok := SignFlipInterval(d, 0.95, ExactMaxClusters, 0, 0.01, nil)
	if !ok || ci.Lo != 0 || !ci.LoOpen || ci.Test.P > 0.05 {
		t.Errorf("sign-test data at u = 0.01: %+v, want (0, 1] with the test rejecting", ci)
	}
	if ci, _ := SignFlipInterval(d, 0.95, ExactMaxClusters, 0, 1, nil); ci.Lo != 0 || ci.LoOpen || ci.Test.P <= 0.05 {
		t.Errorf("sign-test data at u = 1: %+v, want [0, 1] with the test not rejecting", ci)
	}
}

// checkRandomizedOrbit runs TestRandomizedSignFlipExactLevel's checks on
// the orbit of base.
func checkRandomizedOrbit(t *testing.T, base []float64) {
	t.Helper()
	g := len(base)
	var rand1, nonRand float64
	for k := range 1 << g {
		d := make([]float64, g)
		for j, x := range base {
			d[j] = x
			if k&(1<<j) != 0 {
				d[j] = -x
			}
		}
		at := func(u float64) float64 {
			ci, _ := SignFlipInterval(d, 0.95, ExactMaxClusters, 0, u, nil)
			return ci.Test.P
		}
		a := at(1e-300)
		b := at(1) - a
		if b > 0 {
			rand1 += min(1, max(0, (0.05-a)/b))
		} else if a <= 0.05 {
			rand1++
		}
		nonRand += b2f(at(1) <= 0.05)
		for _, u := range []float64{0.05, 0.15, 0.25, 0.35, 0.5, 0.6, 0.75, 0.9, 1} {
			ci, ok := SignFlipInterval(d, 0.95, ExactMaxClusters, 0, u, nil)
			l := Limits{Lo: ci.Lo, Hi: ci.Hi, OK: ok, LoOpen: ci.LoOpen, HiOpen: ci.HiOpen}
			if ok && (l.Above(0) || l.Below(0)) != (ci.Test.P <= 0.05) {
				t.Fatalf("signs %b, u %v: interval %+v excludes 0: %v, test p %v", k, u, l, l.Above(0) || l.Below(0), ci.Test.P)
			}
			if ok && u == 1 && (ci.LoOpen || ci.HiOpen) {
				t.Fatalf("signs %b: an open limit without randomization: %+v", k, ci)
			}
		}
	}
	n := float64(int(1) << g)
	if math.Abs(rand1/n-0.05) > 1e-12 {
		t.Errorf("randomized test rejects on %.6f of the orbit, want exactly 0.05", rand1/n)
	}
	if nonRand/n >= 0.05 {
		t.Errorf("non-randomized test rejects on %.6f of the orbit, want below 0.05 (ties)", nonRand/n)
	}
	t.Logf("orbit of %v (%d points): randomized %.4f, non-randomized %.4f", base, int(n), rand1/n, nonRand/n)
}

// TestRandomizedSignTestLevel: with no drop, SignTestPower (the chance of
// rejecting in one given direction) is exactly α/2 for the randomized sign
// test at every number of clusters, less the runs in which every cluster
// difference is 0 (probability (1 − 0.3)^G here: a drop estimated at
// exactly 0 is never rejected), and at most α/2 for the non-randomized one
// (strictly less at 20 clusters).
func TestRandomizedSignTestLevel(t *testing.T) {
	c := Components{Between: 0.3}
	for _, g := range []int{3, 6, 20, 68} {
		want := 0.025 * (1 - math.Pow(0.7, float64(g)))
		if p := SignTestPower(g, c, 0, 0.05, true); math.Abs(p-want) > 1e-9 {
			t.Errorf("G = %d: randomized sign test rejects with %v at no drop, want %v", g, p, want)
		}
		if p := SignTestPower(g, c, 0, 0.05, false); p > 0.025+1e-12 || (g == 20 && p >= 0.025) {
			t.Errorf("G = %d: non-randomized sign test rejects with %v at no drop", g, p)
		}
	}
	if SignTestPower(20, c, 0.1, 0.05, true) <= SignTestPower(20, c, 0.1, 0.05, false) {
		t.Error("the randomized sign test is not more powerful than the non-randomized one")
	}
}
