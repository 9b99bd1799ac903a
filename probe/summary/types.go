package summary

// Interval is a two-sided interval at Params.Confidence, in the unit of the
// estimate it belongs to.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// LoOpen and HiOpen say that the limit itself is outside the interval:
	// (Lo, Hi] or [Lo, Hi). Only a paired drop's sign-flip interval from
	// Params.FewTemplates templates has one, where its test, randomized at
	// ties, rejects the limit (0 among them) but not the drops beside it
	// (stats.SignFlipInterval).
	LoOpen bool `json:"lo_open,omitempty"`
	HiOpen bool `json:"hi_open,omitempty"`
	// Method is how it was computed: MethodClusterT, MethodBootstrap,
	// MethodWilson or MethodWilsonDifference.
	Method string `json:"method"`
	// Replicates is, for a bootstrap interval, the number of resamples in
	// which the statistic was defined (at most B); 0 otherwise.
	Replicates int `json:"replicates,omitempty"`
}

// Excludes0 reports whether the interval lies entirely above or below zero
// (an open limit at 0 excludes it).
func (iv *Interval) Excludes0() bool {
	l := limits(iv)
	return l.Above(0) || l.Below(0)
}

// Estimate is a point estimate from all the data with its intervals, in the
// unit of the statistic (percent, percentage points, bits, cosine units).
type Estimate struct {
	Value float64 `json:"value"`
	// CI is the reported interval: for a paired drop, the one
	// stats.PairedDropInterval picks (see estimates.pairedDropCI): SignFlip
	// from Params.FewTemplates templates (the inverted sign-flip test on
	// the template means, randomized at ties, which excludes 0 exactly
	// when the drop's test rejects, with an open limit at 0 where only the
	// tie at 0 is rejected; ClusterT where it is undefined) with its upper limit raised
	// to SkewT's where that is higher (MethodSignFlipSkew), and below, or
	// when the
	// clustered intervals are degenerate, MOVERWilson with its lower limit
	// lowered to SignFlip's where that is defined
	// (MethodMOVERWilsonSignFlip); otherwise
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
	// SignFlip is, for a paired drop with its test only, the inverted
	// sign-flip test (MethodSignFlip), the reported CI from
	// Params.FewTemplates templates when the SE is positive; below, its
	// lower limit bounds the reported one's.
	SignFlip *Interval `json:"sign_flip,omitempty"`
	// SkewT is, for a paired drop with its test only, the skew-corrected
	// t interval of the template means (MethodSkewT): from
	// Params.FewTemplates templates the reported CI's upper limit is at
	// least its upper limit.
	SkewT *Interval `json:"skew_t,omitempty"`
	// MOVERWilson is, for a paired drop only, the MOVER-Wilson interval
	// (MethodMOVERWilson), from which the reported CI is built below
	// Params.FewTemplates templates and whenever the cluster-t interval is
	// degenerate (it is never of zero width).
	MOVERWilson *Interval `json:"mover_wilson,omitempty"`
	// Degenerate is true when SE is 0 or undefined: every template gave the
	// same value, so no clustered interval can say anything (it would print
	// as [v, v], as if certain).
	Degenerate bool `json:"degenerate,omitempty"`
	// NoCI, when not empty, says why no interval is reported (CI is nil)
	// although the data vary: the statistic's coverage simulation showed
	// that no interval from so few templates holds (estimates.addHeavyTailed).
	NoCI string `json:"no_ci,omitempty"`
}

