package stats

import (
	"math"
	"math/big"
	"slices"
	"testing"
)

// floorMaxK is the most non-zero template means whose sign-flip orbit
// orbitRejectCeiling searches exactly (2^24 points); above it the ceiling
// is taken as the share a itself, which keeps the floor a lower bound.
const floorMaxK = 24

// orbitRejectCeiling returns the largest share of the sign-flip orbit of
// the template means d (the 2^K vectors that keep each |d_g| and give each
// of the K non-zero means either sign) on which a rule can exclude 0 while
// it (1) reads the template means alone, (2) does not depend on the order of
// the templates and (3) is not randomized, and still covers 0 with
// probability at least 1 − a under the null that puts equal weight on every
// point of that orbit. That null is one the sign-flip test assumes
// (independent templates, each mean symmetric about 0: template g gives
// +|d_g| or −|d_g| with probability ½), so a rule whose coverage is at least
// 1 − a wherever that assumption holds excludes 0 on at most this share of
// the orbit.
//
// By (2) the rule is constant on the points of the orbit that are
// reorderings of one another: those with the same number j_l of positive
// signs at each distinct value l of |d_g| (n_l templates), a class of
// Π_l C(n_l, j_l) points; by (3) it excludes 0 on a whole class or not at
// all. The ceiling is therefore the largest sum of class sizes that stays
// within ⌊a·2^K⌋ (a subset-sum over the classes, solved exactly by a
// bitset), over 2^K. The argument is the one behind randomization tests
// (Lehmann & Romano 2005, Testing Statistical Hypotheses, 3rd ed., §15.2):
// the uniform distribution on an orbit of the group (here the sign
// changes) is itself invariant under the group, so a rule of level a for
// every invariant distribution rejects on at most an a share of each
// orbit; restricting the rules to those invariant under the permutations
// of the templates makes the classes the units. K = 0 gives 0; K > maxK
// gives a.
func orbitRejectCeiling(d []float64, a float64, maxK int) float64 {
	counts := map[float64]int{}
	k := 0
	for _, x := range d {
		if x != 0 {
			counts[math.Round(math.Abs(x)*1e9)/1e9]++
			k++
		}
	}
	if k > maxK {
		return a
	}
	capacity := int(math.Floor(a * math.Ldexp(1, k) * (1 + 1e-12)))
	if capacity == 0 {
		return 0
	}
	ns := make([]int, 0, len(counts))
	for _, n := range counts {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	sizes := []int{1} // the class sizes, products of binomial coefficients
	var c big.Int
	for _, n := range ns {
		var next []int
		for _, s := range sizes {
			for j := 0; j <= n; j++ {
				if w := s * int(c.Binomial(int64(n), int64(j)).Int64()); w <= capacity {
					next = append(next, w)
				}
			}
		}
		sizes = next
	}
	reach := big.NewInt(1) // bit s set: some union of classes has s points
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(capacity+1)), big.NewInt(1))
	var shifted big.Int
	for _, s := range sizes {
		reach.Or(reach, shifted.Lsh(reach, uint(s)))
		reach.And(reach, mask)
		if reach.Bit(capacity) == 1 {
			break
		}
	}
	return float64(reach.BitLen()-1) / math.Ldexp(1, k)
}

// TestOrbitRejectCeiling checks orbitRejectCeiling on orbits worked by
// hand at a = 0.07 (the band's lower end, 93%).
func TestOrbitRejectCeiling(t *testing.T) {
	for _, tc := range []struct {
		d    []float64
		want float64
		why  string
	}{
		{[]float64{0, 0, 0}, 0, "no non-zero mean: one point, nothing to exclude"},
		{[]float64{0.2, -0.4, 0.6, 0}, 0, "K = 3: 8 points, ⌊0.56⌋ = 0"},
		{[]float64{0.2, 0.4, 0.6, 0.8}, 1.0 / 16, "K = 4, distinct values: 16 classes of 1, ⌊1.12⌋ = 1"},
		{[]float64{1, -1, 1, 1}, 1.0 / 16, "K = 4, one value: classes 1 4 6 4 1, ⌊1.12⌋ = 1"},
		{[]float64{1, 1, 1, 1, 1}, 2.0 / 32, "K = 5, one value: classes 1 5 10 10 5 1, ⌊2.24⌋ = 2 (both all-equal-sign points)"},
		{[]float64{1, 1, 1, 1, 1, 1}, 2.0 / 64, "K = 6, one value: classes 1 6 15 20 15 6 1, ⌊4.48⌋ = 4, best 1 + 1 = 2"},
		{[]float64{1, 1, 1, 1, 1, 1, 1}, 8.0 / 128, "K = 7, one value: classes 1 7 21 35 …, ⌊8.96⌋ = 8 = 1 + 7"},
		{[]float64{0.5, 0.5, 0.5, 0.5, 0.5, 1, 1}, 8.0 / 128, "K = 7, values n = 5 and 2: class sizes 1 5 10 × 1 2 1, ⌊8.96⌋ = 8 = 5 + 2 + 1"},
	} {
		if got := orbitRejectCeiling(tc.d, 0.07, floorMaxK); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%v: ceiling %v, want %v (%s)", tc.d, got, tc.want, tc.why)
		}
	}
	d := make([]float64, floorMaxK+1)
	for i := range d {
		d[i] = 1
	}
	if got := orbitRejectCeiling(d, 0.07, floorMaxK); got != 0.07 {
		t.Errorf("K above the search: ceiling %v, want a = 0.07", got)
	}
}

// floorA is the non-coverage the band of TestCoveragePowerGrid allows at
// its lower end (93%), the a of orbitRejectCeiling in coverageFloor.
const floorA = 0.07

// coverageFloor returns, for one run's template means d drawn with no true
// drop, 1 − orbitRejectCeiling(d, floorA): averaged over runs of a cell in
// which every template's mean is symmetric about 0 (drawGrid without het at
// a drop of 0: base and variant of a pair are exchangeable, so given the
// |d_g| the signs are independent fair coins and the run is a uniform draw
// from its orbit), it is a lower bound on the coverage of 0 of any
// interval that reads the template means, does not depend on their order,
// is not randomized and covers at least 93% under every null the sign-flip
// test assumes. And k3 reports whether at most 3 template means are
// non-zero: there the ceiling is 0 whatever the values (⌊0.07·8⌋ = 0), so
// such an interval contains 0 on that run whatever the cell, and the share
// of such runs is a lower bound on its coverage of 0 in every cell with no
// true drop, with a drop that differs between templates too.
func coverageFloor(d []float64) (floor float64, k3 bool) {
	k := 0
	for _, x := range d {
		if x != 0 {
			k++
		}
	}
	return 1 - orbitRejectCeiling(d, floorA, floorMaxK), k <= 3
}
