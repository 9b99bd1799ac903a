package summary

import (
	"fmt"

	"github.com/fragility/fragility/probe/stats"
)

// BaseVariant is the variant every other variant is compared with.
const BaseVariant = "base"

// Defaults of Params. The thresholds are what the narrative's wording rests
// on; Summarize records the ones it used in Summary.Params.
const (
	// DefaultBootstrapResamples is the number B of cluster-bootstrap
	// resamples. Percentile intervals at 95% need B of the order of 1000 or
	// more (Efron & Tibshirani 1993, An Introduction to the Bootstrap, §19.3).
	DefaultBootstrapResamples = 2000
	// MaxBootstrapResamples is the most resamples a run or report takes:
	// at 10^5 the Monte Carlo error of a 2.5% quantile is already far
	// below an interval's width, and the resampled statistics are held in
	// memory (B of them per statistic).
	MaxBootstrapResamples = 100_000
	// DefaultConfidence is the confidence level of every interval (0.95);
	// tests are at level α = 1 − confidence.
	DefaultConfidence = 0.95
	// DefaultPower is the power at which the minimum detectable drop is
	// stated (0.8).
	DefaultPower = 0.8
	// DefaultFewTemplates is the number of templates (clusters) below which
	// the cluster-t interval, not the bootstrap percentile interval, is the
	// reported one: with few clusters the percentile cluster bootstrap
	// under-covers more (in the simulation of probe/stats
	// TestClusterTCoverageG6 at 6 templates, for a nominal 95%: 85% against
	// 94% for cluster-t when pairs are independent, and in this probe's
	// design, one fixed base prompt per template, 76% against 90%; Cameron
	// & Miller 2015, §VI, discuss "few clusters" as roughly 20 to 50). For
	// a paired drop it is where the inverted sign-flip test on the template
	// means replaces MOVER-Wilson (PairedDropCoverageMeasured).
	DefaultFewTemplates = 20

	// NegligibleDropPP is the margin, in percentage points of accuracy, under
	// which a drop does not matter: a drop whose interval's upper bound is
	// below it is "no detectable drop". On the sizes this probe runs one or
	// two items move accuracy by about this much.
	NegligibleDropPP = 3.0
	// StrongDropPP is the drop, in percentage points, from which a drop is
	// strong: "strong fragility signal" needs the interval's lower bound at
	// or above it. GSM-Symbolic reports drops of this order for the weaker
	// models on its symbolic variant, and far larger ones on no-op clauses.
	StrongDropPP = 10.0
	// EntropyShiftThresholdBits is the floor of the entropy shifts' margin
	// (Shift.Threshold), in bits per token: the margin is the larger of it
	// and ShiftMarginSD between-template standard deviations. 0.02 bits is
	// a floor, not a measured effect size (twenty steps of the printed
	// resolution, 0.001 bits): it decides only when templates hardly
	// differ in the measure.
	EntropyShiftThresholdBits = 0.02
	// DDCMarginShiftThreshold is the floor of the DDC-margin shift's margin
	// (a difference of cosines, unitless), as EntropyShiftThresholdBits.
	DDCMarginShiftThreshold = 0.01

	// PlanningOutcomeVariance and PlanningDropVariance are the assumptions
	// behind the planning defaults below. They are not measured (no run in
	// this repository has the templates to estimate them well: a pilot and
	// `fragility plan --from RUN_DIR` replace them); they are chosen so that
	// a plan errs towards more templates.
	//
	// PlanningOutcomeVariance is E_g[p_g(1 − p_g)], the Bernoulli variance
	// of one prompt's 0/1 outcome within its template, for the base prompt
	// and a variant instance alike: 0.20 is a template whose instances the
	// model answers right about 72% (or 28%) of the time; the most it can
	// be is 0.25, a template right half the time; a model that gets each
	// template all right or all wrong has 0. Source: the bound p(1 − p) ≤
	// 1/4 of a Bernoulli variance (Casella & Berger 2002, Statistical
	// Inference, §3.2), taken near its top, as sample-size planning does
	// for a proportion with no pilot (Donner & Klar 2000, Design and
	// Analysis of Cluster Randomization Trials, §5.2: use conservative
	// values when no estimate exists).
	PlanningOutcomeVariance = 0.20
	// PlanningDropVariance is Var_g(δ_g), how much the true drop differs
	// between templates: 0.05 is a standard deviation of about 22 pp.
	// Source: an assumption scaled to GSM-Symbolic (Mirzadeh et al. 2024,
	// arXiv:2410.05229), whose drops range from about 0 to 65 pp across
	// models and variants (abstract: "up to 65%" on GSM-NoOp); no
	// per-template spread of drops is published, and none of this
	// repository's runs has the templates to estimate it (`fragility plan
	// --from RUN_DIR` replaces it by the run's estimate).
	PlanningDropVariance = 0.05

	// PlanningBetween and PlanningWithin are the variance components, in
	// squared fractions, of a paired 0/1 difference (base right − variant
	// right) assumed when a run shows no variation to estimate them from, and
	// by `fragility plan` without --from (or --between/--within). They follow
	// stats.FixedBaseComponents: a template's base prompt is ONE fixed prompt
	// (its copies collapse), shared by all of the template's pairs, so its
	// own Bernoulli variance stays in the between-template part, which more
	// instances do not divide: σ²_b = PlanningDropVariance +
	// PlanningOutcomeVariance = 0.25, while only the variant instances'
	// variance, σ²_w = PlanningOutcomeVariance = 0.20, is divided by the
	// instances m. The minimum detectable drop at 80% power and α = 0.05 is
	// then about 77 pp at 6 templates, 36 pp at 20 and 22 pp at 50 with 5
	// instances, and more instances barely lower it (√((0.25 + 0.20/m)/G)).
	PlanningBetween = PlanningDropVariance + PlanningOutcomeVariance
	PlanningWithin  = PlanningOutcomeVariance

	// The planning assumptions of the drawn design (run --reference drawn,
	// the default): pair i is a drawn problem and the same problem with one
	// factor changed, so each pair has its own reference. For the per-pair
	// difference d = y_ref − y_var of two 0/1 outcomes with accuracy μ
	// whose correlation within a pair is ρ, and a true drop that differs
	// between templates with standard deviation τ, the one-way components
	// are
	//
	//	σ²_b = τ²,   σ²_w = Var(y_ref − y_var) = 2(1 − ρ)μ(1 − μ)
	//
	// (Var(X − Y) = Var X + Var Y − 2Cov(X, Y), Casella & Berger 2002,
	// Statistical Inference, Thm. 4.5.6, with Cov = ρμ(1 − μ)): the
	// reference's own noise is now within templates, where instances
	// divide it. PlanningAccuracy μ = 0.5 takes μ(1 − μ) at its maximum,
	// 1/4 (Casella & Berger §3.2; Donner & Klar 2000, §5.2: conservative
	// values when no estimate exists). PlanningPairCorrelation ρ = 0.5 is
	// an assumption, not a measurement: the same problem asked twice
	// under greedy decoding gives ρ = 1, and a change that leaves the
	// answer as it is should leave most outcomes as they are; 0.5 errs
	// towards more templates. PlanningDropSD τ = 0.10 (10 pp) is an
	// assumption about how much the drop differs between templates; no
	// per-template spread is published. `fragility plan --from RUN_DIR`
	// replaces all three by a run's estimate.
	PlanningAccuracy        = 0.5
	PlanningPairCorrelation = 0.5
	PlanningDropSD          = 0.10
	PlanningDrawnBetween    = PlanningDropSD * PlanningDropSD
	PlanningDrawnWithin     = 2 * (1 - PlanningPairCorrelation) * PlanningAccuracy * (1 - PlanningAccuracy)

	// BootstrapStream is the PCG stream (second seed word) of the bootstrap
	// generator, rand.NewPCG(uint64(Params.Seed), BootstrapStream): the
	// bootstrap draws are independent of the run order drawn from the same
	// seed. It is "boot" in ASCII.
	BootstrapStream uint64 = 0x626f6f74
	// PermutationStream is the PCG stream of the Monte Carlo sign-flip
	// draws (used above stats.ExactMaxClusters templates), "perm" in ASCII.
	PermutationStream uint64 = 0x7065726d
)

