package probe

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/fragility/fragility/probe/answer"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	// DefaultConfidence is the confidence level of every interval (0.95).
	DefaultConfidence = 0.95

	// NegligibleDropPP is the drop, in percentage points of accuracy, below
	// which a drop counts as no meaningful drop whatever its interval: on the
	// sizes this probe runs (tens to hundreds of items per variant) one or two
	// items move accuracy by about this much. A drop at or above it needs its
	// bootstrap interval to exclude 0 before it is called a fragility signal.
	NegligibleDropPP = 3.0
	// StrongDropPP is the drop, in percentage points, from which a drop whose
	// bootstrap interval excludes 0 is called a strong fragility signal; it
	// is also the upper bound an interval that includes 0 must stay below to
	// be read as "no meaningful drop" (otherwise the data cannot rule out a
	// strong drop and the verdict is inconclusive). GSM-Symbolic reports
	// drops of this order for the weaker models on its symbolic variant, and
	// far larger ones on the no-op variant.
	StrongDropPP = 10.0
	// EntropyShiftThresholdBits is the mean paired entropy shift, in bits
	// per token, from which a shift whose bootstrap interval excludes 0 is
	// flagged as meaningful: a 0.05-bit shift is flagged, a 0.005-bit one is
	// not, however narrow its interval.
	EntropyShiftThresholdBits = 0.02
	// DDCMarginShiftThreshold is the mean paired shift of the DDC margin (a
	// difference of cosines, unitless) from which a shift whose bootstrap
	// interval excludes 0 is flagged as meaningful.
	DDCMarginShiftThreshold = 0.01

	// BootstrapStream is the PCG stream (second seed word) of the bootstrap
	// generator, rand.NewPCG(uint64(Params.Seed), BootstrapStream): the
	// bootstrap draws are independent of the run order drawn from the same
	// seed. It is "boot" in ASCII.
	BootstrapStream uint64 = 0x626f6f74
)

// Verdicts on a drop, from no signal to the strongest; see ClassifyDrop.
const (
	VerdictComputing    = "computing, not pattern-matching"
	VerdictInconclusive = "inconclusive"
	VerdictModerate     = "moderate fragility signal"
	VerdictStrong       = "strong fragility signal"
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

// Params are the settings of the statistics, recorded in the summary.
type Params struct {
	BootstrapResamples int     `json:"bootstrap_resamples"`          // B ≥ 1
	Seed               int64   `json:"bootstrap_seed"`               // first PCG seed word (as uint64)
	Confidence         float64 `json:"confidence_level"`             // in (0, 1), e.g. 0.95
	NegligibleDropPP   float64 `json:"negligible_drop_pp"`           // see NegligibleDropPP
	StrongDropPP       float64 `json:"strong_drop_pp"`               // see StrongDropPP
	EntropyShiftBits   float64 `json:"entropy_shift_threshold_bits"` // see EntropyShiftThresholdBits
	DDCMarginShift     float64 `json:"ddc_margin_shift_threshold"`   // see DDCMarginShiftThreshold

	// Set by Summarize, for the reader of summary.json.
	RNG              string `json:"rng"`
	AccuracyInterval string `json:"accuracy_interval"`
	Bootstrap        string `json:"bootstrap"`
	ExtractionRules  string `json:"extraction_rules"`
}

// DefaultParams returns the default Params with the given bootstrap seed.
func DefaultParams(seed int64) Params {
	return Params{
		BootstrapResamples: DefaultBootstrapResamples,
		Seed:               seed,
		Confidence:         DefaultConfidence,
		NegligibleDropPP:   NegligibleDropPP,
		StrongDropPP:       StrongDropPP,
		EntropyShiftBits:   EntropyShiftThresholdBits,
		DDCMarginShift:     DDCMarginShiftThreshold,
	}
}

// Interval is a two-sided interval at Params.Confidence, in the unit of the
// estimate it belongs to. Replicates is, for a bootstrap interval, the number
// of resamples in which the statistic was defined (at most B; a resample
// holding no trial of a cell leaves a ratio undefined), and 0 for a closed
// form.
type Interval struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Replicates int     `json:"replicates,omitempty"`
}

// Excludes0 reports whether the interval lies entirely above or below zero.
func (iv *Interval) Excludes0() bool { return iv != nil && (iv.Lo > 0 || iv.Hi < 0) }

