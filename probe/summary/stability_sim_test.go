package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fragility/fragility/probe/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// stabilityCell is one cell of the stability simulation: G templates of m
// answer-keeping pairs, true changed share mu (a fraction) and
// intra-template correlation rho of the 0/1 "answer changed" outcomes.
type stabilityCell struct {
	G, m    int
	mu, rho float64
}

func (c stabilityCell) String() string {
	return fmt.Sprintf("G=%d m=%d share=%.0f%% rho=%.1f", c.G, c.m, 100*c.mu, c.rho)
}

// stabilityResult is what one cell measured, as shares of its runs: the
// coverage of the changed share's interval (changedInterval) at 95% and at
// the verdict's Bonferroni level 1 − α/(k·M) (k = 2 variants, M = 1 model),
// the share of runs where that interval was Wilson (the share's SE was 0),
// its one-sided misses (lower bound above the truth, upper bound below),
// and the stability verdict's answers (stabilityVerdict over k = 2
// variants, both at the cell's true share).
type stabilityResult struct {
	cover95, coverB     float64
	wilson              float64
	missLo, missHi      float64 // Bonferroni interval: lo > truth, hi < truth
	miss95Lo            float64 // 95% interval: lo > truth
	unstable, stable    float64 // the verdict over 2 variants
	runs                int
	confB, oneSidedBonf float64 // 1 − α/(kM) and α/(2kM)
}

// drawChanged draws one variant's answer-keeping pairs of cell c: template
// g changes each pair's answer with probability p_g ~ Beta(μ(1−ρ)/ρ,
// (1−μ)(1−ρ)/ρ), the beta-binomial whose 0/1 outcomes have intra-template
// correlation ρ and mean μ (a Beta draw that underflows is a Bernoulli(μ)
// p_g, its ρ → 1 limit).
func drawChanged(rng *rand.Rand, c stabilityCell, beta *distuv.Beta) []*pairUnit {
	pairs := make([]*pairUnit, 0, c.G*c.m)
	for g := range c.G {
		p := beta.Rand()
		if math.IsNaN(p) {
			p = b2f(rng.Float64() < c.mu)
		}
		for range c.m {
			pairs = append(pairs, &pairUnit{tmpl: g, copies: 1, sameAnswer: true, answered: 1, changed: b2f(rng.Float64() < p)})
		}
	}
	return pairs
}

// simSummarizer is a summarizer over G templates with the default
// parameters (greedy decoding), as Summarize sets it up, for one simulated
// run.
func simSummarizer(G int) *summarizer {
	p, _ := checkParams(Params{})
	describeMethods(&p)
	sm := &summarizer{p: p, alpha: p.Alpha, G: G}
	sm.es = &estimates{p: &sm.p}
	return sm
}

// simulateStability runs cell c runs times from a fixed seed through the
// summary's own code: answerChanged (the share and its CR1 SE),
// changedInterval and stabilityVerdict.
func simulateStability(c stabilityCell, runs int, seed uint64) stabilityResult {
	rng := rand.New(rand.NewPCG(seed, 30))
	beta := &distuv.Beta{Alpha: c.mu * (1 - c.rho) / c.rho, Beta: (1 - c.mu) * (1 - c.rho) / c.rho, Src: rng}
	const k, M = 2, 1
	res := stabilityResult{runs: runs}
	truth := 100 * c.mu
	in := func(iv *Interval) bool { return iv != nil && iv.Lo <= truth+1e-9 && truth <= iv.Hi+1e-9 }
	for range runs {
		sm := simSummarizer(c.G)
		res.confB = 1 - sm.alpha/float64(k*M)
		res.oneSidedBonf = sm.alpha / float64(2*k*M)
		m := &ModelSummary{}
		for v := range k {
			r, _ := sm.answerChanged(drawChanged(rng, c, beta))
			m.Variants = append(m.Variants, VariantSummary{Variant: fmt.Sprintf("v%d", v), Paired: &Paired{Pairs: r.Pairs, AnswerChanged: r}})
			if v > 0 {
				continue
			}
			iv95 := changedInterval(r, 0.95)
			res.cover95 += b2f(in(iv95))
			res.miss95Lo += b2f(iv95 != nil && iv95.Lo > truth+1e-9)
			iv := changedInterval(r, res.confB)
			res.coverB += b2f(in(iv))
			res.wilson += b2f(iv != nil && iv.Method == MethodWilson)
			res.missLo += b2f(iv != nil && iv.Lo > truth+1e-9)
			res.missHi += b2f(iv != nil && iv.Hi < truth-1e-9)
		}
		// The former verdict read these intervals against the margin
		// (the rule TestStabilityVerdictPlacebo compares with).
		unst, stab := false, true
		for _, v := range m.Variants {
			iv := changedInterval(v.Paired.AnswerChanged, res.confB)
			unst = unst || iv != nil && iv.Lo > UnstableAnswerPct
			stab = stab && iv != nil && iv.Hi < UnstableAnswerPct
		}
		res.unstable += b2f(unst)
		res.stable += b2f(stab)
	}
	f := float64(runs)
	res.cover95, res.coverB, res.wilson = res.cover95/f, res.coverB/f, res.wilson/f
	res.miss95Lo, res.missLo, res.missHi, res.unstable, res.stable = res.miss95Lo/f, res.missLo/f, res.missHi/f, res.unstable/f, res.stable/f
	return res
}