// Test is a paired test against 0 of a statistic built from per-pair
// differences: the sign-flip permutation test over templates
// (stats.SignFlip) with its multiplicity adjustment.
type Test struct {
	// Method is "sign-flip, exact" (all 2^G sign vectors) or "sign-flip,
	// Monte Carlo" (Draws random ones), with ", randomized at ties" for a
	// paired drop from Params.FewTemplates templates (TieU).
	Method string `json:"method"`
	// TieU is the uniform in (0, 1] that breaks the ties at the observed
	// statistic of a randomized test (stats.SignFlipInterval; drawn from
	// the run's sign-flip stream before its sign vectors), 0 when the test
	// is not randomized; PNonRandomized is then the p-value that counts
	// every tie (TieU = 1), the conservative one, which P never exceeds.
	TieU           float64 `json:"tie_u,omitempty"`
	PNonRandomized float64 `json:"p_non_randomized,omitempty"`
	// P is the two-sided p-value, PAdjusted the p-value after the
	// adjustment (equal to P when the test stands alone).
	P         float64 `json:"p"`
	PAdjusted float64 `json:"p_adjusted"`
	// Adjustment names it: "holm" across Family tests (the drops of a
	// model's variants), "none: primary variant", "holm among secondary
	// variants", "holm across measures and variants" (shifts), "holm
	// across strata, measures and variants" (shifts within pairs both
	// right and both wrong), "holm across every model pair" (differences
	// between models), "none (a single test)".
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
	// (stats.PairedDropMDEInformed on the G' = InformativeTemplates
	// templates, G when that is 0 or G: (G'/G)·((t_{1−α/2,G'−1} +
	// t_{power,G'−1})·√((σ²_b + σ²_w/m)/G') + 1/(m·G')), the last term the
	// continuity correction of the sign-flip test's lattice, dropped from
	// Params.FewTemplates templates where the test is randomized at ties;
	// with one pair per template the exact power of the sign-flip test,
	// randomized from Params.FewTemplates, stats.SignTestMDE).
	// Nil when Templates < 2, or when G' is below the fewest templates at
	// which the sign-flip test can reach Alpha (Attainable is then false).
	MDEPP *float64 `json:"mde_pp"`
	// Alpha is the level used: α divided by the Holm family size (the level
	// of Holm's first step), α for a primary variant.
	Alpha     float64 `json:"alpha"`
	Power     float64 `json:"power"`
	Templates int     `json:"templates"`
	// PairsPerTemplate is m, the harmonic mean of the distinct pairs per
	// template (the m at which the equal-weight mean of template means has
	// the variance (σ²_b + σ²_w/m)/G; the plain count when all are equal).
	PairsPerTemplate float64 `json:"pairs_per_template"`
	// InformativeTemplates is G', the number of templates in which the
	// base or the variant is right in at least one pair
	// (stats.InformativeClusters of the right answers per template): a
	// template wrong on both sides in every pair has a mean difference of
	// 0 and, never solved, cannot show a drop, so it does not move the
	// sign-flip test; MDEPP rests on these G' templates and Between,
	// Within and PairsPerTemplate are those of their pairs. 0 when no
	// template has a pair.
	InformativeTemplates int `json:"informative_templates"`
	// Between and Within are σ²_b and σ²_w of the per-pair difference
	// (base right − variant right, 0/1) of the informative templates' pairs
	// (all templates' when none is informative), in squared fractions; ICC
	// is σ²_b/(σ²_b + σ²_w).
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
	// with this many templates (Test.Reachable false) or with this many
	// informative ones (MDEPP nil).
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
	// Split is the template split the run kept (templates.SplitDev or
	// SplitTest; "" for all) and ProtocolSHA256 the frozen protocol it
	// followed ("" for none), from the manifest.
	Split          string `json:"split,omitempty"`
	ProtocolSHA256 string `json:"protocol_sha256,omitempty"`
	// TemplatesLeftOut lists the templates (or files) the run left out of
	// its item set, refused when loaded or unable to draw an instance, with
	// the reason, from the manifest: apart from skipped trials, which were
	// planned and not run.
	TemplatesLeftOut []LeftOut `json:"templates_left_out,omitempty"`
	// Calculator is the calculator condition's section (run --conditions
	// none,calculator); nil when no trial ran with the calculator.
	Calculator *CalculatorSummary `json:"calculator,omitempty"`
	// Effort is the reasoning effort of every summarised model, by variant
	// and difficulty.
	Effort []EffortSummary `json:"effort,omitempty"`
	// Paper is the GSM-Symbolic paper's view of each model's trials
	// (datasets, mean ± sd, beside the clustered intervals; PaperView);
	// nil when no trial comes from a GSM-Symbolic template.
	Paper []PaperView `json:"paper,omitempty"`
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
	// VerdictPAcrossModels is, with several models, the verdict test's
	// adjusted p (Paired.Test.PAdjusted of VerdictVariant) Holm-adjusted
	// again across the VerdictModels models that have one; nil with one.
	VerdictPAcrossModels *float64 `json:"verdict_p_across_models,omitempty"`
	VerdictModels        int      `json:"verdict_models,omitempty"`
	// VerdictPickedCI is, when VerdictVariant was picked as the most severe
	// of VerdictPickedAmong > 1 variants (no primary), its paired drop's
	// cluster-t interval at confidence 1 − α/k (Bonferroni over the k it
	// was picked from); nil otherwise.
	VerdictPickedCI    *Interval `json:"verdict_picked_ci,omitempty"`
	VerdictPickedAmong int       `json:"verdict_picked_among,omitempty"`
	// VerdictUnpicked is, when the verdict's strength was read from
	// VerdictPickedCI and that changed it, the verdict the variant's own
	// (unadjusted) interval gave; "" otherwise.
	VerdictUnpicked string `json:"verdict_unpicked,omitempty"`
	// VerdictNonRandomized is, when the verdict variant's test was
	// randomized at ties (Test.TieU > 0), the verdict the conservative test
	// gives (every tie counted against the drop: Test.PNonRandomized,
	// Holm-adjusted over the same family with every randomized test's
	// conservative p, and the interval's open limits closed), and
	// VerdictPNonRandomized that adjusted p; "" and nil otherwise. When it
	// differs from Verdict the recorded uniform decided the verdict.
	VerdictNonRandomized  string   `json:"verdict_non_randomized,omitempty"`
	VerdictPNonRandomized *float64 `json:"verdict_p_non_randomized,omitempty"`
	// Stability is the answer-stability verdict (StabilityVerdict); nil
	// when no variant keeps the problem's answer or none recorded its
	// extracted answers.
	Stability *StabilityVerdict `json:"stability,omitempty"`
	// Headline is the verdict's first line: the stability verdict when it
	// is unstable or stable, then the drop's ("answers unstable under
	// noop-seeming; drop inconclusive"); the drop's verdict alone otherwise.
	Headline string `json:"headline"`

	// Difficulty is accuracy by difficulty level, by template steps and by
	// relation, per variant, with the paired flips within each group: the
	// difficulty axis, reported apart from robustness.
	Difficulty []GroupAccuracy `json:"difficulty"`
	// Levels is the paired difficulty axis of GSM-Symbolic templates: the
	// accuracy at two levels over the original problems that have both
	// (LevelDifference); nil when the run has no two levels of one original.
	Levels []LevelDifference `json:"levels,omitempty"`
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

	// DropPP is the reference's accuracy (base, or Paired.Reference) −
	// this accuracy in percentage points
	// (positive: worse than base), RelativeDropPct that drop as a
	// percentage of the base accuracy; over all distinct prompts of each
	// variant. Nil for the base variant, without a base, and (relative) at a
	// base accuracy of 0 or when the base accuracy's reported interval
	// reaches 0 (a ratio to a denominator that may be 0 has no usable
	// interval). The verdict rests on Paired.PairedDropPP instead,
	// the drop on matched pairs, which has a paired test.
	DropPP          *Estimate `json:"drop_pp"`
	RelativeDropPct *Estimate `json:"relative_drop_pct"`
	// CutByBudget counts the scored trials whose generation the output
	// budget or a full context ended (stop reason max_tokens or
	// context_full, llm.StopMaxTokens and llm.StopContextFull): from
	// extract/3 on such an answer without a final-answer marker is no
	// answer, so a share of them large enough lowers accuracy by itself.
	CutByBudget int `json:"cut_by_budget"`
	// Errors is the error anatomy of this variant's wrong answers; nil when
	// the run did not record it or no answer was wrong.
	Errors *ErrorAnatomy `json:"errors,omitempty"`
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
	// AnswerLogProbShift is the paired shift of the right answer after the
	// model's own reasoning (soft accuracy; Trial.AnswerLogProb, nats),
	// with its shifts over the pairs finished on both sides and per forced
	// token; nil for base and for a run without it.
	AnswerLogProbShift *AnswerLogProbShift `json:"answer_logprob_shift,omitempty"`
	// AnswerFirstLogProbShift is the paired shift of the answer first
	// (the right answer forced right after the prompt;
	// Trial.AnswerFirstLogProb, nats), with its per-token shift; nil for
	// base and for a run without it.
	AnswerFirstLogProbShift *AnswerLogProbShift `json:"answer_first_logprob_shift,omitempty"`
}