// Estimate is a point estimate from all the data with its interval (nil when
// no resample defined the statistic).
type Estimate struct {
	Value float64   `json:"value"`
	CI    *Interval `json:"ci"`
}

// Summary is the statistics of a run: per model × variant accuracies, drops
// versus base, paired flips, entropy and DDC-margin shifts, all with
// denominators and intervals. It is written as summary.json and holds every
// number the narrative prints. No value is NaN or infinite; an undefined
// statistic is a nil pointer (null in JSON).
type Summary struct {
	Params    Params         `json:"params"`
	Trials    int            `json:"trials"`    // rows given to Summarize
	Skipped   int            `json:"skipped"`   // rows with a SkipReason, excluded from every statistic
	Templates []string       `json:"templates"` // the bootstrap clusters, in the order indices are drawn over
	Variants  []string       `json:"variants"`  // in report order, base first
	Models    []ModelSummary `json:"models"`    // in order of first appearance in the trials
}

// ModelSummary is the statistics of one model.
type ModelSummary struct {
	Label        string `json:"label"` // unique display name within the summary
	Path         string `json:"path"`
	Name         string `json:"name"`
	Family       string `json:"family"`
	Quantization string `json:"quantization"`
	Trials       int    `json:"trials"`
	Skipped      int    `json:"skipped"`

	Variants []VariantSummary `json:"variants"` // in Summary.Variants order, present ones only

	// Verdict is the most severe verdict over the variants (see
	// ClassifyDrop; severity computing < inconclusive < moderate < strong),
	// WorstVariant the variant it comes from (the larger drop on ties); both
	// empty without a base variant.
	Verdict      string `json:"verdict"`
	WorstVariant string `json:"worst_variant"`

	// Difficulty is accuracy by template steps and by relation, per variant:
	// the difficulty axis, reported apart from robustness (Paired).
	Difficulty []GroupAccuracy `json:"difficulty"`
}

// VariantSummary is the statistics of one model on one variant. Accuracies,
// drops and shares are in percent (0–100) or percentage points.
type VariantSummary struct {
	Variant string `json:"variant"`
	Trials  int    `json:"trials"`  // rows, skipped included
	Skipped int    `json:"skipped"` // rows excluded for a SkipReason
	N       int    `json:"n"`       // scored trials (Trials − Skipped): the denominator
	K       int    `json:"k"`       // correct trials

	// AccuracyPct is 100·K/N with its Wilson score interval (nil when N = 0);
	// AccuracyBootstrap is its cluster-bootstrap percentile interval.
	AccuracyPct       *Estimate `json:"accuracy_pct"`
	AccuracyBootstrap *Interval `json:"accuracy_bootstrap"`

	// ExpectedAnywhere counts scored trials whose output holds the expected
	// value anywhere (Trial.ExpectedAnywhere), out of N.
	ExpectedAnywhere int `json:"expected_anywhere"`

	// DropPP is base accuracy − this accuracy in percentage points (positive:
	// worse than base), RelativeDropPct that drop as a percentage of the base
	// accuracy; both over all scored trials, with cluster-bootstrap intervals.
	// Nil for the base variant, without a base, and (relative) at a base
	// accuracy of 0.
	DropPP          *Estimate `json:"drop_pp"`
	RelativeDropPct *Estimate `json:"relative_drop_pct"`
	Verdict         string    `json:"verdict"` // ClassifyDrop(DropPP); "" for base

	Paired             *Paired `json:"paired"`               // nil for base
	AnswerEntropyShift *Shift  `json:"answer_entropy_shift"` // bits; Trial.AnswerEntropyMean
	EntropyShift       *Shift  `json:"entropy_shift"`        // bits; Trial.EntropyMean
	DDCMarginShift     *Shift  `json:"ddc_margin_shift"`     // cosine difference; Trial.DDCMargin
}

// Paired is the analysis of matched base/variant pairs: the same model,
// template and instance index in the base and this variant, both scored.
// Shares are in percent of Pairs with cluster-bootstrap intervals.
type Paired struct {
	Pairs        int `json:"pairs"`
	SkippedPairs int `json:"skipped_pairs"` // matched pairs left out because either trial was skipped
	Unmatched    int `json:"unmatched"`     // variant trials whose base partner is missing

	BothCorrect Cell `json:"both_correct"`
	BaseOnly    Cell `json:"base_right_variant_wrong"`
	VariantOnly Cell `json:"base_wrong_variant_right"`
	BothWrong   Cell `json:"both_wrong"`

	// PairedDropPP is (BaseOnly − VariantOnly)/Pairs in percentage points:
	// the drop on the pairs alone.
	PairedDropPP *Estimate `json:"paired_drop_pp"`
}