// TestStabilityCoverageGrid is the coverage simulation of answer
// stability's interval (changedInterval, MethodKornGraubard) and the error
// rates of the stability verdict (stabilityVerdict), through the summary's
// own code (answerChanged, changedInterval, stabilityVerdict): 6, 20 and 68
// templates × 1, 5 and 10 answer-keeping pairs, true changed share 1, 3
// (the margin, UnstableAnswerPct), 10, 30 and 70%, intra-template
// correlation ρ 0.1, 0.5 and 0.9 (drawChanged's beta-binomial): 135 cells
// of 2,000 runs, fixed seeds, each run two variants of the cell (k = 2, M =
// 1: the verdict's intervals at 1 − α/(kM) = 97.5%); 35–40 s on a shared
// 2-core machine.
//
// Before (cluster-t on the share's CR1 SE, Wilson over the pairs when the
// SE is 0) the 95% interval covered 49.8–100% (median 95.0%; below 93% in
// 37 of the 135 cells): 49.8% at 20 templates × 10 pairs, a 3% share and
// ρ = 0.9 (no change observed in half the runs, and Wilson over 200 pairs
// reaches only 1.9%), 50.4% at 6 × 10, 10% and ρ = 0.9, 53.9% at 68 × 10,
// 1% and ρ = 0.9; and at a true share equal to the margin the verdict said
// "answers stable" in up to 26.1% of runs (20 × 10, ρ = 0.9; it may in
// 1.25%). Intermediate steps, measured on this grid: Wilson on the
// Korn–Graubard effective sample size (n* = p(1−p)/v, at most n; t on G − 1
// degrees of freedom) covered 88.3–100% (7 cells below 93%), and its lower
// bound, too high with few changes, made the verdict say "answers
// unstable" at the margin in up to 4.7% of runs (2.5% allowed); their
// Clopper–Pearson original fixed the lower side (at most 1.4%) but left
// 90.6% at 68 × 10, 1%, ρ = 0.5 (4 cells below 93%): a single changed pair
// in one template cannot show the clustering, so n* = n there. Hence two
// additions, each measured here: the t factor on the variance's
// Satterthwaite degrees of freedom (varianceDF, near 1 when one template
// holds the changes) instead of G − 1, and n* at least Kish's effective
// number of templates (the design effect's upper bound: each template one
// unit), which is n* when the SE is 0.
//
// Measured at these seeds, and asserted (each band widened by 2 Monte Carlo
// SE: 1.0 point near 95%, 0.7 near 97.5%, 0.5 near 1.25%, 0.7 near 2.5%):
//
//   - the 95% interval covers 95.9–100% in every cell (median 98.7%; at
//     shares of 30–70% 95.9–100%, at 1–3% 97.6–100%): asserted ≥ 95%. It is
//     conservative at small shares by design: when few templates hold the
//     changes the data cannot say how clustered they are, and the interval
//     takes the worst case. With no change at all its upper bound is the
//     Clopper–Pearson bound on G templates, 1 − (α/2)^(1/G): at 68
//     templates 5.3% at 95% and 6.2% at 97.5%, so "answers stable" (every
//     upper bound below 3%) needs 122 templates without a change with one
//     answer-keeping variant (144 with two), whatever the pairs per
//     template; in this grid it was said in at most 2.5% of runs at a true
//     share of 1% and never at 3% or more.
//   - the Bonferroni interval (97.5%) covers 97.9–100% (median 99.5%):
//     asserted ≥ 97.5%.
//   - at a true share equal to the margin (3%): the Bonferroni interval's
//     lower bound lies above it in at most 1.05% of runs and its upper
//     bound below it in at most 0.65% (each may in α/(2kM) = 1.25%); the
//     verdict over the two variants says "answers unstable" in at most
//     2.35% (either variant may: at most 2 × 1.25%) and "answers stable"
//     in none (both upper bounds must be below: at most 1.25%).
//   - power where the instability is plain: at a true share of 70% the
//     verdict says "answers unstable" in 99.9–100% of runs (asserted ≥
//     99%); at 30%, 67–100% (6 templates with ρ ≥ 0.5 the least).
func TestStabilityCoverageGrid(t *testing.T) {
	const runs = 2000
	se := func(p float64) float64 { return 2 * math.Sqrt(p*(1-p)/runs) }
	for gi, G := range []int{6, 20, 68} {
		for mi, m := range []int{1, 5, 10} {
			for ui, mu := range []float64{0.01, UnstableAnswerPct / 100, 0.10, 0.30, 0.70} {
				for ri, rho := range []float64{0.1, 0.5, 0.9} {
					c := stabilityCell{G, m, mu, rho}
					t.Run(fmt.Sprint(c), func(t *testing.T) {
						t.Parallel() // each cell has its own seed: the same numbers in any order
						r := simulateStability(c, runs, uint64(((gi*3+mi)*5+ui)*3+ri))
						t.Logf("%-30s cover95 %.3f (lo>%.4f) coverB %.3f miss lo %.4f hi %.4f verdict unstable %.4f stable %.4f",
							c, r.cover95, r.miss95Lo, r.coverB, r.missLo, r.missHi, r.unstable, r.stable)
						if r.cover95 < 0.95-se(0.95) {
							t.Errorf("%s: 95%% coverage %.3f", c, r.cover95)
						}
						if r.coverB < r.confB-se(r.confB) {
							t.Errorf("%s: coverage %.3f at %.3f", c, r.coverB, r.confB)
						}
						if mu == UnstableAnswerPct/100 {
							one, both := r.oneSidedBonf, 2*r.oneSidedBonf
							if r.missLo > one+se(one) || r.missHi > one+se(one) {
								t.Errorf("%s: one-sided misses %.4f below, %.4f above (each may %.4f)", c, r.missLo, r.missHi, one)
							}
							if r.unstable > both+se(both) || r.stable > one+se(one) {
								t.Errorf("%s: at the margin the verdict says unstable in %.4f, stable in %.4f", c, r.unstable, r.stable)
							}
						}
						if mu == 0.70 && r.unstable < 0.99 {
							t.Errorf("%s: a 70%% changed share called unstable in only %.3f of runs", c, r.unstable)
						}
					})
				}
			}
		}
	}
}

