package summary

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
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
	// & Miller 2015, §VI, discuss "few clusters" as roughly 20 to 50).
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
	// EntropyShiftThresholdBits is the paired entropy shift, in bits per
	// token, that the interval's bound nearer 0 must reach for a shift to be
	// flagged as meaningful.
	EntropyShiftThresholdBits = 0.02
	// DDCMarginShiftThreshold is the paired shift of the DDC margin (a
	// difference of cosines, unitless) that the interval's bound nearer 0
	// must reach for a shift to be flagged as meaningful.
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

	// BootstrapStream is the PCG stream (second seed word) of the bootstrap
	// generator, rand.NewPCG(uint64(Params.Seed), BootstrapStream): the
	// bootstrap draws are independent of the run order drawn from the same
	// seed. It is "boot" in ASCII.
	BootstrapStream uint64 = 0x626f6f74
	// PermutationStream is the PCG stream of the Monte Carlo sign-flip
	// draws (used above stats.ExactMaxClusters templates), "perm" in ASCII.
	PermutationStream uint64 = 0x7065726d
)

// MOVERWilsonCoverage is what the simulations of probe/stats
// (TestMOVERWilsonCoverage, TestMOVERWilsonConcentrated: one fixed base
// prompt per template, 4000 runs each, true drop known) measured for the
// 95% MOVER-Wilson interval of a paired drop; Summarize records it in
// Params.PairedDropCoverage and the narrative's few-template warning
// prints it.
const MOVERWilsonCoverage = "in simulations of this design (one base prompt per template, 4000 runs each) the 95% MOVER-Wilson interval of a paired drop covered the true drop in 97.1% of runs at 6 templates with one instance each (cluster-t: 80.0%), 95.6% at 20 and 94.7% at 50 templates, but only 90.8% at 6 templates with 5 instances each (cluster-t: 89.0%) and 90.6% at 10 templates with 10 instances each when the whole drop sits in 2 of them (cluster-t: 92.0%)"

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
	// interval of every paired drop at every number of templates (G ≥ 2).
	MethodMOVERWilson = "mover-wilson"
)

// Params are the settings of the statistics, recorded in the summary. Zero
// fields take the defaults of DefaultParams.
type Params struct {
	BootstrapResamples int     `json:"bootstrap_resamples"`             // B ≥ 1
	Seed               int64   `json:"bootstrap_seed"`                  // first PCG seed word (as uint64) of the bootstrap and the Monte Carlo sign flips
	Confidence         float64 `json:"confidence_level"`                // in (0, 1), e.g. 0.95; tests at α = 1 − confidence
	Power              float64 `json:"power"`                           // power of the minimum detectable drop, e.g. 0.8
	Alpha              float64 `json:"alpha"`                           // set by Summarize: 1 − Confidence, the level of every test
	NegligibleDropPP   float64 `json:"negligible_drop_pp"`              // pp; see NegligibleDropPP
	StrongDropPP       float64 `json:"strong_drop_pp"`                  // pp; see StrongDropPP
	EntropyShiftBits   float64 `json:"entropy_shift_threshold_bits"`    // bits per token; see EntropyShiftThresholdBits
	DDCMarginShift     float64 `json:"ddc_margin_shift_threshold"`      // cosine difference; see DDCMarginShiftThreshold
	FewTemplates       int     `json:"cluster_t_below_templates"`       // cluster-t is reported below this many templates; see DefaultFewTemplates
	PermutationExact   int     `json:"permutation_exact_max_templates"` // the sign-flip test enumerates all 2^G sign vectors up to this many templates (≤ 30)
	PermutationDraws   int     `json:"permutation_draws"`               // Monte Carlo sign vectors above PermutationExact templates
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
	// interval (MOVERWilsonCoverage).
	PairedDropCoverage string `json:"paired_drop_coverage"`
	PermutationTest    string `json:"permutation_test"`
	Multiplicity       string `json:"multiplicity"`
	MDE                string `json:"minimum_detectable_drop"`
	ExtractionRules    string `json:"extraction_rules"`
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
		FewTemplates:       DefaultFewTemplates,
		PermutationExact:   stats.ExactMaxClusters,
		PermutationDraws:   stats.MonteCarloDraws,
	}
}

// alpha returns the test level 1 − confidence.
func (p *Params) alpha() float64 { return 1 - p.Confidence }

// Interval is a two-sided interval at Params.Confidence, in the unit of the
// estimate it belongs to.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Method is how it was computed: MethodClusterT, MethodBootstrap,
	// MethodWilson or MethodWilsonDifference.
	Method string `json:"method"`
	// Replicates is, for a bootstrap interval, the number of resamples in
	// which the statistic was defined (at most B); 0 otherwise.
	Replicates int `json:"replicates,omitempty"`
}

// Excludes0 reports whether the interval lies entirely above or below zero.
func (iv *Interval) Excludes0() bool { return iv != nil && (iv.Lo > 0 || iv.Hi < 0) }

// Estimate is a point estimate from all the data with its intervals, in the
// unit of the statistic (percent, percentage points, bits, cosine units).
type Estimate struct {
	Value float64 `json:"value"`
	// CI is the reported interval: MOVERWilson for a paired drop; otherwise
	// ClusterT when the estimate rests on fewer than Params.FewTemplates
	// templates, Bootstrap otherwise; when the data
	// vary not at all between templates (SE = 0, or a single template) the
	// clustered intervals are degenerate and CI is the fallback given for the
	// statistic (Wilson for an accuracy or a share, MethodWilsonDifference
	// for a paired drop or a difference of accuracies) or nil, and Degenerate
	// is true. Verdicts and flags read CI.
	CI *Interval `json:"ci"`
	// SE is the CR1 cluster-robust standard error (stats.Influence.CR1) over
	// Clusters templates, in the unit of Value; nil below 2 templates.
	SE *float64 `json:"se"`
	// Clusters is G, the number of templates holding data for the statistic.
	Clusters int `json:"clusters"`
	// ClusterT, Bootstrap and Wilson are each interval computed, whichever
	// is reported (nil when not computed or undefined).
	ClusterT  *Interval `json:"cluster_t"`
	Bootstrap *Interval `json:"bootstrap"`
	Wilson    *Interval `json:"wilson,omitempty"`
	// MOVERWilson is, for a paired drop only, the MOVER-Wilson interval
	// (MethodMOVERWilson), which is then the reported CI whenever it is
	// defined (G ≥ 2), degenerate or not.
	MOVERWilson *Interval `json:"mover_wilson,omitempty"`
	// Degenerate is true when SE is 0 or undefined: every template gave the
	// same value, so no clustered interval can say anything (it would print
	// as [v, v], as if certain).
	Degenerate bool `json:"degenerate,omitempty"`
}

// Test is a paired test against 0 of a statistic built from per-pair
// differences: the sign-flip permutation test over templates
// (stats.SignFlip) with its multiplicity adjustment.
type Test struct {
	// Method is "sign-flip, exact" (all 2^G sign vectors) or "sign-flip,
	// Monte Carlo" (Draws random ones).
	Method string `json:"method"`
	// P is the two-sided p-value, PAdjusted the p-value after the
	// adjustment (equal to P when the test stands alone).
	P         float64 `json:"p"`
	PAdjusted float64 `json:"p_adjusted"`
	// Adjustment names it: "holm" across Family tests, "none: primary
	// variant", or "holm among secondary variants".
	Adjustment string `json:"adjustment"`
	Family     int    `json:"family"`
	Draws      int    `json:"draws"`
	// MinP is the smallest p-value the test can give with its Templates
	// (2^(1−G) exact; 1/(Draws+1) Monte Carlo).
	MinP      float64 `json:"min_p"`
	Templates int     `json:"templates"`
	// Reachable is false when even MinP, adjusted as if it were the
	// family's smallest p (MinP·Family), exceeds α: then this test cannot
	// reject at this number of templates whatever the data.
	Reachable bool `json:"reachable"`
}