// PairedDropCoverageMeasured is what the coverage and power simulation of
// probe/stats (TestCoveragePowerGrid: the drawn-reference design, 324
// cells of 400 runs, true drop known) measured for the reported 95%
// interval of a paired drop and for the verdict, a sentence per statistic
// (what, how it is computed, what the simulation measured); Summarize
// records it in Params.PairedDropCoverage and the narrative's Methods
// section prints each sentence as a line when the few-template notice
// points to it. The earlier design, one fixed base prompt per template, is
// measured in TestMOVERWilsonCoverage (MOVER-Wilson 90.8% at 6 templates
// × 5 instances).
const PairedDropCoverageMeasured = "Simulation (probe/stats TestCoveragePowerGrid), the drawn-reference design: 6, 20 and 68 templates × 1, 5 and 10 pairs; base accuracy 20, 60 and 80%; within-template correlation 0.1 to 0.9; true drop 0 or 10 pp, equal or differing between templates; 400 runs per cell, 1,600 where the power is compared at 20 templates; Monte Carlo SE 1.1 points. The reported 95% interval of the paired drop from 20 templates (the inverted sign-flip test randomized at ties): covered the true drop in 92.7–99.8% of runs (median 95.6%), 92.7–97.8% (median 95.3%) in the 146 cells where template means are not all equal in more than 2% of runs and the skew-corrected upper limit does not bind. The same interval at base accuracy 20% with strongly clustered templates (correlation 0.5 or more) and a drop: 94.4–99.3%, where the skew-corrected upper limit closes a gap of the sign-flip inversion alone (86.2–96.5%). The same interval where every template mean is equal in more than 2% of runs (MOVER-Wilson reported there: with every mean 0 no interval of positive width leaves 0 out): 94.3–99.8%. The non-randomized test (every tie counted against the drop) had covered 93.2–100% (median 97.3%), above 97% in 29 of the 54 cells with no drop. False signals from 20 templates (the interval excludes 0 exactly when the sign-flip test rejects): 0.3–4.5% of runs with no drop (median 2.2%). The interval below 20 templates (MOVER-Wilson, its lower limit at most the non-randomized inverted sign-flip test's): conservative with one pair per template (99.8–100%), 94.0–100% with 5 or 10 (median 99.4%). The coverage floor at 6 templates with one pair per template or the same drop of 0 in every template: no exact interval on the template means that tosses no coin could cover less than 95.7–100%. The verdict's power from 20 templates (the printed minimum detectable drop 9–11 pp, a true drop of 10 pp): it found the drop in 72.1–89.5% of runs (median 82.5%; 80% intended). The verdict's power against its prediction, where the predicted power was 50% or more: within −4.6 to +9.3 points with 5 or 10 pairs per template (median +3.7 at 20 templates, where the prediction is conservative; −0.1 to +1.8 at 68), within −6.1 to +5.3 with one pair, where the minimum detectable drop is the randomized sign test's."

