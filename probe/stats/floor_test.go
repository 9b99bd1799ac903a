package stats

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
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

// onePairFloor returns, for G templates of one pair each whose template
// means (the pairs' differences, −1, 0 or +1) are independent with P(+1) =
// pPlus and P(−1) = pMinus (true drop δ = pPlus − pMinus), the lowest
// coverage of δ that an interval can have there while it (1) reads the
// template means alone, (2) does not depend on their order, (3) is not
// randomized and (4) covers δ with probability at least 1 − a under every
// such distribution with drop δ (the trinomials with πb − πc = δ; pMinus
// the nuisance, searched on a grid of steps+1 points from max(0, −δ) to
// (1 − δ)/2). By (1) and (2) the interval is a function of the counts (b,
// c) of +1 and −1, by (3) it excludes δ on a set R of them; the floor is 1
// − max P(R) over the sets R with P_θ(R) ≤ a at every grid point θ (an
// integer programme over the outcomes, solved by depth-first search over
// those whose own probability stays within a everywhere; a finer grid can
// only shrink the feasible sets, so the floor is a lower bound). ok is false
// when more than maxCand outcomes qualify (the search is skipped).
func onePairFloor(G int, pPlus, pMinus, a float64, steps, maxCand int) (floor float64, ok bool) {
	delta := pPlus - pMinus
	lo, hi := max(0, -delta), (1-delta)/2
	type outcome struct {
		pF   float64
		pNul []float64
	}
	lgG, _ := math.Lgamma(float64(G + 1))
	logP := func(b, c int, pb, pc float64) float64 {
		p0 := 1 - pb - pc
		lb, _ := math.Lgamma(float64(b + 1))
		lc, _ := math.Lgamma(float64(c + 1))
		l0, _ := math.Lgamma(float64(G - b - c + 1))
		term := func(n int, p float64) float64 {
			if n == 0 {
				return 0
			}
			if p <= 0 {
				return math.Inf(-1)
			}
			return float64(n) * math.Log(p)
		}
		return lgG - lb - lc - l0 + term(b, pb) + term(c, pc) + term(G-b-c, p0)
	}
	var cands []outcome
	for b := 0; b <= G; b++ {
		for c := 0; b+c <= G; c++ {
			o := outcome{pF: math.Exp(logP(b, c, pPlus, pMinus)), pNul: make([]float64, steps+1)}
			worst := 0.0
			for i := range o.pNul {
				pc := lo + (hi-lo)*float64(i)/float64(steps)
				o.pNul[i] = math.Exp(logP(b, c, pc+delta, pc))
				worst = max(worst, o.pNul[i])
			}
			if worst <= a {
				cands = append(cands, o)
			}
		}
	}
	if len(cands) > maxCand {
		return 0, false
	}
	slices.SortFunc(cands, func(x, y outcome) int { return cmp.Compare(y.pF, x.pF) })
	rest := make([]float64, len(cands)+1) // rest[i]: P_F of cands[i:]
	for i := len(cands) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + cands[i].pF
	}
	best := 0.0
	var search func(i int, got float64, load []float64)
	search = func(i int, got float64, load []float64) {
		best = max(best, got)
		if i == len(cands) || got+rest[i] <= best {
			return
		}
		next := make([]float64, len(load))
		fits := true
		for j := range load {
			next[j] = load[j] + cands[i].pNul[j]
			fits = fits && next[j] <= a
		}
		if fits {
			search(i+1, got+cands[i].pF, next)
		}
		search(i+1, got, load)
	}
	search(0, 0, make([]float64, steps+1))
	return 1 - best, true
}

// onePairProbs returns P(+1) and P(−1) of a template's paired difference in
// drawGrid's cell c with one pair per template: with p ~ Beta (mean μ,
// Var p = ρμ(1−μ)), loss share r and gain share s independent of p with
// means A and B (drawGrid), and the variant's uniform the base's own with
// probability 0.7, P(+1) = 0.7·μA + 0.3·(μ − E[p²](1−A) − (μ − E[p²])B)
// and P(−1) = 0.7·(1−μ)B + 0.3·((μ − E[p²])(1−A) + (1 − 2μ + E[p²])B);
// their difference is δ = μA − (1−μ)B.
func onePairProbs(c gridCell) (pPlus, pMinus float64) {
	A, B := c.delta/c.mu, 0.0
	if c.het {
		B = max(0, min(0.05, (c.mu/2-c.delta)/(1-c.mu)))
		A = (c.delta + (1-c.mu)*B) / c.mu
	}
	ep2 := c.mu*c.mu + c.rho*c.mu*(1-c.mu)
	pPlus = 0.7*c.mu*A + 0.3*(c.mu-ep2*(1-A)-(c.mu-ep2)*B)
	pMinus = 0.7*(1-c.mu)*B + 0.3*((c.mu-ep2)*(1-A)+(1-2*c.mu+ep2)*B)
	return pPlus, pMinus
}

// TestOnePairFloor checks onePairFloor on a case worked by hand and
// onePairProbs against drawGrid's draws.
func TestOnePairFloor(t *testing.T) {
	// G = 1, δ = 0: the nulls are πb = πc ∈ [0, ½]; the outcome +1 has
	// probability up to ½ > a, so no set qualifies and the floor is 1.
	if f, ok := onePairFloor(1, 0.1, 0.1, 0.07, 100, 20); !ok || f != 1 {
		t.Errorf("G = 1: floor %v (ok %v), want 1", f, ok)
	}
	// G = 4, δ = 0, nulls πb = πc = t ∈ [0, ½]: the outcomes whose own
	// null probability stays within 0.07 are (b, c) = (4, 0) and (0, 4)
	// (t⁴ ≤ 1/16) and (3, 0) and (0, 3) (4t³(1 − 2t) ≤ 0.0527 at t = 3/8);
	// any two exceed 0.07 at some t (2t⁴ = 0.125 at ½; t³(4 − 7t) = 0.0787
	// at 3/7; 8t³(1 − 2t) = 0.105 at 3/8), so R is one outcome, the likeliest
	// under F = (¼, ¼, ½): (3, 0) or (0, 3), 4·(¼)³·½ = 1/32.
	if f, ok := onePairFloor(4, 0.25, 0.25, 0.07, 400, 30); !ok || math.Abs(f-(1-1.0/32)) > 1e-12 {
		t.Errorf("G = 4: floor %v (ok %v), want %v", f, ok, 1-1.0/32)
	}
	c := gridCell{G: 1, m: 1, mu: 0.6, rho: 0.5, delta: 0.1, het: true}
	pp, pm := onePairProbs(c)
	rng := rand.New(rand.NewPCG(4, 4))
	beta := &distuv.Beta{Alpha: c.mu * (1 - c.rho) / c.rho, Beta: (1 - c.mu) * (1 - c.rho) / c.rho, Src: rng}
	const n = 200000
	var plus, minus float64
	for range n {
		d := drawGrid(rng, c, beta).dbar[0]
		plus += b2f(d > 0)
		minus += b2f(d < 0)
	}
	if se := math.Sqrt(pp * (1 - pp) / n); math.Abs(plus/n-pp) > 4*se || math.Abs(minus/n-pm) > 4*se || math.Abs(pp-pm-c.delta) > 1e-12 {
		t.Errorf("onePairProbs %v %v, drawn %v %v", pp, pm, plus/n, minus/n)
	}
}