// Paired is the analysis of matched base/variant pairs: the same model,
// template and instance index in base and this variant, both scored.
// Identical (base prompt, variant prompt) pairs count once: Pairs is the
// number of distinct pairs, the denominator of every share here.
type Paired struct {
	// Reference is the variant the pairs compare with when it is not base:
	// "symbolic" when the variant was drawn on the symbolic instance of the
	// same index (run --reference drawn), so the pairs differ in the one
	// factor the variant changes. "" for base.
	Reference string `json:"reference,omitempty"`

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

	// PairedDropPP is the mean over templates of each template's mean
	// per-pair difference (base right − variant right), in percentage
	// points, every template weighted equally (equal to (BaseOnly −
	// VariantOnly)/Pairs when every template holds as many pairs): the drop
	// the verdict and the test rest on.
	PairedDropPP *Estimate `json:"paired_drop_pp"`
	// IntervalCoverage says how far PairedDropPP's reported interval held
	// its 95% in the simulation of PairedDropCoverageMeasured (probe/stats
	// TestCoveragePowerGrid), for a design like this run's:
	// CoverageConservative, CoverageApproximate or CoverageNominal; "" with
	// no interval.
	IntervalCoverage string `json:"interval_coverage,omitempty"`
	// Test is the sign-flip test of PairedDropPP against 0, adjusted across
	// the model's variants (Params.Multiplicity); nil without pairs.
	Test *Test `json:"test"`
	// Power is the minimum detectable paired drop at 80% power for this
	// run's templates and pairs; nil without pairs.
	Power *Power `json:"power"`

	// CutReferencePct and CutVariantPct are the shares of the pairs, in
	// percent, whose reference and whose variant generation the output
	// budget (or a full context) ended. A cut answer is mostly no answer,
	// so a variant cut more often loses accuracy, stability pairs and
	// log-probability to the budget whatever its change does.
	CutReferencePct float64 `json:"cut_reference_pct"`
	CutVariantPct   float64 `json:"cut_variant_pct"`
	// BudgetConfounded is true when the two cut shares differ by more than
	// Params.NegligibleDropPP (the design's negligible margin): the budget,
	// not the variant, may carry the difference. With the variant cut more
	// the verdict does not call a drop shown (a signal becomes
	// VerdictInconclusive); with the reference cut more the drop may be
	// understated, and "no detectable drop" becomes VerdictInconclusive.
	BudgetConfounded bool `json:"budget_confounded,omitempty"`
	// FinishedPairs counts the pairs finished on both sides (no copy cut);
	// FinishedDropPP and FinishedTest are the paired drop and its sign-flip
	// test (unadjusted, from FinishedStream) on those pairs alone, nil when
	// there are none or when every pair finished (then PairedDropPP is it).
	FinishedPairs  int       `json:"finished_pairs"`
	FinishedDropPP *Estimate `json:"finished_drop_pp,omitempty"`
	FinishedTest   *Test     `json:"finished_test,omitempty"`

	// AnswerChanged is answer stability: among the pairs whose expected
	// answers are equal (the variant leaves the problem's answer as it is,
	// as names, paraphrase, noop and noop-seeming do) and in which both
	// sides gave an answer, the pairs whose extracted answers differ, right
	// or wrong; pairs with no answer on a side (cut by the budget, or no
	// number in the response) are left out (AnswerLeftOut). A model that reads the problem gives the same answer to the
	// same problem, so every change is the variant's doing, whether or not
	// the accuracies move. nil unless every pair of the variant keeps its
	// answer: a re-drawn problem (symbolic, numbers) whose draw happens to
	// keep the answer is still another problem.
	AnswerChanged *Rate `json:"answer_changed,omitempty"`
	// AnswerLeftOut is the number of distinct pairs of a variant whose
	// every pair keeps its answer that AnswerChanged leaves out because a
	// side gave no answer in every copy; when it is every pair,
	// AnswerChanged is nil. 0 for a variant that re-draws the answer.
	AnswerLeftOut int `json:"answer_left_out,omitempty"`
	// LossAmongSolved is answer stability about solved problems: among the
	// pairs of a variant that keeps the answer whose reference was answered
	// right (in every copy), the share whose variant lost it: another
	// answer, or none (cut by the budget, or no number; counted in
	// LossNoAnswer). Pairs is its denominator: every solved pair, so that
	// no pair the variant acted on is selected away. nil when AnswerChanged
	// is nil or no such pair exists.
	LossAmongSolved *Rate `json:"loss_among_solved,omitempty"`
	// LossNoAnswer is the part of LossAmongSolved's count lost to no
	// answer on the variant side (copies averaged).
	LossNoAnswer float64 `json:"loss_no_answer,omitempty"`
	// WrongChanged is the volatility of wrong answers: among the pairs of
	// AnswerChanged whose reference was answered wrong (in every copy), the
	// share whose wrong answer changed to another. It says how arbitrary
	// the model's wrong answers are, not how a variant moves solved
	// problems, and no verdict reads it. nil as LossAmongSolved.
	WrongChanged *Rate `json:"wrong_changed,omitempty"`
	// Excess is the loss of solved problems beyond the placebo's
	// (StabilityExcess), the measure the stability verdict tests; nil
	// without a placebo drawn on the same reference, for the placebo
	// itself, and when no solved instance was answered on both sides.
	Excess *StabilityExcess `json:"stability_excess,omitempty"`
	// OriginalRecalled is a recall signal: among the pairs whose expected
	// answers differ (the variant re-draws the numbers), the pairs whose
	// variant answer equals the base's expected answer (the published
	// original's when base holds its values) and not the variant's own.
	// nil when every pair keeps its answer.
	OriginalRecalled *Rate `json:"original_recalled,omitempty"`
}