// Power is the minimum detectable drop of a paired drop at the run's size.
type Power struct {
	// MDEPP is the drop, in percentage points, that a two-sided test at
	// level Alpha detects with probability Power given Templates templates
	// of PairsPerTemplate distinct pairs and the variance components
	// (stats.MDE: (t_{1−α/2,G−1} + t_{power,G−1})·√((σ²_b + σ²_w/m)/G)).
	// Nil when Templates < 2.
	MDEPP *float64 `json:"mde_pp"`
	// Alpha is the level used: α divided by the Holm family size (the level
	// of Holm's first step), α for a primary variant.
	Alpha     float64 `json:"alpha"`
	Power     float64 `json:"power"`
	Templates int     `json:"templates"`
	// PairsPerTemplate is m, the ANOVA average number of distinct pairs per
	// template (stats.Components.N0; the plain mean when all are equal).
	PairsPerTemplate float64 `json:"pairs_per_template"`
	// Between and Within are σ²_b and σ²_w of the per-pair difference
	// (base right − variant right, 0/1), in squared fractions; ICC is
	// σ²_b/(σ²_b + σ²_w).
	Between float64 `json:"between_variance"`
	Within  float64 `json:"within_variance"`
	ICC     float64 `json:"icc"`
	// WithinIdentified is false when no template has two distinct pairs
	// (a variant that re-draws nothing): Within is then 0 and Between the
	// whole variance (stats.Components.WithinIdentified).
	WithinIdentified bool `json:"within_identified"`
	// Source is "observed" (estimated from this run's pairs, stats.
	// VarianceComponents) or "planning defaults" (PlanningBetween and
	// PlanningWithin, when the run shows no variation to estimate from).
	Source string `json:"source"`
	// Attainable is false when the sign-flip test cannot reach Alpha at all
	// with this many templates (Test.Reachable false).
	Attainable bool `json:"attainable"`
}

// Summary is the statistics of a run: per model × variant accuracies, drops
// versus base, paired flips with their test, entropy and DDC-margin shifts,
// the difficulty axis, and paired differences between models, all with
// denominators and intervals. It is written as summary.json and holds every
// number the narrative prints. No value is NaN or infinite; an undefined
// statistic is a nil pointer (null in JSON).
//
// Unit of analysis: a distinct prompt. Trials of one model and variant whose
// question text is the same (copies: e.g. base instances of a template,
// which all use the base values) form one unit whose outcome is the share of
// its copies answered right (the same 0 or 1 for every copy under greedy
// decoding), so copies add no weight; the number of copies collapsed is
// reported. A pair is a distinct (base prompt, variant prompt) pair of one
// template, its outcome the shares over its copies. The cluster is the
// template.
type Summary struct {
	Params  Params `json:"params"`
	Trials  int    `json:"trials"`  // rows given to Summarize
	Skipped int    `json:"skipped"` // rows with a SkipReason, excluded from every statistic
	// Templates are the clusters (templates with at least one scored trial),
	// sorted; the bootstrap draws indices over this list.
	Templates []string `json:"templates"`
	// Clusters is G = len(Templates), stated with every statistic too.
	Clusters int `json:"clusters"`
	// FewTemplates is Clusters < Params.FewTemplates: the reported
	// intervals are cluster-t, and the narrative warns.
	FewTemplates bool           `json:"few_templates"`
	Variants     []string       `json:"variants"` // in report order, base first
	Models       []ModelSummary `json:"models"`   // in order of first appearance in the trials
	// ModelPairs are the paired differences between every two models, on
	// the prompts both were given (nil with one model).
	ModelPairs []ModelPair `json:"model_pairs"`
	// Documents is the section on document items (run --items); nil when
	// the trials are none.
	Documents *DocumentSummary `json:"documents,omitempty"`
	// Overrides counts the label overrides applied before scoring (run
	// --overrides); nil without them.
	Overrides *OverrideCounts `json:"overrides,omitempty"`
	// RunStatus is the manifest's status when the run directory a report
	// re-rendered is not complete ("running", "interrupted", "failed"):
	// the statistics then cover only the trials it holds. "" for a
	// complete run.
	RunStatus string `json:"run_status,omitempty"`
	// Calculator is the calculator condition's section (run --conditions
	// none,calculator); nil when no trial ran with the calculator.
	Calculator *CalculatorSummary `json:"calculator,omitempty"`
	// Effort is the reasoning effort of every summarised model, by variant
	// and difficulty.
	Effort []EffortSummary `json:"effort,omitempty"`
}

// ModelSummary is the statistics of one model.
type ModelSummary struct {
	Label        string `json:"label"` // unique display name within the summary
	Path         string `json:"path"`
	Name         string `json:"name"`
	Family       string `json:"family"`
	Quantization string `json:"quantization"`
	Condition    string `json:"condition"` // ConditionNone or ConditionCalculator: a model under each condition is summarised apart
	Trials       int    `json:"trials"`
	Skipped      int    `json:"skipped"`
	// N is the number of distinct prompts over all variants, Copies the
	// scored trials collapsed into them, Templates the templates with a
	// scored trial.
	N         int `json:"n"`
	Copies    int `json:"copies"`
	Templates int `json:"templates"`

	Variants []VariantSummary `json:"variants"` // in Summary.Variants order, present ones only

	// Verdict is the model's verdict: with a primary variant, that variant's
	// verdict; otherwise the most severe verdict over the variants
	// (stats.Severity; VerdictFloor when base is at the floor), each already
	// Holm-adjusted across the variants. VerdictVariant is the variant it
	// comes from (the larger paired drop on ties); both empty without a base
	// variant or pairs. VerdictRule is "primary" or "holm".
	Verdict        string `json:"verdict"`
	VerdictVariant string `json:"verdict_variant"`
	VerdictRule    string `json:"verdict_rule"`

	// Difficulty is accuracy by difficulty level, by template steps and by
	// relation, per variant, with the paired flips within each group: the
	// difficulty axis, reported apart from robustness.
	Difficulty []GroupAccuracy `json:"difficulty"`
}

// VariantSummary is the statistics of one model on one variant. Accuracies,
// drops and shares are in percent (0–100) or percentage points.
type VariantSummary struct {
	Variant string `json:"variant"`
	Trials  int    `json:"trials"`  // rows, skipped included
	Skipped int    `json:"skipped"` // rows excluded for a SkipReason
	Scored  int    `json:"scored"`  // Trials − Skipped
	// N is the number of distinct prompts among the scored trials (the
	// denominator of the accuracy), Copies the scored trials that repeated
	// a prompt already counted (Scored − N).
	N      int `json:"n"`
	Copies int `json:"copies"`
	// K is the number of distinct prompts answered right: the sum over
	// prompts of the share of their copies answered right (an integer when
	// copies agree, as they do under greedy decoding).
	K float64 `json:"k"`
	// CorrectTrials counts scored trials answered right, copies included.
	CorrectTrials int `json:"correct_trials"`
	// Templates is the number of templates with a scored trial.
	Templates int `json:"templates"`

	// AccuracyPct is 100·K/N with its intervals (Wilson over the N
	// prompts, cluster-t, bootstrap); nil when N = 0.
	AccuracyPct *Estimate `json:"accuracy_pct"`

	// ExpectedAnywhere counts scored trials whose output holds the expected
	// value anywhere (Trial.ExpectedAnywhere), out of Scored.
	ExpectedAnywhere int `json:"expected_anywhere"`

	// DropPP is base accuracy − this accuracy in percentage points
	// (positive: worse than base), RelativeDropPct that drop as a
	// percentage of the base accuracy; over all distinct prompts of each
	// variant. Nil for the base variant, without a base, and (relative) at a
	// base accuracy of 0. The verdict rests on Paired.PairedDropPP instead,
	// the drop on matched pairs, which has a paired test.
	DropPP          *Estimate `json:"drop_pp"`
	RelativeDropPct *Estimate `json:"relative_drop_pct"`
	// Verdict is stats.ClassifyDrop on Paired.PairedDropPP's reported
	// interval and Paired.Test.PAdjusted, or VerdictFloor; "" for base and
	// without pairs.
	Verdict string `json:"verdict"`
	// Primary is true for the pre-specified primary variant.
	Primary bool `json:"primary,omitempty"`

	Paired             *Paired `json:"paired"`               // nil for base
	AnswerEntropyShift *Shift  `json:"answer_entropy_shift"` // bits per token; Trial.AnswerEntropyMean
	EntropyShift       *Shift  `json:"entropy_shift"`        // bits per token; Trial.EntropyMean
	DDCMarginShift     *Shift  `json:"ddc_margin_shift"`     // cosine difference; Trial.DDCMargin
}