// Values of Paired.IntervalCoverage, from the measurements stated in
// PairedDropCoverageMeasured.
const (
	// CoverageConservative: MOVER-Wilson (MethodMOVERWilson or
	// MethodMOVERWilsonSignFlip) reported with one pair per template or
	// with every template mean equal; it covered 99.8–100%.
	CoverageConservative = "conservative"
	// CoverageApproximate: MOVER-Wilson with the sign-flip lower limit
	// below Params.FewTemplates templates with more pairs per template
	// (94.0–100%, median 99.4%, in the simulated cells; with so few
	// templates coverage rests on how far the run resembles them).
	CoverageApproximate = "approximate"
	// CoverageNominal: the inverted sign-flip test, randomized at ties,
	// with the skew-corrected upper limit (or cluster-t) from
	// Params.FewTemplates templates (92.7–99.8%, median 95.6%; 92.7–97.8%
	// where template means are rarely all equal and the skew-corrected
	// limit does not bind; not randomized it covered 93.2–100%, median
	// 97.3%; before the skew-corrected upper limit as little as 86% at a
	// base accuracy of 20%).
	CoverageNominal = "nominal"
)

// Verdicts on a variant's drop (see stats.ClassifyDrop), and VerdictFloor.
// They say what was observed, not how a model computes.
const (
	VerdictNoDrop       = stats.VerdictNoDrop
	VerdictInconclusive = stats.VerdictInconclusive
	VerdictModerate     = stats.VerdictModerate
	VerdictUnclearSize  = stats.VerdictUnclearSize
	VerdictStrong       = stats.VerdictStrong
	// VerdictFloor is given instead of the others when the base accuracy is
	// below FloorAccuracyPct: a model that rarely solves the base problems
	// has no accuracy left to lose, so a small drop says nothing about
	// robustness.
	VerdictFloor = "not assessable: base accuracy at the floor"
	// VerdictUninformative replaces VerdictInconclusive and VerdictNoDrop
	// when the run could not have detected any drop: the minimum detectable
	// drop (Power.MDEPP) is at or above the reference accuracy, the largest
	// drop there is, or none is detectable at all. `fragility plan` sizes a
	// run that could.
	VerdictUninformative = "uninformative"
)