// Rate is a share of the pairs of one kind (Pairs of them): Count pairs,
// SharePct their share in percent with the estimators of a cell of the
// paired table, except that its reported CI is the Korn–Graubard interval
// at the run's confidence (MethodKornGraubard; the stability verdict's
// method), which holds near 0 and 1 where cluster-t and the bootstrap do
// not.
type Rate struct {
	Pairs int `json:"pairs"`
	Cell
	// KishTemplates is Kish's effective number of templates of the pairs,
	// (Σ n_g)²/Σ n_g² over the pairs n_g of each template (stats.KishN; the
	// templates when each holds as many pairs): the effective sample size
	// of the share when each template's pairs moved together (MethodKornGraubard).
	KishTemplates float64 `json:"kish_templates"`
	// VarianceDF is the Satterthwaite degrees of freedom of the share's CR1
	// variance over the templates (varianceDF): G − 1 when the templates
	// contribute evenly, near 1 when one template holds the changes; 0 when
	// the variance is 0.
	VarianceDF float64 `json:"variance_df"`
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
	// Test is the sign-flip test over templates, Holm-adjusted across the
	// three measures and the model's variants; nil when Pairs = 0.
	Test *Test `json:"test"`
	// Threshold is the margin the interval must clear: max(ThresholdFloor,
	// Params.ShiftMarginSD × ReferenceSD), in the unit of the measure.
	// ThresholdFloor is Params.EntropyShiftBits or Params.DDCMarginShift;
	// ReferenceSD the sample standard deviation across templates of the
	// measure's template means on the reference side of the pairs (0 below
	// two templates).
	Threshold      float64 `json:"threshold"`
	ThresholdFloor float64 `json:"threshold_floor"`
	ReferenceSD    float64 `json:"reference_sd"`
	// Meaningful is stats.ShiftMeaningful: the reported interval lies beyond
	// ±Threshold and the adjusted test reaches α.
	Meaningful bool `json:"meaningful"`
	// BothRight and BothWrong are the shift within the pairs whose answers
	// are both right and both wrong (every copy); nil when there are none.
	BothRight *Stratum `json:"both_right,omitempty"`
	BothWrong *Stratum `json:"both_wrong,omitempty"`
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
	// (distinct pairs) against the variant's reference (base, or the
	// variant it was drawn on): robustness at this difficulty. The paired
	// drop's CI follows the rule of the variant's own paired drop
	// (stats.PairedDropInterval on the group's templates, with its
	// SignFlip and SkewT), unadjusted for the number of groups.
	Pairs        int       `json:"pairs"`
	BaseOnly     float64   `json:"base_right_variant_wrong"`
	VariantOnly  float64   `json:"base_wrong_variant_right"`
	PairedDropPP *Estimate `json:"paired_drop_pp,omitempty"`
	// Test is the sign-flip test of PairedDropPP against 0 on the sign
	// vectors (and tie-breaking uniform) its interval inverts, from the
	// groups' own stream (GroupStream), so that the interval leaves 0 out
	// exactly when it rejects; not adjusted for the number of groups; nil
	// without pairs.
	Test *Test `json:"test,omitempty"`
}

// ModelPair is the paired comparison of two models on the prompts both were
// given, clustered by template: A − B for every variant's accuracy and every
// variant's paired drop. Its tests are Holm-adjusted together with those of
// every other model pair (Family).
type ModelPair struct {
	A     string `json:"a"` // label of the first model (earlier in Summary.Models)
	B     string `json:"b"` // label of the second
	APath string `json:"a_path"`
	BPath string `json:"b_path"`
	// Accuracy holds, per variant, accuracy A − accuracy B in percentage
	// points over the distinct prompts scored for both.
	Accuracy []ModelDifference `json:"accuracy"`
	// Drop holds, per variant other than base, paired drop A − paired drop
	// B in percentage points over the distinct pairs scored for both, the
	// templates weighted equally (the mean of the per-template mean
	// differences, as in Paired.PairedDropPP): positive means A loses more
	// on the variant than B.
	Drop []ModelDifference `json:"drop"`
	// Family is the number of tests in the Holm family: every difference
	// of every model pair of the run, adjusted together.
	Family int `json:"family"`
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

// LeftOut is a template or a file left out of a run's item set, with why.
type LeftOut struct {
	Source   string `json:"source"`
	Template string `json:"template,omitempty"`
	Reason   string `json:"reason"`
}