// Paired is the analysis of matched base/variant pairs: the same model,
// template and instance index in base and this variant, both scored.
// Identical (base prompt, variant prompt) pairs count once: Pairs is the
// number of distinct pairs, the denominator of every share here.
type Paired struct {
	Pairs        int `json:"pairs"`         // distinct pairs
	PairTrials   int `json:"pair_trials"`   // matched scored trial pairs, copies included
	Copies       int `json:"copies"`        // PairTrials − Pairs
	SkippedPairs int `json:"skipped_pairs"` // matched pairs left out because either trial was skipped
	Unmatched    int `json:"unmatched"`     // variant trials whose base partner is missing

	// The 2×2 table over distinct pairs (counts may be fractional when
	// copies of a pair disagree, which greedy decoding never gives).
	BothCorrect Cell `json:"both_correct"`
	BaseOnly    Cell `json:"base_right_variant_wrong"`
	VariantOnly Cell `json:"base_wrong_variant_right"`
	BothWrong   Cell `json:"both_wrong"`

	// PairedDropPP is (BaseOnly − VariantOnly)/Pairs in percentage points:
	// the mean per-pair difference (base right − variant right), the drop
	// the verdict and the test rest on.
	PairedDropPP *Estimate `json:"paired_drop_pp"`
	// Test is the sign-flip test of PairedDropPP against 0, adjusted across
	// the model's variants (Params.Multiplicity); nil without pairs.
	Test *Test `json:"test"`
	// Power is the minimum detectable paired drop at 80% power for this
	// run's templates and pairs; nil without pairs.
	Power *Power `json:"power"`
}

// Cell is one cell of the paired 2×2 table: a count of distinct pairs and
// its share of the pairs in percent (nil share when there are no pairs).
type Cell struct {
	Count    float64   `json:"count"`
	SharePct *Estimate `json:"share_pct"`
}

// Shift is the paired shift of a per-trial quantity from base to a variant:
// the mean over distinct pairs of (variant − base), over pairs where both
// values are defined (finite; for entropies at least one generated token;
// for the DDC margin a DDC class recorded).
type Shift struct {
	Pairs       int       `json:"pairs"`
	BaseMean    float64   `json:"base_mean"`    // mean over those pairs, base side
	VariantMean float64   `json:"variant_mean"` // mean over those pairs, variant side
	Shift       *Estimate `json:"shift"`        // VariantMean − BaseMean with its intervals; nil when Pairs = 0
	Test        *Test     `json:"test"`         // sign-flip test, Holm across the model's variants; nil when Pairs = 0
	Threshold   float64   `json:"threshold"`    // from Params
	// Meaningful is stats.ShiftMeaningful: the reported interval lies beyond
	// ±Threshold and the adjusted test reaches α.
	Meaningful bool `json:"meaningful"`
}

// GroupAccuracy is the accuracy of one model on one variant within a group
// of templates: Axis "level" (Group is the GSM-Symbolic difficulty level,
// "" for templates without one), "steps" (the step count) or "relation".
type GroupAccuracy struct {
	Axis      string    `json:"axis"`
	Group     string    `json:"group"`
	Variant   string    `json:"variant"`
	Templates int       `json:"templates"`    // templates in the group with a scored trial
	N         int       `json:"n"`            // distinct prompts
	K         float64   `json:"k"`            // distinct prompts answered right
	Accuracy  *Estimate `json:"accuracy_pct"` // 100·K/N with intervals; nil when N = 0
	// For a variant other than base, the paired flips within the group
	// (distinct pairs): robustness at this difficulty.
	Pairs        int       `json:"pairs"`
	BaseOnly     float64   `json:"base_right_variant_wrong"`
	VariantOnly  float64   `json:"base_wrong_variant_right"`
	PairedDropPP *Estimate `json:"paired_drop_pp,omitempty"`
}

// ModelPair is the paired comparison of two models on the prompts both were
// given, clustered by template: A − B for every variant's accuracy and every
// variant's paired drop. Its tests are Holm-adjusted together (Family).
type ModelPair struct {
	A     string `json:"a"` // label of the first model (earlier in Summary.Models)
	B     string `json:"b"` // label of the second
	APath string `json:"a_path"`
	BPath string `json:"b_path"`
	// Accuracy holds, per variant, accuracy A − accuracy B in percentage
	// points over the distinct prompts scored for both.
	Accuracy []ModelDifference `json:"accuracy"`
	// Drop holds, per variant other than base, paired drop A − paired drop
	// B in percentage points over the distinct pairs scored for both:
	// positive means A loses more on the variant than B.
	Drop   []ModelDifference `json:"drop"`
	Family int               `json:"family"` // tests in the Holm family
}

// ModelDifference is one paired difference between two models.
type ModelDifference struct {
	Variant string `json:"variant"`
	// Units is the number of distinct prompts (Accuracy) or distinct pairs
	// (Drop) scored for both models.
	Units int `json:"units"`
	// AHigher and BHigher count the units where A's value is above B's and
	// the reverse (Accuracy: A right and B wrong; Drop: A's per-pair
	// difference larger).
	AHigher float64 `json:"a_higher"`
	BHigher float64 `json:"b_higher"`
	// DiffPP is A − B in percentage points with its intervals.
	DiffPP *Estimate `json:"diff_pp"`
	Test   *Test     `json:"test"`
	// Shown is true when the reported interval excludes 0 and the adjusted
	// test reaches α: a difference between the models is shown.
	Shown bool `json:"shown"`
}

// variantOrder is the report order of the known variants.
var variantOrder = []string{BaseVariant, "names", "numbers", "symbolic", "paraphrase", "noop", "noop-seeming"}

// promptKey identifies a trial's prompt within its model, variant and
// template: the question text (with a document item's passages, in order),
// or the instance index when no question was recorded.
func promptKey(t *results.Trial) string {
	if t.Passages != "" {
		return "q:" + t.Question + "\x00p:" + t.Passages
	}
	if t.Question != "" {
		return "q:" + t.Question
	}
	return fmt.Sprintf("i:%d", t.Instance)
}

// unit is one distinct prompt of one model × variant.
type unit struct {
	tmpl            int
	copies          int
	correct         float64
	level, relation string
	steps           int
}

// y is the unit's outcome: the share of its copies answered right.
func (u *unit) y() float64 { return u.correct / float64(u.copies) }

// shiftAcc accumulates one quantity of a pair over its copies.
type shiftAcc struct {
	n          int
	base, vari float64
}

// pairUnit is one distinct (base prompt, variant prompt) pair.
type pairUnit struct {
	tmpl                 int
	copies               int
	b, v                 float64 // copies right
	both, bo, vo, bw     float64 // copies in each cell
	ans, all, ddc        shiftAcc
	level, relation, key string
	bkey, vkey           string // the base and the variant prompt (template-qualified)
	steps                int
}

func (q *pairUnit) d() float64 { return (q.b - q.v) / float64(q.copies) }

// cell is everything collected for one model × variant.
type cell struct {
	vs        *VariantSummary
	units     map[string]*unit
	unitOrder []string
	pairs     map[string]*pairUnit
	pairOrder []string
	tmplSeen  map[int]bool
}

// estimates registers estimates whose bootstrap intervals are computed in
// one joint bootstrap at the end.
type estimates struct {
	p     *Params
	items []*pendingEstimate
}

type pendingEstimate struct {
	e        *Estimate
	boot     stats.Statistic
	lo, hi   float64 // the statistic's range, for clipping cluster-t
	fallback *Interval
}

// add returns the estimate of a statistic with value v, its cluster
// influence (in the unit of v), its bootstrap statistic, the range [lo, hi]
// it can take, and the interval to report when the clustered ones are
// degenerate (may be nil).
func (es *estimates) add(v float64, inf stats.Influence, boot stats.Statistic, lo, hi float64, fallback *Interval) *Estimate {
	e := &Estimate{Value: v, Clusters: inf.Clusters()}
	if se, g, ok := inf.CR1(); ok {
		// An SE at the level of rounding error (every template gave the
		// same value, up to the last bits) is 0.
		if se <= 1e-12*max(1, math.Abs(v)) {
			se = 0
		}
		e.SE = &se
		if l, h, ok := stats.ClusterT(v, se, g, es.p.Confidence); ok && se > 0 {
			e.ClusterT = &Interval{Lo: max(lo, l), Hi: min(hi, h), Method: MethodClusterT}
		}
	}
	es.items = append(es.items, &pendingEstimate{e: e, boot: boot, lo: lo, hi: hi, fallback: fallback})
	return e
}