// FloorAccuracyPct is the base accuracy, in percent, under which no
// robustness verdict is given (VerdictFloor). At 10% a drop can be at most
// 10 pp, the strong-signal threshold itself.
const FloorAccuracyPct = 10.0

// Interval methods (Interval.Method).
const (
	// MethodClusterT: estimate ± t_{(1+c)/2, G−1}·SE with the CR1
	// cluster-robust SE (stats.ClusterT), clipped to the statistic's range.
	MethodClusterT = "cluster-t"
	// MethodBootstrap: percentile interval of the joint cluster bootstrap.
	MethodBootstrap = "bootstrap percentile"
	// MethodWilson: Wilson score interval over the distinct prompts (or
	// pairs), treated as independent.
	MethodWilson = "wilson"
	// MethodWilsonDifference: for a difference of two shares, p₁ − p₂, the
	// interval [L₁ − U₂, U₁ − L₂] from Wilson intervals of each at
	// confidence 1 − α/2 (Bonferroni: both hold together with probability ≥
	// 1 − α), over units treated as independent.
	MethodWilsonDifference = "wilson difference"
	// MethodMOVERWilson: the interval of a paired drop (base accuracy −
	// variant accuracy over the same pairs), stats.PairedMOVERWilson: Wilson
	// score limits of each accuracy on its Korn–Graubard effective sample
	// size (design effect from the template clusters, truncated at 1; the
	// base side at most its distinct prompts) with the critical value
	// t_{(1+c)/2, G−1}, combined by MOVER (Zou & Donner 2008) with the
	// cluster-robust correlation of the two accuracies (Newcombe 1998,
	// method 10, when each template holds one pair). It is the reported
	// interval of a paired drop below Params.FewTemplates templates and
	// whenever every template mean is equal.
	MethodMOVERWilson = "mover-wilson"
	// MethodMOVERWilsonSignFlip: the interval of a paired drop below
	// Params.FewTemplates templates: MOVER-Wilson (MethodMOVERWilson) with
	// its lower limit lowered to that of the inverted sign-flip test
	// (MethodSignFlip) where that is lower (stats.PairedDropInterval).
	// MOVER-Wilson's lower limit can sit above drops the template means
	// cannot rule out when the two accuracies' template means are nearly
	// perfectly correlated (a drop carried by the few templates a model
	// solves); the sign-flip test's lower limit is above 0 exactly when
	// that test rejects, so the verdict, which needs both, is unchanged.
	// MOVER-Wilson alone is reported where the sign-flip interval is
	// undefined (every template mean equal, or fewer templates than the
	// test needs to reject).
	MethodMOVERWilsonSignFlip = "mover-wilson with sign-flip lower limit"
	// MethodSignFlip: the interval of a paired drop obtained by inverting
	// the sign-flip test on the template means (stats.SignFlipInterval: the
	// drops δ the test of the means minus δ does not reject), on the same
	// sign vectors as the drop's test, so that it excludes 0 exactly when
	// that test rejects. It is the reported interval of a paired drop from
	// Params.FewTemplates templates.
	MethodSignFlip = "sign-flip inversion"
	// MethodSkewT: the skew-corrected studentized interval of the template
	// means of a paired drop (stats.SkewCorrectedT: Johnson 1978's modified
	// t made monotone by Hall 1992's transformation), which moves both
	// limits in the direction of the means' skewness.
	MethodSkewT = "skew-corrected t"
	// MethodSignFlipSkew: the reported interval of a paired drop from
	// Params.FewTemplates templates (stats.PairedDropInterval): the lower
	// limit of MethodSignFlip, above 0 exactly when the drop's test
	// rejects, and the higher of the upper limits of MethodSignFlip and
	// MethodSkewT. The sign-flip test assumes each template mean symmetric
	// about the drop; a drop carried by the few templates a model solves
	// makes them right-skewed, and the sign-flip inversion then misses the
	// drop from below (86–96% coverage at a base accuracy of 20% in the
	// simulation of PairedDropCoverageMeasured; 94–99.5% with the
	// skew-corrected upper limit).
	MethodSignFlipSkew = "sign-flip inversion with skew-corrected upper limit"
	// MethodKornGraubard: the interval of a share of clustered pairs (the
	// stability verdict's changed share, changedInterval): the
	// Clopper–Pearson interval on the Korn–Graubard effective sample size
	// n* = min(n, p(1−p)/v_CR1)·(t_{n−1}/t_{G−1})² (stats.EffectiveN,
	// stats.ClopperPearson; Korn & Graubard 1998, Survey Methodology
	// 24:193–201). When every template gives the same share (v_CR1 = 0: no
	// design effect can be estimated, as when no answer changed) n* is the
	// design effect's upper bound instead, Kish's effective number of
	// templates (stats.KishN over the pairs per template; G for equal
	// templates): each template one unit, as if its pairs all changed
	// together.
	MethodKornGraubard = "korn-graubard"
)

