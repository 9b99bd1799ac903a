package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simPairRatios draws one simulated run of the probe's paired design: g
// templates, m pairs each; template j has base accuracy p_j ~ U(0.55,
// 0.95) and a drop δ_j = delta + U(−spread, spread). The base prompt of a
// template is ONE fixed prompt (its outcome drawn once, shared by the
// template's m pairs); each variant instance shares the base's uniform draw
// with probability 0.7 (answers to one problem are correlated), as in
// simTemplateDrops. It returns the base and variant outcomes as Ratios over
// the templates and the Pearson (phi) correlation of the pairs.
func simPairRatios(rng *rand.Rand, g, m int, delta, spread float64) (base, variant Ratio, corr float64) {
	base, variant = NewRatio(g), NewRatio(g)
	var xs, ys []float64
	for j := range g {
		p := 0.55 + 0.4*rng.Float64()
		q := p - (delta + spread*(2*rng.Float64()-1))
		u0 := rng.Float64()
		for range m {
			v := u0
			if rng.Float64() > 0.7 {
				v = rng.Float64()
			}
			xs, ys = append(xs, b2f(u0 < p)), append(ys, b2f(v < q))
			base.Add(j, xs[len(xs)-1])
			variant.Add(j, ys[len(ys)-1])
		}
	}
	return base, variant, Pearson(xs, ys)
}

// simConcentrated draws a run where the drop sits in k of the g templates:
// every template has base accuracy p_j ~ U(0.55, 0.95); in k of them the
// variant loses drop (a fraction), in the others nothing. Same fixed base
// and correlation as simPairRatios. The true drop is k·drop/g.
func simConcentrated(rng *rand.Rand, g, m, k int, drop float64) (base, variant Ratio, corr float64) {
	base, variant = NewRatio(g), NewRatio(g)
	var xs, ys []float64
	for j := range g {
		p := 0.55 + 0.4*rng.Float64()
		q := p
		if j < k {
			q = p - drop
		}
		u0 := rng.Float64()
		for range m {
			v := u0
			if rng.Float64() > 0.7 {
				v = rng.Float64()
			}
			xs, ys = append(xs, b2f(u0 < p)), append(ys, b2f(v < q))
			base.Add(j, xs[len(xs)-1])
			variant.Add(j, ys[len(ys)-1])
		}
	}
	return base, variant, Pearson(xs, ys)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// coverage returns the share of runs in which the 95% MOVER-Wilson
// interval (base capped at one distinct prompt per template) and the
// cluster-t interval of the paired drop cover truth.
func coverage(seed uint64, runs int, truth float64, draw func(rng *rand.Rand) (Ratio, Ratio, float64)) (mover, clusterT float64) {
	rng := rand.New(rand.NewPCG(seed, 14))
	var a, c int
	for range runs {
		br, vr, r := draw(rng)
		if m, ok := PairedMOVERWilson(br, vr, float64(br.Clusters()), math.Inf(1), r, 0.95); ok && m.Lo <= truth && truth <= m.Hi {
			a++
		}
		ib, _ := br.Influence()
		iv, _ := vr.Influence()
		se, g, _ := ib.Combine(1, iv, -1).CR1()
		x, _ := br.Value()
		y, _ := vr.Value()
		if lo, hi, ok := ClusterT(x-y, se, g, 0.95); ok && lo <= truth && truth <= hi {
			c++
		}
	}
	return float64(a) / float64(runs), float64(c) / float64(runs)
}

// TestMOVERWilsonCoverage simulates the probe's paired design (one fixed
// base prompt per template; simPairRatios with a true drop of 15 pp and a
// spread of ±15 pp between templates) and measures how often the 95%
// MOVER-Wilson interval of the paired drop covers the true drop, next to
// cluster-t. With one instance per template (as `make demo` runs) it must
// cover in 93–98% of runs at 6 templates and 93–97% at 20 and 50, where
// cluster-t covers about 81% at 6. With 5 instances per template at 6
// templates neither reaches 95% (a template's base is one 0/1 outcome for
// all its pairs); the test bounds MOVER-Wilson at 87–94% there, what README
// "How the numbers are read" states. Fixed seed; about a second.
func TestMOVERWilsonCoverage(t *testing.T) {
	const runs = 4000
	for _, c := range []struct {
		G, m   int
		lo, hi float64
	}{{6, 1, 0.93, 0.98}, {20, 1, 0.93, 0.97}, {50, 1, 0.93, 0.97}, {6, 5, 0.87, 0.94}} {
		mw, ct := coverage(uint64(c.G*100+c.m), runs, 0.15, func(rng *rand.Rand) (Ratio, Ratio, float64) {
			return simPairRatios(rng, c.G, c.m, 0.15, 0.15)
		})
		t.Logf("G = %d, m = %d, drop 15 pp: MOVER-Wilson coverage %.4f, cluster-t %.4f (%d runs)", c.G, c.m, mw, ct, runs)
		if mw < c.lo || mw > c.hi {
			t.Errorf("G = %d, m = %d: MOVER-Wilson coverage %.4f outside [%.2f, %.2f]", c.G, c.m, mw, c.lo, c.hi)
		}
		if c.G == 6 && c.m == 1 && ct > mw-0.05 {
			t.Errorf("G = 6, m = 1: cluster-t %.4f is not well below MOVER-Wilson %.4f: the reason for MOVER-Wilson is gone", ct, mw)
		}
	}
}

// TestMOVERWilsonConcentrated measures the known weak spot: 10 templates
// of 10 instances whose drop sits in 2 templates (50 pp each, none in the
// others: a true drop of 10 pp). MOVER-Wilson covers about 91% there
// (cluster-t about 92%), what README states; the test bounds it at 88–94%.
// Fixed seed; under a second.
func TestMOVERWilsonConcentrated(t *testing.T) {
	const runs = 4000
	mw, ct := coverage(1010, runs, 0.10, func(rng *rand.Rand) (Ratio, Ratio, float64) {
		return simConcentrated(rng, 10, 10, 2, 0.5)
	})
	t.Logf("G = 10, m = 10, drop in 2 templates: MOVER-Wilson coverage %.4f, cluster-t %.4f (%d runs)", mw, ct, runs)
	if mw < 0.88 || mw > 0.94 {
		t.Errorf("MOVER-Wilson coverage %.4f outside [0.88, 0.94]", mw)
	}
}
