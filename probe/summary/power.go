package summary

import (
	"slices"

	"github.com/fragility/fragility/probe/stats"
)

// moverWilson returns the MOVER-Wilson interval of the paired drop of
// pairs over G templates, in percentage points (MethodMOVERWilson), or nil
// when it is undefined (fewer than 2 templates). The two accuracies are
// equal-weight means over the templates (stats.Ratio.EqualWeights), so
// their difference is the paired drop of pairedDrop. Each side's effective
// sample size is capped at the Kish effective number of its distinct
// prompts, each weighted by the pairs it appears in (stats.KishN): a
// template's base prompt, shared by all the template's pairs, counts once,
// not once per pair. The unit correlation is the Pearson (phi) correlation
// of the pairs' base and variant outcomes, or, when no pair is discordant,
// Newcombe's continuity-corrected phi (stats.NewcombePhi), so that the
// interval is never of zero width.
func moverWilson(pairs []*pairUnit, G int, conf float64) *Interval {
	base, vari := stats.NewRatio(G), stats.NewRatio(G)
	bw, vw := map[string]float64{}, map[string]float64{}
	xs, ys := make([]float64, len(pairs)), make([]float64, len(pairs))
	var both, bo, vo, bwr float64
	for i, q := range pairs {
		c := float64(q.copies)
		both, bo, vo, bwr = both+q.both/c, bo+q.bo/c, vo+q.vo/c, bwr+q.bw/c
		xs[i], ys[i] = q.b/float64(q.copies), q.v/float64(q.copies)
		base.Add(q.tmpl, xs[i])
		vari.Add(q.tmpl, ys[i])
		bw[q.bkey]++
		vw[q.vkey]++
	}
	r := stats.Pearson(xs, ys)
	if bo == 0 && vo == 0 {
		// No discordant pair: the phi coefficient is 1 and the interval
		// would be [0, 0] at a base accuracy of 50%; Newcombe's
		// continuity-corrected phi keeps it open.
		r = stats.NewcombePhi(both, bo, vo, bwr)
	}
	base, vari = base.EqualWeights(), vari.EqualWeights()
	m, ok := stats.PairedMOVERWilson(base, vari, stats.KishN(mapValues(bw)), stats.KishN(mapValues(vw)), r, conf)
	if !ok {
		return nil
	}
	return &Interval{Lo: 100 * m.Lo, Hi: 100 * m.Hi, Method: MethodMOVERWilson}
}

// mapValues returns the values of m sorted (a deterministic order for sums).
func mapValues(m map[string]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// power returns the minimum-detectable-drop inputs of a variant's pairs:
// the templates, the informative templates (stats.InformativeClusters of
// the right answers per template: solved in some pair on either side), and
// the variance components of the per-pair differences of the informative
// templates (observed, or the planning defaults when they show no
// variation) with their pairs per template, as
// stats.PairedDropMDEInformed takes them (a template never solved has a
// mean difference of exactly 0 and does not move the sign-flip test). The
// drop is the equal-weight mean of the template means (pairedDrop), whose
// variance under the one-way random-effects model (Donner & Klar 2000,
// "Design and Analysis of Cluster Randomization Trials", §5) is
// (1/G²)·Σ_g (σ²_b + σ²_w/n_g) = (σ²_b + σ²_w/m)/G with m the harmonic
// mean of the pairs per template n_g (harmonicSize), so m is that harmonic
// mean. With the original as
// reference the pairs of a template share its one base prompt, so the
// estimators put the base's own variance in the between part, which more
// instances do not divide (stats.FixedBaseComponents). MDEPP is filled in
// once the test's family is known.
func power(pairs []*pairUnit, G int, p Params, drawn bool) *Power {
	groups := make([][]float64, G)
	right := make([]float64, G)
	for _, q := range pairs {
		groups[q.tmpl] = append(groups[q.tmpl], q.d())
		right[q.tmpl] += q.b + q.v
	}
	all, _ := stats.VarianceComponents(groups)
	pw := &Power{Power: p.Power, Templates: all.Clusters, Source: "observed", InformativeTemplates: stats.InformativeClusters(right)}
	groups = informativeGroups(groups, right)
	c, ok := stats.VarianceComponents(groups)
	if c.Clusters > 0 {
		pw.PairsPerTemplate = float64(c.Units) / float64(c.Clusters)
	}
	if h := harmonicSize(groups); h > 0 {
		pw.PairsPerTemplate = h
	}
	if !ok || c.Between+c.Within == 0 {
		c.Between, c.Within, _ = PlanningComponents(drawn)
		pw.Source = "planning defaults"
	}
	pw.Between, pw.Within, pw.ICC, pw.WithinIdentified = c.Between, c.Within, c.ICC(), c.WithinIdentified
	return pw
}

// informativeGroups returns the groups whose right count is above 0, or
// all of them when none is.
func informativeGroups(groups [][]float64, right []float64) [][]float64 {
	var out [][]float64
	for g, x := range groups {
		if right[g] > 0 {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return groups
	}
	return out
}

// harmonicSize returns the harmonic mean of the sizes of the non-empty
// groups, G / Σ_g 1/n_g, or 0 when every group is empty.
func harmonicSize(groups [][]float64) float64 {
	var g, inv float64
	for _, x := range groups {
		if len(x) > 0 {
			g++
			inv += 1 / float64(len(x))
		}
	}
	if g == 0 {
		return 0
	}
	return g / inv
}
