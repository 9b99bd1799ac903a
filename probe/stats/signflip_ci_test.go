package stats

import (
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
	ci, ok := SignFlipInterval([]float64{3, 1, 6, 2, 5, 4}, 0.95, ExactMaxClusters, 0, nil)
	if !ok || ci.Lo != 1 || ci.Hi != 6 { // limits at a value are snapped to it
		t.Errorf("interval %+v ok %v, want [1, 6]", ci, ok)
	}
	if !ci.Test.Exact || ci.Test.P != 2.0/64 || ci.Test.MinP != 2.0/64 {
		t.Errorf("test %+v, want exact p = 2/64 (all six above 0)", ci.Test)
	}
	if _, ok := SignFlipInterval([]float64{1, 2, 3, 4, 5}, 0.95, ExactMaxClusters, 0, nil); ok {
		t.Error("5 clusters: an interval although no δ can be rejected at 0.05")
	}
	if _, ok := SignFlipInterval([]float64{2, 2, 2, 2, 2, 2, 2}, 0.95, ExactMaxClusters, 0, nil); ok {
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
			ci, ok := SignFlipInterval(d, 0.95, ExactMaxClusters, 999, rand.New(rand.NewPCG(9, 9)))
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