// finish runs the joint bootstrap over g templates and sets every
// estimate's Bootstrap and reported CI.
func (es *estimates) finish(g int) {
	fs := make([]stats.Statistic, len(es.items))
	for i, it := range es.items {
		fs[i] = it.boot
	}
	var reps [][]float64
	if g > 0 && len(fs) > 0 {
		reps = stats.JointBootstrap(g, es.p.BootstrapResamples, rand.New(rand.NewPCG(uint64(es.p.Seed), BootstrapStream)), fs)
	}
	for i, it := range es.items {
		e := it.e
		if reps != nil {
			if lo, hi, ok := stats.Percentile(reps[i], es.p.Confidence); ok {
				e.Bootstrap = &Interval{Lo: lo, Hi: hi, Method: MethodBootstrap, Replicates: len(reps[i])}
			}
		}
		degenerate := e.SE == nil || *e.SE == 0 || e.ClusterT == nil
		switch {
		case e.MOVERWilson != nil:
			e.Degenerate = degenerate
			e.CI = e.MOVERWilson
		case degenerate:
			e.Degenerate = true
			e.CI = it.fallback
		case e.Clusters < es.p.FewTemplates || e.Bootstrap == nil:
			e.CI = e.ClusterT
		default:
			e.CI = e.Bootstrap
		}
	}
}

// tests collects sign-flip tests for their multiplicity adjustment.
type tests struct {
	p   *Params
	rng *rand.Rand
}

// signFlip tests the ratio's per-template numerators (sums of per-pair
// differences) against 0; nil when no template holds data.
func (ts *tests) signFlip(r stats.Ratio) *Test {
	var d []float64
	for g := range r.Num {
		if r.Den[g] > 0 {
			d = append(d, r.Num[g])
		}
	}
	if len(d) == 0 {
		return nil
	}
	res := stats.SignFlip(d, ts.p.PermutationExact, ts.p.PermutationDraws, ts.rng)
	t := &Test{Method: "sign-flip, exact", P: res.P, PAdjusted: res.P, Adjustment: "none", Family: 1,
		Draws: res.Draws, MinP: res.MinP, Templates: res.Clusters}
	if !res.Exact {
		t.Method = "sign-flip, Monte Carlo"
	}
	return t
}

// adjust applies Holm across the tests (nil entries skipped) and records
// the adjustment's name and family size.
func adjust(alpha float64, name string, ts ...*Test) {
	var live []*Test
	var ps []float64
	for _, t := range ts {
		if t != nil {
			live = append(live, t)
			ps = append(ps, t.P)
		}
	}
	adj := stats.Holm(ps)
	for i, t := range live {
		t.PAdjusted = adj[i]
		t.Family = len(live)
		t.Adjustment = name
		if len(live) == 1 && name == "holm" {
			t.Adjustment = "none (a single test)"
		}
		t.Reachable = t.MinP*float64(t.Family) <= alpha*(1+1e-12)
	}
}