// Params are the settings of the statistics, recorded in the summary. Zero
// fields take the defaults of DefaultParams.
type Params struct {
	BootstrapResamples int     `json:"bootstrap_resamples"`          // B ≥ 1
	Seed               int64   `json:"bootstrap_seed"`               // first PCG seed word (as uint64) of the bootstrap and the Monte Carlo sign flips
	Confidence         float64 `json:"confidence_level"`             // in (0, 1), e.g. 0.95; tests at α = 1 − confidence
	Power              float64 `json:"power"`                        // power of the minimum detectable drop, e.g. 0.8
	Alpha              float64 `json:"alpha"`                        // set by Summarize: 1 − Confidence, the level of every test
	NegligibleDropPP   float64 `json:"negligible_drop_pp"`           // pp; see NegligibleDropPP
	StrongDropPP       float64 `json:"strong_drop_pp"`               // pp; see StrongDropPP
	EntropyShiftBits   float64 `json:"entropy_shift_threshold_bits"` // bits per token; see EntropyShiftThresholdBits
	DDCMarginShift     float64 `json:"ddc_margin_shift_threshold"`   // cosine difference; see DDCMarginShiftThreshold
	ShiftMarginSD      float64 `json:"shift_margin_sd"`              // between-template SDs; see ShiftMarginSD
	UnstableAnswerPct  float64 `json:"unstable_answer_pct"`          // percent of pairs; see UnstableAnswerPct
	// Temperature is the run's sampling temperature (0: greedy), from the
	// manifest: under greedy decoding the same prompt re-asked gets the same
	// answer, the null of the stability verdict (StabilityVerdict).
	Temperature      float64 `json:"temperature"`
	FewTemplates     int     `json:"cluster_t_below_templates"`       // cluster-t is reported below this many templates; see DefaultFewTemplates
	PermutationExact int     `json:"permutation_exact_max_templates"` // the sign-flip test enumerates all 2^G sign vectors up to this many templates (≤ 30)
	PermutationDraws int     `json:"permutation_draws"`               // Monte Carlo sign vectors above PermutationExact templates
	// Primary is the pre-specified primary variant (`run --primary`): when
	// set, a model's verdict is this variant's, tested alone at α; the other
	// variants are secondary (Holm among themselves). "" means Holm across
	// every variant of the model, and the verdict is the most severe.
	Primary string `json:"primary_variant"`

	// Set by Summarize, for the reader of summary.json: what is computed.
	RNG              string `json:"rng"`
	UnitOfAnalysis   string `json:"unit_of_analysis"`
	AccuracyInterval string `json:"accuracy_interval"`
	ClusterRobust    string `json:"cluster_robust_se"`
	Bootstrap        string `json:"bootstrap"`
	ReportedInterval string `json:"reported_interval"`
	// PairedDropCoverage states the measured coverage of the paired drop's
	// interval and the verdict's power, a sentence per statistic
	// (PairedDropCoverageMeasured).
	PairedDropCoverage string `json:"paired_drop_coverage"`
	PermutationTest    string `json:"permutation_test"`
	Multiplicity       string `json:"multiplicity"`
	ShiftMargin        string `json:"shift_margin"`
	Stability          string `json:"stability_verdict"`
	MDE                string `json:"minimum_detectable_drop"`
	ExtractionRules    string `json:"extraction_rules"`
}