// TestChangedIntervalHandCases: with no change in 20 templates × 5 pairs
// the interval is Clopper–Pearson on the 20 templates, [0, 1 −
// 0.025^(1/20)] = [0, 16.8%], not on the 100 pairs (3.6%); the
// Satterthwaite degrees of freedom are 1 when one template carries the
// variance and G − 1 when the templates contribute evenly.
func TestChangedIntervalHandCases(t *testing.T) {
	sm := simSummarizer(20)
	var pairs []*pairUnit
	for g := range 20 {
		for range 5 {
			pairs = append(pairs, &pairUnit{tmpl: g, copies: 1, sameAnswer: true, answered: 1})
		}
	}
	r, _ := sm.answerChanged(pairs)
	iv := changedInterval(r, 0.95)
	if r.KishTemplates != 20 || iv == nil || iv.Lo != 0 || math.Abs(iv.Hi-100*(1-math.Pow(0.025, 1.0/20))) > 1e-9 || iv.Method != MethodKornGraubard {
		t.Errorf("no change: Kish %v, interval %+v", r.KishTemplates, iv)
	}
	one := varianceDF(stabInfluence([]float64{1, 0, 0, 0, 0}))
	even := varianceDF(stabInfluence([]float64{1, -1, 1, -1, 1}))
	if math.Abs(one-1) > 1e-12 || math.Abs(even-4) > 1e-12 || varianceDF(stabInfluence([]float64{0, 0})) != 0 {
		t.Errorf("varianceDF: one template %v, even %v", one, even)
	}
}

func stabInfluence(e []float64) stats.Influence {
	p := make([]bool, len(e))
	for i := range p {
		p[i] = true
	}
	return stats.Influence{E: e, Present: p}
}