// Summarize computes the statistics of a run from its trials.
//
// Trials are grouped by model (ModelPath, or ModelName when the path is
// empty) and variant; skipped trials (SkipReason ≠ "") are counted and left
// out of every statistic; nothing is filtered to items the model solved in
// the base variant. Trials of one model × variant × template with the same
// question are one unit (see Summary). Pairs match a variant trial with the
// base trial of the same model, template and instance index.
//
// Every accuracy, drop, share and shift gets (see Estimate):
//
//   - the CR1 cluster-robust standard error over templates (Miller 2024,
//     arXiv:2411.00640; stats.Influence.CR1), by the delta method for a
//     difference or ratio of accuracies;
//   - the cluster-t interval on G − 1 degrees of freedom (stats.ClusterT),
//     clipped to the statistic's range;
//   - the joint cluster-bootstrap percentile interval: the clusters are the
//     templates with at least one scored trial, sorted by ID; each of the B
//     resamples draws len(templates) indices with replacement (r.IntN, in
//     order, from rand.New(rand.NewPCG(uint64(p.Seed), BootstrapStream)))
//     and this one resample is used for every model, variant and statistic
//     (stats.JointBootstrap);
//   - a reported interval: cluster-t below p.FewTemplates templates,
//     bootstrap from there on, a Wilson fallback when the clustered ones are
//     degenerate.
//
// Every paired statistic (paired drop, shifts, differences between models)
// gets a sign-flip permutation test over templates (stats.SignFlip; exact
// up to p.PermutationExact templates, else p.PermutationDraws Monte Carlo
// draws from rand.NewPCG(uint64(p.Seed), PermutationStream)). Holm's
// adjustment runs across the variants of a model for each quantity, or, for
// the drop with p.Primary set, the primary variant stands alone and the
// others are adjusted among themselves; between models, across all the
// differences of a model pair. Verdicts: stats.ClassifyDrop on the paired
// drop's reported interval and adjusted p. The minimum detectable drop
// (Power) uses the observed variance components of the per-pair differences
// (stats.VarianceComponents, stats.MDE).
//
// The result is a deterministic function of trials and p. Zero fields of p
// take the defaults of DefaultParams. It returns an error for invalid
// params, a primary variant that is base or not in the trials, or when two
// trials share model, template, variant and instance.
func Summarize(trials []results.Trial, p Params) (*Summary, error) {
	d := DefaultParams(p.Seed)
	if p.BootstrapResamples == 0 {
		p.BootstrapResamples = d.BootstrapResamples
	}
	if p.Confidence == 0 {
		p.Confidence = d.Confidence
	}
	if p.Power == 0 {
		p.Power = d.Power
	}
	if p.NegligibleDropPP == 0 {
		p.NegligibleDropPP = d.NegligibleDropPP
	}
	if p.StrongDropPP == 0 {
		p.StrongDropPP = d.StrongDropPP
	}
	if p.EntropyShiftBits == 0 {
		p.EntropyShiftBits = d.EntropyShiftBits
	}
	if p.DDCMarginShift == 0 {
		p.DDCMarginShift = d.DDCMarginShift
	}
	if p.FewTemplates == 0 {
		p.FewTemplates = d.FewTemplates
	}
	if p.PermutationExact == 0 {
		p.PermutationExact = d.PermutationExact
	}
	if p.PermutationDraws == 0 {
		p.PermutationDraws = d.PermutationDraws
	}
	if p.BootstrapResamples < 1 {
		return nil, fmt.Errorf("probe: bootstrap resamples must be at least 1, got %d", p.BootstrapResamples)
	}
	if !(p.Confidence > 0 && p.Confidence < 1) {
		return nil, fmt.Errorf("probe: confidence level must be in (0, 1), got %v", p.Confidence)
	}
	if !(p.Power > 0 && p.Power < 1) {
		return nil, fmt.Errorf("probe: power must be in (0, 1), got %v", p.Power)
	}
	if p.NegligibleDropPP < 0 || p.StrongDropPP < p.NegligibleDropPP || p.EntropyShiftBits < 0 || p.DDCMarginShift < 0 {
		return nil, errors.New("probe: thresholds must be ≥ 0 with strong ≥ negligible")
	}
	if p.FewTemplates < 0 || p.PermutationExact < 0 || p.PermutationExact > 30 || p.PermutationDraws < 1 {
		return nil, errors.New("probe: few-templates limit ≥ 0, exact sign-flip limit in [0, 30] and Monte Carlo draws ≥ 1 required")
	}
	if p.Primary == BaseVariant {
		return nil, errors.New("probe: the primary variant cannot be base (it is what the others are compared with)")
	}
	alpha := p.alpha()
	p.Alpha = alpha
	p.RNG = fmt.Sprintf("math/rand/v2 rand.New(rand.NewPCG(%d, %#x)); per resample, IntN(len(templates)) drawn len(templates) times. Monte Carlo sign flips: rand.NewPCG(%d, %#x), one bit of Uint64 per template",
		uint64(p.Seed), BootstrapStream, uint64(p.Seed), PermutationStream)
	p.UnitOfAnalysis = "a distinct prompt: trials of one model × variant × template with the same question are one unit (outcome: share of its copies right), and identical (base, variant) prompt pairs are one pair; cluster: the template"
	p.AccuracyInterval = "Wilson score interval over the distinct prompts (Wilson 1927), next to the clustered intervals"
	p.ClusterRobust = "CR1 cluster-robust standard error over templates, factor G/(G−1) (Miller 2024, arXiv:2411.00640; Cameron & Miller 2015); delta method for differences and ratios"
	p.Bootstrap = "joint cluster bootstrap over templates, one resample shared by every model, variant and statistic per iteration; percentile interval (Efron & Tibshirani 1993)"
	p.ReportedInterval = fmt.Sprintf("paired drops: MOVER-Wilson at every number of templates (Wilson limits of base and variant accuracy on their Korn–Graubard effective sample sizes with t on G−1 degrees of freedom, combined by MOVER with their cluster-robust correlation; Newcombe 1998, Korn & Graubard 1998, Zou & Donner 2008); everything else: cluster-t on G−1 degrees of freedom below %d templates, bootstrap percentile from %d; Wilson when the clustered intervals are degenerate (no variation between templates)", p.FewTemplates, p.FewTemplates)
	p.PairedDropCoverage = MOVERWilsonCoverage
	p.PermutationTest = fmt.Sprintf("sign-flip permutation test over templates of the per-template sums of paired differences; exact (all 2^G sign vectors) up to %d templates, else %d Monte Carlo draws with p = (1+hits)/(draws+1)", p.PermutationExact, p.PermutationDraws)
	if p.Primary != "" {
		p.Multiplicity = fmt.Sprintf("primary variant %s tested alone at α = %s and its verdict is the model's; other variants Holm-adjusted among themselves (secondary); shifts Holm-adjusted across all variants; differences between models Holm-adjusted within each model pair", p.Primary, fnum(alpha, 2))
	} else {
		p.Multiplicity = "Holm across the variants of each model (the verdict is the most severe adjusted one), for the drop and for each shift; differences between models Holm-adjusted within each model pair"
	}
	p.MDE = fmt.Sprintf("(t_{1−α/2,G−1} + t_{%s,G−1})·√((σ²_b + σ²_w/m)/G) with α divided by the Holm family size (Bloom 1995; Donner & Klar 2000), variance components of the per-pair differences by ANOVA", fnum(p.Power, 2))
	p.ExtractionRules = answer.ExtractionRulesVersion

	s := &Summary{Params: p, Trials: len(trials)}

	// Models in order of first appearance; variants and templates collected.
	type key struct {
		model, template, variant string
		instance                 int
	}
	modelIdx := map[string]int{}
	var models []*ModelSummary
	seen := map[key]int{}
	variantSet := map[string]bool{}
	templateSet := map[string]bool{}
	for i := range trials {
		t := &trials[i]
		mk := modelKey(t)
		mi, ok := modelIdx[mk]
		if !ok {
			mi = len(models)
			modelIdx[mk] = mi
			models = append(models, &ModelSummary{Path: t.ModelPath, Name: t.ModelName, Family: t.ModelFamily, Quantization: t.Quantization, Condition: results.ConditionName(t.Condition)})
		}
		models[mi].Trials++
		k := key{mk, t.TemplateID, t.Variant, t.Instance}
		if j, dup := seen[k]; dup {
			return nil, fmt.Errorf("probe: trials %q and %q are both model %s, template %s, variant %s, instance %d",
				trials[j].ItemID, t.ItemID, mk, t.TemplateID, t.Variant, t.Instance)
		}
		seen[k] = i
		variantSet[t.Variant] = true
		if t.Skipped() {
			s.Skipped++
			models[mi].Skipped++
			continue
		}
		templateSet[t.TemplateID] = true
	}
	for v := range variantSet {
		s.Variants = append(s.Variants, v)
	}
	slices.SortFunc(s.Variants, func(a, b string) int {
		ia, ib := slices.Index(variantOrder, a), slices.Index(variantOrder, b)
		if ia < 0 {
			ia = len(variantOrder)
		}
		if ib < 0 {
			ib = len(variantOrder)
		}
		return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
	})
	if p.Primary != "" && len(trials) > 0 && !variantSet[p.Primary] {
		return nil, fmt.Errorf("probe: primary variant %q is not in the run (variants: %s)", p.Primary, strings.Join(s.Variants, ", "))
	}
	for t := range templateSet {
		s.Templates = append(s.Templates, t)
	}
	slices.Sort(s.Templates)
	if s.Templates == nil {
		s.Templates = []string{}
	}
	tIdx := make(map[string]int, len(s.Templates))
	for i, t := range s.Templates {
		tIdx[t] = i
	}
	G := len(s.Templates)
	s.Clusters = G
	s.FewTemplates = G < p.FewTemplates
	setLabels(models)
	vIdx := map[string]int{}
	for i, v := range s.Variants {
		vIdx[v] = i
	}

	// Collect units and pairs per model × variant.
	cells := make([][]*cell, len(models))
	for mi := range models {
		cells[mi] = make([]*cell, len(s.Variants))
	}
	getCell := func(mi, vi int) *cell {
		if cells[mi][vi] == nil {
			c := &cell{vs: &VariantSummary{Variant: s.Variants[vi]}, units: map[string]*unit{}, pairs: map[string]*pairUnit{}, tmplSeen: map[int]bool{}}
			if s.Variants[vi] != BaseVariant {
				c.vs.Paired = &Paired{}
			}
			cells[mi][vi] = c
		}
		return cells[mi][vi]
	}
	for i := range trials {
		t := &trials[i]
		mi, vi := modelIdx[modelKey(t)], vIdx[t.Variant]
		c := getCell(mi, vi)
		c.vs.Trials++
		if t.Skipped() {
			c.vs.Skipped++
		} else {
			ti := tIdx[t.TemplateID]
			c.tmplSeen[ti] = true
			c.vs.Scored++
			uk := t.TemplateID + "\x00" + promptKey(t)
			u := c.units[uk]
			if u == nil {
				u = &unit{tmpl: ti, level: t.Level, relation: t.Relation, steps: t.Steps}
				c.units[uk] = u
				c.unitOrder = append(c.unitOrder, uk)
			}
			u.copies++
			if t.Correct {
				u.correct++
				c.vs.CorrectTrials++
			}
			if t.ExpectedAnywhere {
				c.vs.ExpectedAnywhere++
			}
		}
		if t.Variant == BaseVariant {
			continue
		}
		bi, ok := seen[key{modelKey(t), t.TemplateID, BaseVariant, t.Instance}]
		if !ok {
			c.vs.Paired.Unmatched++
			continue
		}
		b := &trials[bi]
		if b.Skipped() || t.Skipped() {
			c.vs.Paired.SkippedPairs++
			continue
		}
		c.vs.Paired.PairTrials++
		pk := t.TemplateID + "\x00" + promptKey(b) + "\x00" + promptKey(t)
		q := c.pairs[pk]
		if q == nil {
			q = &pairUnit{tmpl: tIdx[t.TemplateID], level: t.Level, relation: t.Relation, steps: t.Steps, key: pk,
				bkey: t.TemplateID + "\x00" + promptKey(b), vkey: t.TemplateID + "\x00" + promptKey(t)}
			c.pairs[pk] = q
			c.pairOrder = append(c.pairOrder, pk)
		}
		q.copies++
		switch {
		case b.Correct && t.Correct:
			q.both++
		case b.Correct:
			q.bo++
		case t.Correct:
			q.vo++
		default:
			q.bw++
		}
		if b.Correct {
			q.b++
		}
		if t.Correct {
			q.v++
		}
		if b.Tokens > 0 && t.Tokens > 0 && finite(b.AnswerEntropyMean, t.AnswerEntropyMean) {
			q.ans.n++
			q.ans.base += b.AnswerEntropyMean
			q.ans.vari += t.AnswerEntropyMean
		}
		if b.Tokens > 0 && t.Tokens > 0 && finite(b.EntropyMean, t.EntropyMean) {
			q.all.n++
			q.all.base += b.EntropyMean
			q.all.vari += t.EntropyMean
		}
		if b.DDCTop != "" && t.DDCTop != "" && finite(b.DDCMargin, t.DDCMargin) {
			q.ddc.n++
			q.ddc.base += b.DDCMargin
			q.ddc.vari += t.DDCMargin
		}
	}

	es := &estimates{p: &p}
	ts := &tests{p: &p, rng: rand.New(rand.NewPCG(uint64(p.Seed), PermutationStream))}
	conf := p.Confidence
	inf := func(r stats.Ratio, scale float64) stats.Influence {
		x, ok := r.Influence()
		if !ok {
			return stats.Influence{E: make([]float64, G), Present: make([]bool, G)}
		}
		return x.Combine(scale, x, 0)
	}
	scaled := func(r stats.Ratio, scale float64) stats.Statistic {
		return func(idx []int) (float64, bool) {
			v, ok := r.At(idx)
			return scale * v, ok
		}
	}
	wilson := func(k, n float64, c float64) *Interval {
		if lo, hi, ok := stats.Wilson(k, n, c); ok {
			return &Interval{Lo: 100 * lo, Hi: 100 * hi, Method: MethodWilson}
		}
		return nil
	}
	// wilsonDiff is MethodWilsonDifference for shares k1/n1 − k2/n2, in pp.
	wilsonDiff := func(k1, n1, k2, n2 float64) *Interval {
		a, b := wilson(k1, n1, 1-alpha/2), wilson(k2, n2, 1-alpha/2)
		if a == nil || b == nil {
			return nil
		}
		return &Interval{Lo: a.Lo - b.Hi, Hi: a.Hi - b.Lo, Method: MethodWilsonDifference}
	}
	// accuracy returns the accuracy estimate of a set of units.
	accuracy := func(units []*unit) (*Estimate, stats.Ratio, float64, int) {
		r := stats.NewRatio(G)
		var k float64
		for _, u := range units {
			r.Add(u.tmpl, u.y())
			k += u.y()
		}
		n := len(units)
		if n == 0 {
			return nil, r, 0, 0
		}
		v := 100 * k / float64(n)
		w := wilson(k, float64(n), conf)
		e := es.add(v, inf(r, 100), scaled(r, 100), 0, 100, w)
		e.Wilson = w
		return e, r, k, n
	}
	// pairedDrop returns the paired drop of a set of pairs and its ratio of
	// per-pair differences.
	pairedDrop := func(pairs []*pairUnit) (*Estimate, stats.Ratio, float64, float64) {
		r := stats.NewRatio(G)
		var bo, vo float64
		for _, q := range pairs {
			r.Add(q.tmpl, q.d())
			bo += q.bo / float64(q.copies)
			vo += q.vo / float64(q.copies)
		}
		if len(pairs) == 0 {
			return nil, r, 0, 0
		}
		v, _ := r.Value()
		n := float64(len(pairs))
		e := es.add(100*v, inf(r, 100), scaled(r, 100), -100, 100, wilsonDiff(bo, n, vo, n))
		e.MOVERWilson = moverWilson(pairs, G, conf)
		return e, r, bo, vo
	}

	type modelData struct {
		units map[string]float64     // variant \x00 unit key -> outcome
		uTmpl map[string]int         // unit key -> template
		pairs map[string]float64     // variant \x00 pair key -> per-pair difference
		pTmpl map[string]int         // pair key -> template
		dropR map[string]stats.Ratio // variant -> ratio of per-pair differences
	}
	mdata := make([]modelData, len(models))

	for mi := range models {
		md := modelData{units: map[string]float64{}, uTmpl: map[string]int{}, pairs: map[string]float64{}, pTmpl: map[string]int{}}
		var base *cell
		var baseR stats.Ratio
		var baseK float64
		var baseN int
		if bi, ok := vIdx[BaseVariant]; ok {
			base = cells[mi][bi]
		}
		var dropTests, ansTests, allTests, ddcTests []*Test
		var dropVariants []*VariantSummary
		tmplOfModel := map[int]bool{}
		for vi := range s.Variants {
			c := cells[mi][vi]
			if c == nil {
				continue
			}
			vs := c.vs
			units := make([]*unit, len(c.unitOrder))
			for i, k := range c.unitOrder {
				units[i] = c.units[k]
				md.units[vs.Variant+"\x00"+k] = units[i].y()
				md.uTmpl[vs.Variant+"\x00"+k] = units[i].tmpl
			}
			vs.N = len(units)
			vs.Copies = vs.Scored - vs.N
			vs.Templates = len(c.tmplSeen)
			models[mi].N += vs.N
			models[mi].Copies += vs.Copies
			for g := range c.tmplSeen {
				tmplOfModel[g] = true
			}
			var r stats.Ratio
			vs.AccuracyPct, r, vs.K, _ = accuracy(units)
			if vs.Variant == BaseVariant {
				baseR, baseK, baseN = r, vs.K, vs.N
				continue
			}
			vs.Primary = vs.Variant == p.Primary
			if base != nil && vs.N > 0 && baseN > 0 {
				bv, _ := baseR.Value()
				vv, _ := r.Value()
				ib, iv := inf(baseR, 1), inf(r, 1)
				br, vr := baseR, r
				vs.DropPP = es.add(100*(bv-vv), ib.Combine(100, iv, -100), func(idx []int) (float64, bool) {
					b, ok1 := br.At(idx)
					v, ok2 := vr.At(idx)
					return 100 * (b - v), ok1 && ok2
				}, -100, 100, wilsonDiff(baseK, float64(baseN), vs.K, float64(vs.N)))
				if bv > 0 {
					// rel = 100·(1 − v/b): ∂/∂b = 100·v/b², ∂/∂v = −100/b.
					vs.RelativeDropPct = es.add(100*(bv-vv)/bv, ib.Combine(100*vv/(bv*bv), iv, -100/bv), func(idx []int) (float64, bool) {
						b, ok1 := br.At(idx)
						v, ok2 := vr.At(idx)
						return 100 * (b - v) / b, ok1 && ok2 && b > 0
					}, math.Inf(-1), 100, nil)
				}
			}
			// Pairs.
			pr := vs.Paired
			pairs := make([]*pairUnit, len(c.pairOrder))
			for i, k := range c.pairOrder {
				pairs[i] = c.pairs[k]
				md.pairs[vs.Variant+"\x00"+k] = pairs[i].d()
				md.pTmpl[vs.Variant+"\x00"+k] = pairs[i].tmpl
			}
			pr.Pairs = len(pairs)
			pr.Copies = pr.PairTrials - pr.Pairs
			if len(pairs) > 0 {
				n := float64(len(pairs))
				for _, x := range []struct {
					c *Cell
					f func(q *pairUnit) float64
				}{
					{&pr.BothCorrect, func(q *pairUnit) float64 { return q.both }},
					{&pr.BaseOnly, func(q *pairUnit) float64 { return q.bo }},
					{&pr.VariantOnly, func(q *pairUnit) float64 { return q.vo }},
					{&pr.BothWrong, func(q *pairUnit) float64 { return q.bw }},
				} {
					r := stats.NewRatio(G)
					for _, q := range pairs {
						share := x.f(q) / float64(q.copies)
						r.Add(q.tmpl, share)
						x.c.Count += share
					}
					w := wilson(x.c.Count, n, conf)
					x.c.SharePct = es.add(100*x.c.Count/n, inf(r, 100), scaled(r, 100), 0, 100, w)
					x.c.SharePct.Wilson = w
				}
				var dr stats.Ratio
				pr.PairedDropPP, dr, _, _ = pairedDrop(pairs)
				pr.Test = ts.signFlip(dr)
				pr.Power = power(pairs, G, p)
				if md.dropR == nil {
					md.dropR = map[string]stats.Ratio{}
				}
				md.dropR[vs.Variant] = dr
				dropTests = append(dropTests, pr.Test)
				dropVariants = append(dropVariants, vs)
			}
			// Shifts.
			for _, x := range []struct {
				dst *(*Shift)
				f   func(q *pairUnit) shiftAcc
				thr float64
				col *[]*Test
			}{
				{&vs.AnswerEntropyShift, func(q *pairUnit) shiftAcc { return q.ans }, p.EntropyShiftBits, &ansTests},
				{&vs.EntropyShift, func(q *pairUnit) shiftAcc { return q.all }, p.EntropyShiftBits, &allTests},
				{&vs.DDCMarginShift, func(q *pairUnit) shiftAcc { return q.ddc }, p.DDCMarginShift, &ddcTests},
			} {
				sh := &Shift{Threshold: x.thr}
				*x.dst = sh
				r := stats.NewRatio(G)
				var sb, sv float64
				for _, q := range pairs {
					a := x.f(q)
					if a.n == 0 {
						continue
					}
					sh.Pairs++
					b, v := a.base/float64(a.n), a.vari/float64(a.n)
					sb += b
					sv += v
					r.Add(q.tmpl, v-b)
				}
				if sh.Pairs == 0 {
					continue
				}
				sh.BaseMean, sh.VariantMean = sb/float64(sh.Pairs), sv/float64(sh.Pairs)
				v, _ := r.Value()
				sh.Shift = es.add(v, inf(r, 1), r.At, math.Inf(-1), math.Inf(1), nil)
				sh.Test = ts.signFlip(r)
				*x.col = append(*x.col, sh.Test)
			}
		}
		// Multiplicity across the variants of this model.
		var primaryTest *Test
		var secondary []*Test
		for i, vs := range dropVariants {
			if vs.Primary {
				primaryTest = dropTests[i]
			} else {
				secondary = append(secondary, dropTests[i])
			}
		}
		if primaryTest != nil {
			adjust(alpha, "none: primary variant", primaryTest)
			primaryTest.Family = 1
			adjust(alpha, "holm among secondary variants", secondary...)
		} else {
			adjust(alpha, "holm", dropTests...)
		}
		adjust(alpha, "holm", ansTests...)
		adjust(alpha, "holm", allTests...)
		adjust(alpha, "holm", ddcTests...)
		models[mi].Templates = len(tmplOfModel)
		mdata[mi] = md
	}

	// Differences between models, on the prompts and pairs both were given.
	for a := 0; a < len(models); a++ {
		for b := a + 1; b < len(models); b++ {
			mp := ModelPair{A: models[a].Label, B: models[b].Label, APath: models[a].Path, BPath: models[b].Path}
			for _, v := range s.Variants {
				diff := func(ma, mb map[string]float64, tm map[string]int) (*ModelDifference, stats.Ratio, bool) {
					md := &ModelDifference{Variant: v}
					r := stats.NewRatio(G)
					prefix := v + "\x00"
					var keys []string
					for k := range ma {
						if strings.HasPrefix(k, prefix) {
							if _, ok := mb[k]; ok {
								keys = append(keys, k)
							}
						}
					}
					slices.Sort(keys)
					for _, k := range keys {
						x, y := ma[k], mb[k]
						r.Add(tm[k], x-y)
						if x > y {
							md.AHigher++
						} else if y > x {
							md.BHigher++
						}
					}
					md.Units = len(keys)
					return md, r, len(keys) > 0
				}
				if md, r, ok := diff(mdata[a].units, mdata[b].units, mdata[a].uTmpl); ok {
					val, _ := r.Value()
					n := float64(md.Units)
					md.DiffPP = es.add(100*val, inf(r, 100), scaled(r, 100), -100, 100, wilsonDiff(md.AHigher, n, md.BHigher, n))
					md.Test = ts.signFlip(r)
					mp.Accuracy = append(mp.Accuracy, *md)
				}
				if v == BaseVariant {
					continue
				}
				if md, r, ok := diff(mdata[a].pairs, mdata[b].pairs, mdata[a].pTmpl); ok {
					val, _ := r.Value()
					md.DiffPP = es.add(100*val, inf(r, 100), scaled(r, 100), -200, 200, nil)
					md.Test = ts.signFlip(r)
					mp.Drop = append(mp.Drop, *md)
				}
			}
			s.ModelPairs = append(s.ModelPairs, mp)
		}
	}
	// Holm within each model pair.
	for i := range s.ModelPairs {
		mp := &s.ModelPairs[i]
		var tl []*Test
		for j := range mp.Accuracy {
			tl = append(tl, mp.Accuracy[j].Test)
		}
		for j := range mp.Drop {
			tl = append(tl, mp.Drop[j].Test)
		}
		adjust(alpha, "holm", tl...)
		mp.Family = len(tl)
	}

	// Difficulty: registered before the bootstrap runs.
	for mi, m := range models {
		m.Difficulty = difficulty(cells[mi], s.Variants, G, es, accuracy, pairedDrop)
	}

	es.finish(G)

	// Verdicts, flags.
	rule := stats.DropRule{Negligible: p.NegligibleDropPP, Strong: p.StrongDropPP, Alpha: alpha}
	for mi, m := range models {
		var base *VariantSummary
		if bi, ok := vIdx[BaseVariant]; ok && cells[mi][bi] != nil {
			base = cells[mi][bi].vs
		}
		floor := base != nil && base.AccuracyPct != nil && base.AccuracyPct.Value < FloorAccuracyPct
		m.VerdictRule = "holm"
		for vi := range s.Variants {
			c := cells[mi][vi]
			if c == nil {
				continue
			}
			vs := c.vs
			if vs.Variant != BaseVariant {
				pr := vs.Paired
				if base != nil && pr.PairedDropPP != nil && pr.Test != nil {
					ci := pr.PairedDropPP.CI
					if ci != nil {
						vs.Verdict = stats.ClassifyDrop(ci.Lo, ci.Hi, true, pr.Test.PAdjusted, rule)
					} else {
						vs.Verdict = stats.ClassifyDrop(0, 0, false, pr.Test.PAdjusted, rule)
					}
					if floor {
						vs.Verdict = VerdictFloor
					}
				}
				if pr.Power != nil && pr.Test != nil {
					pr.Power.Alpha = alpha / float64(pr.Test.Family)
					pr.Power.Attainable = pr.Test.Reachable
					if pr.Power.Templates >= 2 {
						mde := 100 * stats.MDE(pr.Power.Templates, pr.Power.PairsPerTemplate,
							stats.Components{Between: pr.Power.Between, Within: pr.Power.Within}, pr.Power.Alpha, p.Power)
						pr.Power.MDEPP = &mde
					}
				}
				for _, sh := range []*Shift{vs.AnswerEntropyShift, vs.EntropyShift, vs.DDCMarginShift} {
					if sh.Shift != nil && sh.Test != nil && sh.Shift.CI != nil {
						sh.Meaningful = stats.ShiftMeaningful(sh.Shift.CI.Lo, sh.Shift.CI.Hi, true, sh.Test.PAdjusted, sh.Threshold, alpha)
					}
				}
				if vs.Verdict != "" {
					if vs.Primary {
						m.Verdict, m.VerdictVariant, m.VerdictRule = vs.Verdict, vs.Variant, "primary"
					} else if m.VerdictRule != "primary" && moreSevere(vs, m) {
						m.Verdict, m.VerdictVariant = vs.Verdict, vs.Variant
					}
				}
			}
			m.Variants = append(m.Variants, *vs)
		}
		s.Models = append(s.Models, *m)
	}
	for i := range s.ModelPairs {
		for _, ds := range [][]ModelDifference{s.ModelPairs[i].Accuracy, s.ModelPairs[i].Drop} {
			for j := range ds {
				x := &ds[j]
				x.Shown = x.DiffPP != nil && x.DiffPP.CI.Excludes0() && x.Test != nil && x.Test.PAdjusted <= alpha
			}
		}
	}
	s.Documents = documentsSummary(trials, s)
	s.Calculator = calculatorSummary(trials, s)
	s.Effort = effortSummaries(trials, s)
	return s, nil
}