// PlanningComponents returns the planning defaults σ²_b and σ²_w of a
// design and a sentence that states them: the drawn design's
// (PlanningDrawnBetween, PlanningDrawnWithin) when drawn is true, else the
// fixed-base design's (PlanningBetween, PlanningWithin).
func PlanningComponents(drawn bool) (between, within float64, stated string) {
	if drawn {
		return PlanningDrawnBetween, PlanningDrawnWithin, fmt.Sprintf("planning defaults of the drawn design: σ²_b = τ² = %.4g, σ²_w = 2(1−ρ)μ(1−μ) = %.4g with μ = %.2f, ρ = %.2f, τ = %.2f (assumptions; a pilot and --from replace them)",
			PlanningDrawnBetween, PlanningDrawnWithin, PlanningAccuracy, PlanningPairCorrelation, PlanningDropSD)
	}
	return PlanningBetween, PlanningWithin, fmt.Sprintf("planning defaults of the fixed-base design: σ²_b = %.4g (drop variance %.4g + the base prompt's Bernoulli variance %.4g), σ²_w = %.4g (assumptions; a pilot and --from replace them)",
		PlanningBetween, PlanningDropVariance, PlanningOutcomeVariance, PlanningWithin)
}

// DefaultParams returns the default Params with the given bootstrap seed.
func DefaultParams(seed int64) Params {
	return Params{
		BootstrapResamples: DefaultBootstrapResamples,
		Seed:               seed,
		Confidence:         DefaultConfidence,
		Power:              DefaultPower,
		NegligibleDropPP:   NegligibleDropPP,
		StrongDropPP:       StrongDropPP,
		EntropyShiftBits:   EntropyShiftThresholdBits,
		DDCMarginShift:     DDCMarginShiftThreshold,
		ShiftMarginSD:      ShiftMarginSD,
		UnstableAnswerPct:  UnstableAnswerPct,
		FewTemplates:       DefaultFewTemplates,
		PermutationExact:   stats.ExactMaxClusters,
		PermutationDraws:   stats.MonteCarloDraws,
	}
}

// alpha returns the test level 1 − confidence.
func (p *Params) alpha() float64 { return 1 - p.Confidence }
