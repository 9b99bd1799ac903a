package summary

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/fragility/fragility/probe/stats"
)

// LevelStream is the PCG stream (second seed word) of the Monte Carlo
// sign-flip draws of the paired difficulty axis, "lvls" in ASCII: apart
// from PermutationStream, so that adding the axis changes no other test.
const LevelStream uint64 = 0x6c766c73

// LevelDifference is the paired difficulty axis of GSM-Symbolic (Mirzadeh
// et al. 2024, §4.4: GSM-P1 and GSM-P2 add one and two clauses to the
// problem of a GSM-Symbolic template) for one model and two levels: over
// the original problems (Trial.IDOrig) that have templates at both levels,
// the accuracy at each and the mean per-original difference. The cluster
// is the original problem. It is the difficulty axis, reported apart from
// robustness: the levels are different problems, not surface variants of
// one.
type LevelDifference struct {
	From string `json:"from"` // the easier level, e.g. "symbolic"
	To   string `json:"to"`   // the harder level, e.g. "p1"
	// Variant is the variant whose trials are compared: "symbolic" (drawn
	// instances at every level) when the run has it at both levels, else
	// "base" (at level symbolic the published original itself, at p1 and
	// p2 a drawn instance).
	Variant   string  `json:"variant"`
	Originals int     `json:"originals"` // original problems with scored trials at both levels
	FromPct   float64 `json:"from_accuracy_pct"`
	ToPct     float64 `json:"to_accuracy_pct"`
	// DropPP is the mean over originals of (accuracy at From − accuracy
	// at To), in percentage points, each original's accuracy the share of
	// its scored trials right; CR1 standard error over the originals and the
	// cluster-t interval on Originals − 1 degrees of freedom (the reported
	// one), Wilson-difference when the originals all give the same value.
	DropPP *Estimate `json:"drop_pp"`
	// Test is the sign-flip test over originals of the per-original
	// differences, Holm-adjusted across the model's level pairs.
	Test *Test `json:"test"`
}

// levelDifferences computes the paired difficulty axis of every model
// (ModelSummary.Levels): every pair of levels, in levelOrder, that shares
// at least two originals. Trials without IDOrig or level are not used.
func (sm *summarizer) levelDifferences() {
	rng := rand.New(rand.NewPCG(uint64(sm.p.Seed), LevelStream))
	for mi := range sm.s.Models {
		m := &sm.s.Models[mi]
		byLevel := map[string]map[string]map[string][2]float64{} // variant -> level -> original -> (right, scored)
		for i := range sm.trials {
			t := &sm.trials[i]
			if t.Skipped() || t.IDOrig == "" || t.Level == "" || sm.modelIdx[modelKey(t)] != mi {
				continue
			}
			if byLevel[t.Variant] == nil {
				byLevel[t.Variant] = map[string]map[string][2]float64{}
			}
			if byLevel[t.Variant][t.Level] == nil {
				byLevel[t.Variant][t.Level] = map[string][2]float64{}
			}
			x := byLevel[t.Variant][t.Level][t.IDOrig]
			if t.Correct {
				x[0]++
			}
			x[1]++
			byLevel[t.Variant][t.Level][t.IDOrig] = x
		}
		var ts []*Test
		for a := 0; a < len(levelOrder); a++ {
			for b := a + 1; b < len(levelOrder); b++ {
				v := "symbolic"
				if byLevel[v][levelOrder[a]] == nil || byLevel[v][levelOrder[b]] == nil {
					v = BaseVariant
				}
				if d := sm.levelDifference(levelOrder[a], levelOrder[b], v, byLevel[v], rng); d != nil {
					m.Levels = append(m.Levels, *d)
					ts = append(ts, m.Levels[len(m.Levels)-1].Test)
				}
			}
		}
		adjust(sm.alpha, "holm", ts...)
	}
}

// levelDifference is one LevelDifference, nil when fewer than two
// originals have scored trials at both levels.
func (sm *summarizer) levelDifference(from, to, variant string, acc map[string]map[string][2]float64, rng *rand.Rand) *LevelDifference {
	var origs []string
	for o := range acc[from] {
		if _, ok := acc[to][o]; ok {
			origs = append(origs, o)
		}
	}
	if len(origs) < 2 {
		return nil
	}
	slices.SortFunc(origs, cmp.Compare)
	ld := &LevelDifference{From: from, To: to, Variant: variant, Originals: len(origs)}
	r := stats.NewRatio(len(origs))
	d := make([]float64, len(origs))
	var kf, kt float64
	for i, o := range origs {
		f, t := acc[from][o], acc[to][o]
		pf, pt := f[0]/f[1], t[0]/t[1]
		kf, kt = kf+pf, kt+pt
		d[i] = pf - pt
		r.Add(i, d[i])
	}
	n := float64(len(origs))
	ld.FromPct, ld.ToPct = 100*kf/n, 100*kt/n
	v, _ := r.Value()
	e := &Estimate{Value: 100 * v, Clusters: len(origs)}
	if inf, ok := r.Influence(); ok {
		if se, g, ok := inf.CR1(); ok && se > 1e-12 {
			se *= 100
			e.SE = &se
			if lo, hi, ok := stats.ClusterT(e.Value, se, g, sm.p.Confidence); ok {
				e.ClusterT = &Interval{Lo: max(-100, lo), Hi: min(100, hi), Method: MethodClusterT}
			}
		}
	}
	e.CI = e.ClusterT
	if e.CI == nil {
		e.Degenerate = true
		e.CI = sm.wilsonDiff(kf, n, kt, n)
	}
	ld.DropPP = e
	res := stats.SignFlip(d, sm.p.PermutationExact, sm.p.PermutationDraws, rng)
	ld.Test = &Test{Method: "sign-flip, exact", P: res.P, PAdjusted: res.P, Adjustment: "none", Family: 1,
		Draws: res.Draws, MinP: res.MinP, Templates: res.Clusters}
	if !res.Exact {
		ld.Test.Method = "sign-flip, Monte Carlo"
	}
	return ld
}