// moverWilson returns the MOVER-Wilson interval of the paired drop of
// pairs over G templates, in percentage points (MethodMOVERWilson), or nil
// when it is undefined (fewer than 2 templates). Each side's effective
// sample size is capped at the Kish effective number of its distinct
// prompts, each weighted by the pairs it appears in (stats.KishN): a
// template's base prompt, shared by all the template's pairs, counts once,
// not once per pair. The unit correlation is the Pearson (phi) correlation
// of the pairs' base and variant outcomes.
func moverWilson(pairs []*pairUnit, G int, conf float64) *Interval {
	base, vari := stats.NewRatio(G), stats.NewRatio(G)
	bw, vw := map[string]float64{}, map[string]float64{}
	xs, ys := make([]float64, len(pairs)), make([]float64, len(pairs))
	for i, q := range pairs {
		xs[i], ys[i] = q.b/float64(q.copies), q.v/float64(q.copies)
		base.Add(q.tmpl, xs[i])
		vari.Add(q.tmpl, ys[i])
		bw[q.bkey]++
		vw[q.vkey]++
	}
	m, ok := stats.PairedMOVERWilson(base, vari, stats.KishN(mapValues(bw)), stats.KishN(mapValues(vw)), stats.Pearson(xs, ys), conf)
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

// moreSevere reports whether variant vs's verdict should replace the
// model's current one: more severe, or as severe with a larger paired drop.
func moreSevere(vs *VariantSummary, m *ModelSummary) bool {
	sv, sm := VerdictRank(vs.Verdict), VerdictRank(m.Verdict)
	if m.Verdict == "" || sv > sm {
		return true
	}
	if sv < sm {
		return false
	}
	cur := math.Inf(-1)
	for i := range m.Variants {
		if v := &m.Variants[i]; v.Variant == m.VerdictVariant && v.Paired != nil && v.Paired.PairedDropPP != nil {
			cur = v.Paired.PairedDropPP.Value
		}
	}
	return vs.Paired.PairedDropPP != nil && vs.Paired.PairedDropPP.Value > cur
}

// VerdictRank orders verdicts for the model's verdict: VerdictFloor ranks
// with "no detectable drop" (every variant of a floor model has it).
func VerdictRank(v string) int {
	if v == VerdictFloor {
		return 1
	}
	return stats.Severity(v)
}

// power returns the minimum-detectable-drop inputs of a variant's pairs:
// the variance components of the per-pair differences (observed, or the
// planning defaults when they show no variation) and the pairs per
// template. The pairs of a template share its one base prompt, so the
// estimators put the base's own variance in the between part, which more
// instances do not divide (stats.FixedBaseComponents). MDEPP is filled in
// once the test's family is known.
func power(pairs []*pairUnit, G int, p Params) *Power {
	groups := make([][]float64, G)
	for _, q := range pairs {
		groups[q.tmpl] = append(groups[q.tmpl], q.d())
	}
	c, ok := stats.VarianceComponents(groups)
	pw := &Power{Power: p.Power, Templates: c.Clusters, Source: "observed"}
	if c.Clusters > 0 {
		pw.PairsPerTemplate = float64(c.Units) / float64(c.Clusters)
	}
	if ok && c.N0 > 0 {
		pw.PairsPerTemplate = c.N0
	}
	if !ok || c.Between+c.Within == 0 {
		c.Between, c.Within = PlanningBetween, PlanningWithin
		pw.Source = "planning defaults"
	}
	pw.Between, pw.Within, pw.ICC, pw.WithinIdentified = c.Between, c.Within, c.ICC(), c.WithinIdentified
	return pw
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// modelKey identifies a trial's model: its path, or its name without one,
// with "#" and the condition appended under a condition other than none:
// each model × condition is summarised as a model of its own, so the
// paired differences between models (ModelPairs) include the calculator's
// effect on the same prompts.
func modelKey(t *results.Trial) string {
	k := t.ModelPath
	if k == "" {
		k = t.ModelName
	}
	return results.ConditionItemID(k, t.Condition)
}

// setLabels gives every model a display label: its name and quantization,
// or its file name where that would not be unique.
func setLabels(models []*ModelSummary) {
	count := map[string]int{}
	for _, m := range models {
		m.Label = strings.TrimSpace(m.Name)
		if m.Quantization != "" && !strings.Contains(strings.ToUpper(m.Label), strings.ToUpper(m.Quantization)) {
			m.Label = strings.TrimSpace(m.Label + " " + m.Quantization)
		}
		if m.Label == "" {
			m.Label = filepath.Base(m.Path)
		}
		m.Label += condLabel(m.Condition)
		count[m.Label]++
	}
	for _, m := range models {
		if count[m.Label] > 1 && m.Path != "" {
			m.Label = filepath.Base(m.Path) + condLabel(m.Condition)
		}
	}
	count = map[string]int{}
	for _, m := range models {
		count[m.Label]++
	}
	for i, m := range models {
		if count[m.Label] > 1 {
			m.Label = fmt.Sprintf("%s #%d", m.Label, i+1)
		}
	}
}

// DifficultyAxes are the template attributes the difficulty axis groups by,
// in the order the summary and the narrative list them.
var DifficultyAxes = []string{"level", "steps", "relation"}

// difficulty returns accuracy by level, steps and relation for one model,
// with the paired flips within each group for the other variants.
func difficulty(cells []*cell, variants []string, G int, es *estimates,
	accuracy func([]*unit) (*Estimate, stats.Ratio, float64, int),
	pairedDrop func([]*pairUnit) (*Estimate, stats.Ratio, float64, float64)) []GroupAccuracy {
	var out []GroupAccuracy
	for _, axis := range DifficultyAxes {
		for vi, c := range cells {
			if c == nil {
				continue
			}
			byGroup := map[string][]*unit{}
			var groups []string
			for _, k := range c.unitOrder {
				u := c.units[k]
				g := groupValue(axis, u.level, u.steps, u.relation)
				if _, ok := byGroup[g]; !ok {
					groups = append(groups, g)
				}
				byGroup[g] = append(byGroup[g], u)
			}
			pairsBy := map[string][]*pairUnit{}
			for _, k := range c.pairOrder {
				q := c.pairs[k]
				g := groupValue(axis, q.level, q.steps, q.relation)
				pairsBy[g] = append(pairsBy[g], q)
			}
			slices.SortFunc(groups, func(a, b string) int { return compareGroups(axis, a, b) })
			for _, g := range groups {
				units := byGroup[g]
				ga := GroupAccuracy{Axis: axis, Group: g, Variant: variants[vi]}
				tm := map[int]bool{}
				for _, u := range units {
					tm[u.tmpl] = true
				}
				ga.Templates = len(tm)
				ga.Accuracy, _, ga.K, ga.N = accuracy(units)
				if variants[vi] != BaseVariant {
					if ps := pairsBy[g]; len(ps) > 0 {
						ga.Pairs = len(ps)
						ga.PairedDropPP, _, ga.BaseOnly, ga.VariantOnly = pairedDrop(ps)
					}
				}
				out = append(out, ga)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b GroupAccuracy) int {
		if c := cmp.Compare(slices.Index(DifficultyAxes, a.Axis), slices.Index(DifficultyAxes, b.Axis)); c != 0 {
			return c
		}
		if c := compareGroups(a.Axis, a.Group, b.Group); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(variants, a.Variant), slices.Index(variants, b.Variant))
	})
	return out
}

// groupValue returns the group of a template on a difficulty axis.
func groupValue(axis, level string, steps int, relation string) string {
	switch axis {
	case "level":
		return level
	case "steps":
		return strconv.Itoa(steps)
	}
	return relation
}

// levelOrder is the report order of the GSM-Symbolic difficulty levels.
var levelOrder = []string{"symbolic", "p1", "p2"}

// compareGroups orders the groups of an axis: steps numerically, levels as
// levelOrder (others after, alphabetically, "" last), relations
// alphabetically.
func compareGroups(axis, a, b string) int {
	switch axis {
	case "steps":
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return cmp.Compare(x, y)
	case "level":
		rank := func(s string) int {
			if s == "" {
				return len(levelOrder) + 1
			}
			if i := slices.Index(levelOrder, s); i >= 0 {
				return i
			}
			return len(levelOrder)
		}
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	}
	return strings.Compare(a, b)
}

// OverrideCounts is what the summary says about a run's label overrides.
type OverrideCounts struct {
	File       string `json:"file"`
	SHA256     string `json:"sha256"`
	Overridden int    `json:"overridden_trials"` // trials scored against a corrected answer
	Excluded   int    `json:"excluded_trials"`   // trials left out of every statistic
}

// condLabel is what a model's display label gets for its condition:
// nothing for none, " + calculator" for the calculator.
func condLabel(cond string) string {
	if cond == "" || cond == results.ConditionNone {
		return ""
	}
	return " + " + cond
}

// fnum formats x with prec decimals.
func fnum(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// Variant returns the summary of the named variant, or nil.
func (m *ModelSummary) Variant(name string) *VariantSummary {
	for i := range m.Variants {
		if m.Variants[i].Variant == name {
			return &m.Variants[i]
		}
	}
	return nil
}