// Cell is one cell of the paired 2×2 table: a count and its share of the
// pairs in percent (nil share when there are no pairs).
type Cell struct {
	Count    int       `json:"count"`
	SharePct *Estimate `json:"share_pct"`
}

// Shift is the paired shift of a per-trial quantity from base to a variant:
// the mean over pairs of (variant − base), over pairs where both values are
// defined (finite; for entropies at least one generated token; for the DDC
// margin a DDC class recorded).
type Shift struct {
	Pairs       int       `json:"pairs"`
	BaseMean    float64   `json:"base_mean"`    // mean over those pairs, base side
	VariantMean float64   `json:"variant_mean"` // mean over those pairs, variant side
	Shift       *Estimate `json:"shift"`        // VariantMean − BaseMean, with its bootstrap interval; nil when Pairs = 0
	Threshold   float64   `json:"threshold"`    // from Params
	// Meaningful is |Shift| ≥ Threshold with an interval excluding 0.
	Meaningful bool `json:"meaningful"`
}

// GroupAccuracy is the accuracy of one model on one variant within a group
// of templates: Axis "steps" (Group is the step count) or "relation".
type GroupAccuracy struct {
	Axis        string    `json:"axis"`
	Group       string    `json:"group"`
	Variant     string    `json:"variant"`
	N           int       `json:"n"`
	K           int       `json:"k"`
	AccuracyPct *Estimate `json:"accuracy_pct"` // with Wilson interval; nil when N = 0
}

// Wilson returns the Wilson score interval for a binomial proportion with k
// successes out of n trials at the given confidence level, as fractions in
// [0, 1] (E. B. Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22:209–212, 1927):
//
//	centre = (p + z²/2n) / (1 + z²/n)
//	half   = z / (1 + z²/n) · √(p(1−p)/n + z²/4n²)
//
// with p = k/n and z = Φ⁻¹((1+confidence)/2) = √2·erf⁻¹(confidence). Unlike the
// Wald interval it stays within [0, 1] and does not collapse at k = 0 or n.
// It returns ok = false when n < 1, k is outside [0, n] or confidence is not
// in (0, 1).
func Wilson(k, n int, confidence float64) (lo, hi float64, ok bool) {
	if n < 1 || k < 0 || k > n || !(confidence > 0 && confidence < 1) {
		return 0, 0, false
	}
	z := math.Sqrt2 * math.Erfinv(confidence)
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = max(0, centre-half), min(1, centre+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi, true
}

// ClassifyDrop returns the verdict on a drop (in percentage points, with its
// bootstrap interval) under the thresholds in p:
//
//   - VerdictComputing ("computing, not pattern-matching"): no meaningful
//     drop, that is the drop is below p.NegligibleDropPP, or its interval
//     includes 0 and its upper end is below p.StrongDropPP (a strong drop is
//     ruled out). A negative drop (the variant did better) falls here.
//   - VerdictInconclusive: a drop of at least p.NegligibleDropPP whose
//     interval includes 0 but reaches p.StrongDropPP, or has no interval:
//     too few templates to tell either way.
//   - VerdictModerate: interval excludes 0, drop below p.StrongDropPP.
//   - VerdictStrong ("strong fragility signal"): interval excludes 0 and the
//     drop is at least p.StrongDropPP.
//
// It returns "" for a nil drop.
func ClassifyDrop(drop *Estimate, p Params) string {
	switch {
	case drop == nil:
		return ""
	case drop.Value < p.NegligibleDropPP:
		return VerdictComputing
	case drop.CI == nil:
		return VerdictInconclusive
	case drop.CI.Lo <= 0 && drop.CI.Hi < p.StrongDropPP:
		return VerdictComputing
	case drop.CI.Lo <= 0:
		return VerdictInconclusive
	case drop.Value >= p.StrongDropPP:
		return VerdictStrong
	default:
		return VerdictModerate
	}
}

// severity orders verdicts; unknown and "" are lowest.
func severity(v string) int {
	switch v {
	case VerdictFloor:
		return 1
	case VerdictComputing:
		return 1
	case VerdictInconclusive:
		return 2
	case VerdictModerate:
		return 3
	case VerdictStrong:
		return 4
	}
	return 0
}

// variantOrder is the report order of the known variants.
var variantOrder = []string{BaseVariant, "names", "numbers", "symbolic", "paraphrase", "noop"}

// ratio is a statistic Σ num / Σ den over templates, with one entry per
// template (cluster); a resample sums the entries of the drawn templates.
type ratio struct{ num, den []float64 }

func newRatio(t int) ratio { return ratio{make([]float64, t), make([]float64, t)} }

// at returns the statistic over the clusters idx (nil: every cluster once).
func (r ratio) at(idx []int) (float64, bool) {
	var n, d float64
	if idx == nil {
		for i := range r.num {
			n += r.num[i]
			d += r.den[i]
		}
	} else {
		for _, i := range idx {
			n += r.num[i]
			d += r.den[i]
		}
	}
	if d == 0 {
		return 0, false
	}
	return n / d, true
}

// bootStat is one bootstrapped statistic: a function of a resample and the
// replicates it gave.
type bootStat struct {
	f    func(idx []int) (float64, bool)
	reps []float64
	dst  **Interval
}

// Summarize computes the statistics of a run from its trials.
//
// Trials are grouped by model (ModelPath, or ModelName when the path is
// empty) and variant; skipped trials (SkipReason ≠ "") are counted and left
// out of every statistic; nothing is filtered to items the model solved in
// the base variant. Pairs match a variant trial with the base trial of the
// same model, template and instance index.
//
// Intervals: accuracy has a Wilson score interval (see Wilson) and, like every
// other statistic, a cluster-bootstrap percentile interval. The clusters are
// the templates with at least one scored trial, sorted by ID. Each of the B
// resamples draws len(templates) indices with replacement (r.IntN, in order,
// from rand.New(rand.NewPCG(uint64(p.Seed), BootstrapStream))), and this one
// resample is used for every model, variant and statistic of that iteration,
// so differences between variants and models keep their template
// correlation (cluster bootstrap: Field & Welsh 2007, JRSS B 69:369–390;
// Cameron, Gelbach & Miller 2008, REStat 90:414–427). A statistic in a
// resample is the ratio of the resampled sums (e.g. Σ correct / Σ scored).
// The interval is the percentile interval of the replicates where the
// statistic is defined (Efron & Tibshirani 1993, §13.3): their empirical
// quantiles at (1−c)/2 and (1+c)/2 (see empiricalQuantile).
//
// The result is a deterministic function of trials and p. Zero fields of p
// (B, confidence, thresholds) take the defaults of DefaultParams. It returns
// an error for invalid params or when two trials share model, template,
// variant and instance.
func Summarize(trials []Trial, p Params) (*Summary, error) {
	d := DefaultParams(p.Seed)
	if p.BootstrapResamples == 0 {
		p.BootstrapResamples = d.BootstrapResamples
	}
	if p.Confidence == 0 {
		p.Confidence = d.Confidence
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
	if p.BootstrapResamples < 1 {
		return nil, fmt.Errorf("probe: bootstrap resamples must be at least 1, got %d", p.BootstrapResamples)
	}
	if !(p.Confidence > 0 && p.Confidence < 1) {
		return nil, fmt.Errorf("probe: confidence level must be in (0, 1), got %v", p.Confidence)
	}
	if p.NegligibleDropPP < 0 || p.StrongDropPP < p.NegligibleDropPP || p.EntropyShiftBits < 0 || p.DDCMarginShift < 0 {
		return nil, errors.New("probe: thresholds must be ≥ 0 with strong ≥ negligible")
	}
	p.RNG = fmt.Sprintf("math/rand/v2 rand.New(rand.NewPCG(%d, %#x)); per resample, IntN(len(templates)) drawn len(templates) times", uint64(p.Seed), BootstrapStream)
	p.AccuracyInterval = "Wilson score interval (Wilson 1927)"
	p.Bootstrap = "cluster bootstrap over templates, one resample shared by every model and variant per iteration; percentile interval (Efron & Tibshirani 1993)"
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
			models = append(models, &ModelSummary{Path: t.ModelPath, Name: t.ModelName, Family: t.ModelFamily, Quantization: t.Quantization})
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
	s.Templates = make([]string, 0, len(templateSet))
	for t := range templateSet {
		s.Templates = append(s.Templates, t)
	}
	sort.Strings(s.Templates)
	tIdx := make(map[string]int, len(s.Templates))
	for i, t := range s.Templates {
		tIdx[t] = i
	}
	T := len(s.Templates)
	setLabels(models)

	// Per model × variant sums over templates.
	type cell struct {
		vs                        *VariantSummary
		acc                       ratio // correct / scored
		bothC, baseO, varO, bothW ratio // cell count / pairs
		ansEnt, allEnt, ddc       ratio // Σ(variant − base) / pairs with both defined
		ansB, ansV, allB, allV    float64
		ddcB, ddcV                float64
	}
	cells := make([][]*cell, len(models))
	for mi := range models {
		cells[mi] = make([]*cell, len(s.Variants))
	}
	vIdx := map[string]int{}
	for i, v := range s.Variants {
		vIdx[v] = i
	}
	getCell := func(mi, vi int) *cell {
		if cells[mi][vi] == nil {
			c := &cell{vs: &VariantSummary{Variant: s.Variants[vi]}, acc: newRatio(T)}
			if s.Variants[vi] != BaseVariant {
				c.bothC, c.baseO, c.varO, c.bothW = newRatio(T), newRatio(T), newRatio(T), newRatio(T)
				c.ansEnt, c.allEnt, c.ddc = newRatio(T), newRatio(T), newRatio(T)
				c.vs.Paired = &Paired{}
				c.vs.AnswerEntropyShift = &Shift{Threshold: p.EntropyShiftBits}
				c.vs.EntropyShift = &Shift{Threshold: p.EntropyShiftBits}
				c.vs.DDCMarginShift = &Shift{Threshold: p.DDCMarginShift}
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
			c.vs.N++
			c.acc.den[ti]++
			if t.Correct {
				c.vs.K++
				c.acc.num[ti]++
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
		ti := tIdx[t.TemplateID]
		pr := c.vs.Paired
		pr.Pairs++
		for _, r := range []ratio{c.bothC, c.baseO, c.varO, c.bothW} {
			r.den[ti]++
		}
		switch {
		case b.Correct && t.Correct:
			pr.BothCorrect.Count++
			c.bothC.num[ti]++
		case b.Correct:
			pr.BaseOnly.Count++
			c.baseO.num[ti]++
		case t.Correct:
			pr.VariantOnly.Count++
			c.varO.num[ti]++
		default:
			pr.BothWrong.Count++
			c.bothW.num[ti]++
		}
		if b.Tokens > 0 && t.Tokens > 0 && finite(b.AnswerEntropyMean, t.AnswerEntropyMean) {
			c.vs.AnswerEntropyShift.Pairs++
			c.ansB += b.AnswerEntropyMean
			c.ansV += t.AnswerEntropyMean
			c.ansEnt.num[ti] += t.AnswerEntropyMean - b.AnswerEntropyMean
			c.ansEnt.den[ti]++
		}
		if b.Tokens > 0 && t.Tokens > 0 && finite(b.EntropyMean, t.EntropyMean) {
			c.vs.EntropyShift.Pairs++
			c.allB += b.EntropyMean
			c.allV += t.EntropyMean
			c.allEnt.num[ti] += t.EntropyMean - b.EntropyMean
			c.allEnt.den[ti]++
		}
		if b.DDCTop != "" && t.DDCTop != "" && finite(b.DDCMargin, t.DDCMargin) {
			c.vs.DDCMarginShift.Pairs++
			c.ddcB += b.DDCMargin
			c.ddcV += t.DDCMargin
			c.ddc.num[ti] += t.DDCMargin - b.DDCMargin
			c.ddc.den[ti]++
		}
	}

	// Point estimates and the statistics to bootstrap.
	var boots []*bootStat
	add := func(f func(idx []int) (float64, bool), dst **Interval) {
		boots = append(boots, &bootStat{f: f, dst: dst})
	}
	pct := func(r ratio) func([]int) (float64, bool) {
		return func(idx []int) (float64, bool) {
			v, ok := r.at(idx)
			return 100 * v, ok
		}
	}
	estimate := func(f func([]int) (float64, bool)) *Estimate {
		v, ok := f(nil)
		if !ok {
			return nil
		}
		return &Estimate{Value: v}
	}
	for mi := range models {
		var base *cell
		if bi, ok := vIdx[BaseVariant]; ok {
			base = cells[mi][bi]
		}
		for vi := range s.Variants {
			c := cells[mi][vi]
			if c == nil {
				continue
			}
			vs := c.vs
			if lo, hi, ok := Wilson(vs.K, vs.N, p.Confidence); ok {
				vs.AccuracyPct = &Estimate{Value: 100 * float64(vs.K) / float64(vs.N), CI: &Interval{Lo: 100 * lo, Hi: 100 * hi}}
				add(pct(c.acc), &vs.AccuracyBootstrap)
			}
			if s.Variants[vi] == BaseVariant {
				continue
			}
			if base != nil {
				accB, accV := pct(base.acc), pct(c.acc)
				drop := func(idx []int) (float64, bool) {
					b, ok1 := accB(idx)
					v, ok2 := accV(idx)
					return b - v, ok1 && ok2
				}
				rel := func(idx []int) (float64, bool) {
					b, ok1 := accB(idx)
					v, ok2 := accV(idx)
					return 100 * (b - v) / b, ok1 && ok2 && b > 0
				}
				if vs.DropPP = estimate(drop); vs.DropPP != nil {
					add(drop, &vs.DropPP.CI)
				}
				if vs.RelativeDropPct = estimate(rel); vs.RelativeDropPct != nil {
					add(rel, &vs.RelativeDropPct.CI)
				}
			}
			pr := vs.Paired
			for _, x := range []struct {
				c *Cell
				r ratio
			}{{&pr.BothCorrect, c.bothC}, {&pr.BaseOnly, c.baseO}, {&pr.VariantOnly, c.varO}, {&pr.BothWrong, c.bothW}} {
				if x.c.SharePct = estimate(pct(x.r)); x.c.SharePct != nil {
					add(pct(x.r), &x.c.SharePct.CI)
				}
			}
			pdrop := func(bo, vo ratio) func([]int) (float64, bool) {
				return func(idx []int) (float64, bool) {
					a, ok := bo.at(idx)
					b, _ := vo.at(idx)
					return 100 * (a - b), ok
				}
			}(c.baseO, c.varO)
			if pr.PairedDropPP = estimate(pdrop); pr.PairedDropPP != nil {
				add(pdrop, &pr.PairedDropPP.CI)
			}
			for _, x := range []struct {
				sh   *Shift
				r    ratio
				b, v float64
			}{{vs.AnswerEntropyShift, c.ansEnt, c.ansB, c.ansV}, {vs.EntropyShift, c.allEnt, c.allB, c.allV}, {vs.DDCMarginShift, c.ddc, c.ddcB, c.ddcV}} {
				if x.sh.Pairs == 0 {
					continue
				}
				x.sh.BaseMean = x.b / float64(x.sh.Pairs)
				x.sh.VariantMean = x.v / float64(x.sh.Pairs)
				x.sh.Shift = estimate(x.r.at)
				add(x.r.at, &x.sh.Shift.CI)
			}
		}
	}

	// The cluster bootstrap: one resample of templates per iteration, shared
	// by every statistic.
	if T > 0 && len(boots) > 0 {
		rng := rand.New(rand.NewPCG(uint64(p.Seed), BootstrapStream))
		idx := make([]int, T)
		for range p.BootstrapResamples {
			for j := range idx {
				idx[j] = rng.IntN(T)
			}
			for _, b := range boots {
				if v, ok := b.f(idx); ok {
					b.reps = append(b.reps, v)
				}
			}
		}
		for _, b := range boots {
			*b.dst = percentileInterval(b.reps, p.Confidence)
		}
	}

	// Verdicts, flags, difficulty.
	for mi, m := range models {
		for vi := range s.Variants {
			c := cells[mi][vi]
			if c == nil {
				continue
			}
			vs := c.vs
			if vs.Variant != BaseVariant {
				vs.Verdict = ClassifyDrop(vs.DropPP, p)
				if b := cells[mi][0]; vs.Verdict != "" && b != nil && b.vs.Variant == BaseVariant &&
					b.vs.AccuracyPct != nil && b.vs.AccuracyPct.Value < FloorAccuracyPct {
					vs.Verdict = VerdictFloor
				}
				for _, sh := range []*Shift{vs.AnswerEntropyShift, vs.EntropyShift, vs.DDCMarginShift} {
					sh.Meaningful = sh.Shift != nil && math.Abs(sh.Shift.Value) >= sh.Threshold && sh.Shift.CI.Excludes0()
				}
				if sv, sw := severity(vs.Verdict), severity(m.Verdict); sv > sw || (sv == sw && sv > 0 && vs.DropPP.Value > dropOf(m)) {
					m.Verdict, m.WorstVariant = vs.Verdict, vs.Variant
				}
			}
			m.Variants = append(m.Variants, *vs)
		}
		m.Difficulty = difficulty(trials, modelKeyOf(m), s.Variants, p.Confidence)
		s.Models = append(s.Models, *m)
	}
	return s, nil
}

// dropOf returns the drop of a model's current worst variant.
func dropOf(m *ModelSummary) float64 {
	for _, v := range m.Variants {
		if v.Variant == m.WorstVariant && v.DropPP != nil {
			return v.DropPP.Value
		}
	}
	return math.Inf(-1)
}

// percentileInterval returns the percentile interval of the replicates at
// confidence c, or nil when there are none. reps is sorted in place.
func percentileInterval(reps []float64, c float64) *Interval {
	if len(reps) == 0 {
		return nil
	}
	sort.Float64s(reps)
	return &Interval{
		Lo:         empiricalQuantile(reps, (1-c)/2),
		Hi:         empiricalQuantile(reps, (1+c)/2),
		Replicates: len(reps),
	}
}

// empiricalQuantile returns the p-quantile of sorted as the inverse of the
// empirical distribution function: the ⌈p·n⌉-th smallest value (Hyndman &
// Fan 1996, "Sample quantiles in statistical packages", definition 1). This
// is the percentile of Efron & Tibshirani (1993, §13.3): with B = 1000
// replicates the 95% interval runs from the 25th to the 975th. p·n within
// 1e-9 of an integer is taken as that integer, so that the rounding of
// (1 − 0.95)/2 in binary does not move the end by one replicate.
func empiricalQuantile(sorted []float64, p float64) float64 {
	k := p * float64(len(sorted))
	if r := math.Round(k); math.Abs(k-r) < 1e-9 {
		k = r
	}
	i := int(math.Ceil(k))
	return sorted[min(max(i, 1), len(sorted))-1]
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// modelKey identifies a trial's model: its path, or its name without one.
func modelKey(t *Trial) string {
	if t.ModelPath != "" {
		return t.ModelPath
	}
	return t.ModelName
}

func modelKeyOf(m *ModelSummary) string {
	if m.Path != "" {
		return m.Path
	}
	return m.Name
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
		count[m.Label]++
	}
	for _, m := range models {
		if count[m.Label] > 1 && m.Path != "" {
			m.Label = filepath.Base(m.Path)
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

// difficulty returns accuracy by steps and by relation for one model.
func difficulty(trials []Trial, model string, variants []string, conf float64) []GroupAccuracy {
	type gk struct{ axis, group, variant string }
	acc := map[gk]*GroupAccuracy{}
	for i := range trials {
		t := &trials[i]
		if modelKey(t) != model || t.Skipped() {
			continue
		}
		for _, k := range []gk{{"steps", strconv.Itoa(t.Steps), t.Variant}, {"relation", t.Relation, t.Variant}} {
			g := acc[k]
			if g == nil {
				g = &GroupAccuracy{Axis: k.axis, Group: k.group, Variant: k.variant}
				acc[k] = g
			}
			g.N++
			if t.Correct {
				g.K++
			}
		}
	}
	out := make([]GroupAccuracy, 0, len(acc))
	for _, g := range acc {
		if lo, hi, ok := Wilson(g.K, g.N, conf); ok {
			g.AccuracyPct = &Estimate{Value: 100 * float64(g.K) / float64(g.N), CI: &Interval{Lo: 100 * lo, Hi: 100 * hi}}
		}
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b GroupAccuracy) int {
		if c := strings.Compare(b.Axis, a.Axis); c != 0 { // "steps" before "relation"
			return c
		}
		if a.Axis == "steps" {
			x, _ := strconv.Atoi(a.Group)
			y, _ := strconv.Atoi(b.Group)
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
		} else if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(variants, a.Variant), slices.Index(variants, b.Variant))
	})
	return out
}
