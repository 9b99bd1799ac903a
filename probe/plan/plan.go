package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/bench"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// DefaultMaxTemplates is the largest number of templates a plan searches.
const DefaultMaxTemplates = 100000

// MaxTemplatesLimit is the largest PlanOptions.MaxTemplates (plan
// --max-templates) a plan searches up to: the power at a bound is computed
// once per instance count, and with one instance per template (the exact
// sign test) its cost grows with the bound: about 1 s at 10⁶, several
// minutes at 2³¹ (measured with plan --drop 0.5).
const MaxTemplatesLimit = 1000000

// CheckMaxTemplates refuses a bound of the templates a plan searches (plan
// --max-templates) outside [2, MaxTemplatesLimit], as a probe.OptionError
// naming the flag: fewer than 2 templates have no paired-drop test.
func CheckMaxTemplates(n int) error {
	if n < 2 || n > MaxTemplatesLimit {
		return probe.OptionErrorf("--max-templates must be between 2 and %d, got %d", MaxTemplatesLimit, n)
	}
	return nil
}

// RunPlanOptions are the inputs of PlanRun besides the run's Config.
type RunPlanOptions struct {
	// Sizing sizes the run and its shards (see PlanShards).
	Sizing ShardPlanOptions
	// Power is the power analysis's drop, level, power, variance
	// components and search bound; PlanRun sets its Templates, Instances,
	// Variants and Primary from the run.
	Power PlanOptions
	// From is a previous run directory (optional). It gives the sizing its
	// generation rate and mean tokens per item (RunThroughput) where
	// Sizing has none, and the power analysis its variance components
	// (PooledComponents of the run re-read with probe.Recompute) unless
	// ComponentsGiven: with components that cannot be estimated (no
	// paired difference varies) the planning defaults stay, and
	// Power.ComponentsSource says why.
	From            string
	ComponentsGiven bool
	// Calibrate, when not nil, measures what neither Sizing nor From gives,
	// the rate and the tokens per item, by generating each model's first
	// CalibrateItems items of the plan (bench.DefaultCalibrationItems when
	// 0; whole batches) as run would (see planRate).
	Calibrate      Calibrator
	CalibrateItems int
	// LastBench is the record of the last bench on this machine
	// (bench.ReadLast of LastBenchPath; nil: none): the rate when none is
	// given and it ran the plan's one model at the plan's batch and
	// threads (LastBenchThroughput). Load are the load parameters the run
	// will use (threads, threads of a batch, GPU layers).
	LastBench     *bench.Last
	LastBenchPath string
	Load          llm.Params
	// FallbackRate is the rate when nothing above gives one (a preset's
	// recorded rate; zero: none).
	FallbackRate Throughput
}

// RunPlan is the output of `fragility plan`: the size of the run that `run`
// would start with the same flags, then what it can detect.
type RunPlan struct {
	Sizing *ShardPlan `json:"sizing"`
	Power  *Plan      `json:"power"` // nil for a run of base alone
	// LeftOut lists the templates (or files) the set leaves out, refused
	// when loaded or unable to draw, as run leaves them out.
	LeftOut []templates.Skip `json:"templates_left_out,omitempty"`
	// Notices are the set's templates' notices (templates.TemplateInfo.
	// Notice: an answer taken from answer_annotated), as run logs them.
	Notices []string `json:"template_notices,omitempty"`
	// PilotCut is what the pilot (RunPlanOptions.From) says of the answers
	// the planned output budget would cut; nil without a pilot.
	PilotCut *PilotCut `json:"pilot_cut,omitempty"`
	// PilotNotes say where the pilot differs from the planned run (its
	// models, variants or reference design): its rate, tokens and variance
	// components are then those of another run (pilotDiffers).
	PilotNotes []string `json:"pilot_notes,omitempty"`
	// Calibration is what the calibration of each model measured
	// (RunPlanOptions.Calibrate; nil when none ran), RateNotes what the
	// reader should know of the rate's source (a calibration that failed,
	// a last bench that does not apply).
	Calibration []*bench.Calibration `json:"calibration,omitempty"`
	RateNotes   []string             `json:"rate_notes,omitempty"`
	// CountedFrom is the file of the plan's cache (CountCacheDir) the
	// set's counts were read from: the same templates and options were
	// drawn by an earlier plan; "" when they were drawn now.
	CountedFrom string `json:"counted_from,omitempty"`
}

// PlanRun plans the run cfg defines, loading no model itself (a
// calibration is o.Calibrate's): it counts the item set as `run` draws it
// (countedSet: templates that do not load or draw are skipped and
// counted; read from the plan's cache when the same set was drawn
// before), finds a rate and tokens per item where none is given
// (planRate), sizes the set and its shards (PlanShards), and runs the
// power analysis (MakePlan) at the run's size: G = the number of templates
// the set holds, m = cfg.Instances, the Holm family from cfg.Variants and
// cfg.Primary. Errors: probe.OptionError for an option out of range; an error
// naming the file for templates, models or a From directory that cannot
// be read.
func PlanRun(cfg rundir.Config, o RunPlanOptions) (*RunPlan, error) {
	po, drawn, set, err := runPowerOptions(cfg, o)
	if err != nil {
		return nil, err
	}
	// A run of base alone has no drop to plan for: it is sized, with no
	// power analysis.
	onlyBase := !slices.ContainsFunc(po.Variants, func(v string) bool { return v != summary.BaseVariant })
	if !onlyBase {
		if err := po.checkGiven(); err != nil {
			return nil, err
		}
		if err := po.check(); err != nil {
			return nil, err
		}
	}
	pilotComps := false // the variance components are the pilot's
	var pilot *rundir.Manifest
	var pilotTrials []results.Trial
	if o.From != "" {
		if pilot, pilotTrials, err = probe.ReadRun(o.From); err != nil {
			return nil, err
		}
		if pilotComps, err = fromPilot(&po, &o, drawn, cfg.MaxTokens, pilot, pilotTrials); err != nil {
			return nil, err
		}
	}
	counted := "" // the plan's cache file the set was read from
	if set == nil {
		if set, counted, err = countedSet(cfg); err != nil {
			return nil, err
		}
	}
	if err := probe.CheckLeftOut(cfg, set); err != nil {
		return nil, err
	}
	if err := probe.CheckSetCovers(cfg, set); err != nil {
		return nil, err
	}
	cals, rateNotes, err := planRate(cfg, set, counted != "", &o)
	if err != nil {
		return nil, err
	}
	sizing, err := planShards(cfg, set, o.Sizing)
	if err != nil {
		return nil, err
	}
	po.Templates = setTemplates(set)
	if len(cfg.Datasets) > 0 {
		po.Templates, po.Instances = probe.DatasetPairs(set)
	}
	var power *Plan
	if !onlyBase {
		if power, err = MakePlan(po); err != nil {
			return nil, err
		}
	}
	rp := &RunPlan{Sizing: sizing, Power: power, LeftOut: set.Skipped, Notices: set.Notices(), Calibration: cals, RateNotes: rateNotes, CountedFrom: counted}
	if o.From != "" {
		rp.PilotCut = pilotCut(o.From, pilot.Config.MaxTokens, cfg.MaxTokens, pilotTrials)
		rp.PilotNotes = append(pilotState(o.From, pilot, cfg, len(pilotTrials)), pilotDiffers(o.From, pilot, cfg, pilotComps)...)
	}
	return rp, nil
}

// runPowerOptions returns the power analysis's options for the run cfg:
// o.Power with the run's instances, primary variant and variants (the
// drawn references added when its design is the drawn one, as drawn
// reports), and unless o.ComponentsGiven the variance components of that
// design. For document items it generates the set, whose variants are the
// analysis's (set; nil otherwise).
func runPowerOptions(cfg rundir.Config, o RunPlanOptions) (po PlanOptions, drawn bool, set *templates.Set, err error) {
	po = o.Power
	po.Instances, po.Primary = cfg.Instances, cfg.Primary
	po.Variants = make([]string, len(cfg.Variants))
	for i, v := range cfg.Variants {
		po.Variants[i] = string(v)
	}
	drawn = cfg.DrawnDesign()
	if drawn && !slices.Contains(po.Variants, string(templates.VariantSymbolic)) {
		// The drawn references are run too, and their drop against base is
		// tested with the others.
		po.Variants = append(po.Variants, string(templates.VariantSymbolic))
	}
	if !o.ComponentsGiven {
		po.Between, po.Within, po.ComponentsSource = summary.PlanningComponents(drawn)
	}
	if cfg.Items != "" {
		// Document items: a requested "paraphrase" is one variant per
		// paraphrase, so the Holm family is the set's variants.
		if set, err = probe.GenerateSet(cfg); err != nil {
			return po, drawn, nil, err
		}
		po.Variants = po.Variants[:0]
		for _, in := range set.Instances {
			if !slices.Contains(po.Variants, string(in.Variant)) {
				po.Variants = append(po.Variants, string(in.Variant))
			}
		}
	}
	return po, drawn, set, nil
}

// pilotState says what of the pilot run in dir (its manifest man, trials
// rows in results.csv) a plan for cfg should know before it trusts the
// numbers taken from it: a run that did not finish (its rate, tokens per
// item and components rest on the rows it wrote) and a budget other than
// the plan's (its answers are capped at the plan's, as RunThroughput says).
func pilotState(dir string, man *rundir.Manifest, cfg rundir.Config, trials int) []string {
	var notes []string
	if man.Status != "" && man.Status != "complete" { // "": a run written before the status was kept
		notes = append(notes, fmt.Sprintf("the pilot %s is not complete (status %q, %d trials in its results.csv): what the plan takes from it rests on those", dir, man.Status, trials))
	}
	if b := man.Config.MaxTokens; b > 0 && b != cfg.MaxTokens {
		notes = append(notes, fmt.Sprintf("the pilot %s ran at --max-tokens %d, the plan is at %d (give --max-tokens %d to plan the pilot's budget)", dir, b, cfg.MaxTokens, b))
	}
	return notes
}

// pilotDiffers says where the pilot run (its manifest man, in dir)
// differs from the planned run's cfg in what the plan takes from it: the
// models (sameModels: by sha256; the rate, tokens per item and, when comps,
// the variance components are the pilot's models'), and, when comps, the
// variants (the components are pooled over the pilot's) and the reference
// design of the pairs (both runs comparing some variant with a reference).
func pilotDiffers(dir string, man *rundir.Manifest, cfg rundir.Config, comps bool) []string {
	var notes []string
	pilot := man.Config
	if len(cfg.Models) > 0 && !sameModels(man, cfg.Models) {
		what := "rate and tokens per item are"
		if comps {
			what = "rate, tokens per item and variance components are"
		}
		notes = append(notes, fmt.Sprintf("the pilot %s ran %s, the plan %s: its %s those of the pilot's models", dir, modelNames(pilot.Models), modelNames(cfg.Models), what))
	}
	pairs := func(c rundir.Config) bool {
		return slices.ContainsFunc(c.Variants, func(v templates.Variant) bool { return string(v) != summary.BaseVariant })
	}
	if !comps || !pairs(cfg) { // no components taken, or no drop to plan for
		return notes
	}
	vs := func(v []templates.Variant) string {
		var out []string
		for _, x := range v {
			out = append(out, string(x))
		}
		return strings.Join(out, ",")
	}
	if vs(pilot.Variants) != vs(cfg.Variants) {
		notes = append(notes, fmt.Sprintf("the pilot %s ran the variants %s, the plan %s: its variance components are pooled over the pilot's variants", dir, vs(pilot.Variants), vs(cfg.Variants)))
	}
	if pilot.DrawnDesign() != cfg.DrawnDesign() {
		notes = append(notes, fmt.Sprintf("the pilot %s compared its variants with %s, the plan with %s: the variance components of the two designs differ", dir, refWords(pilot.DrawnDesign()), refWords(cfg.DrawnDesign())))
	}
	return notes
}

// modelNames lists the file names of model paths, comma-separated.
func modelNames(paths []string) string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return strings.Join(out, ", ")
}

// sameModels reports whether the pilot run of manifest man ran the model
// files paths: the same files, in any order, by sha256 (a model named from
// a store and the same file given by its path are one model). A file whose
// size differs from every pilot model's is another model without being
// hashed. A manifest without the models' sha256 (written by hand, or before
// they were recorded) is compared by file name.
func sameModels(man *rundir.Manifest, paths []string) bool {
	if len(man.Models) != len(man.Config.Models) || len(man.Models) == 0 || slices.ContainsFunc(man.Models, func(m rundir.ModelEntry) bool { return m.SHA256 == "" }) {
		return modelNames(man.Config.Models) == modelNames(paths)
	}
	if len(paths) != len(man.Models) {
		return false
	}
	var want, got []string
	for _, m := range man.Models {
		want = append(want, m.SHA256)
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !slices.ContainsFunc(man.Models, func(m rundir.ModelEntry) bool { return m.Size == 0 || m.Size == st.Size() }) {
			return false
		}
		sum, err := models.SHA256FileOnce(p)
		if err != nil {
			return false
		}
		got = append(got, sum)
	}
	slices.Sort(want)
	slices.Sort(got)
	return slices.Equal(want, got)
}

// refWords names a run's reference design for pilotDiffers.
func refWords(drawn bool) string {
	if drawn {
		return "drawn references (noop, noop-seeming and paraphrase against their symbolic draw)"
	}
	return "the fixed base prompt only"
}

// fromPilot takes what the pilot run o.From (its manifest man and rows
// trials) measured: its throughput and
// tokens per item, each capped at the planned budget (RunThroughput), for
// the sizing (where o.Sizing has none) and, unless o.ComponentsGiven, its
// variance components for the power analysis; comps reports whether it
// had components to take.
func fromPilot(po *PlanOptions, o *RunPlanOptions, drawn bool, budget int, man *rundir.Manifest, trials []results.Trial) (comps bool, err error) {
	rate, tok, prompt, err := throughputOf(o.From, man, trials, budget)
	if err != nil {
		return false, err
	}
	if o.Sizing.Rate.TokensPerSecond <= 0 {
		o.Sizing.Rate = rate
	}
	if o.Sizing.TokensPerItem <= 0 {
		o.Sizing.TokensPerItem, o.Sizing.PromptTokensPerItem, o.Sizing.PromptTokensSource = tok, prompt, "the pilot's"
		o.Sizing.TokensPerItemSource = fmt.Sprintf("the mean of %s, each answer capped at --max-tokens %d", o.From, budget)
	}
	if !o.ComponentsGiven {
		return pilotComponents(po, o.From, drawn)
	}
	return false, nil
}

// pilotComponents sets po's variance components to those the run in from
// estimated (split as the planning defaults of the design, drawn or fixed
// base, split theirs where the split is not identified) and reports true,
// or notes in po.ComponentsSource that it has none.
func pilotComponents(po *PlanOptions, from string, drawn bool) (bool, error) {
	sum, err := probe.Recompute(from)
	if err != nil {
		return false, err
	}
	pc, ok := PooledComponents(sum)
	b, w, n := pc.Between, pc.Within, pc.Cells
	if ok {
		po.InformativeShare = pc.InformativeShare
	}
	if ok && withinIdentified(sum) {
		po.Between, po.Within = b, w
		po.ComponentsSource = fmt.Sprintf("estimated from %s (%d model × variant cells, %d templates)%s", from, n, sum.Clusters, shareNote(pc.InformativeShare))
	} else if ok {
		// One pair per template everywhere: the run measures only
		// the total σ²_b + σ²_w (b here). Its split is not
		// identified, so the total is split as the planning
		// defaults of the design split theirs
		// (summary.PlanningComponents):
		// the plan at one instance matches the run, and more
		// instances help only as much as that assumed share
		// says. Keeping σ²_w at its default instead would give a
		// total below it entirely to σ²_w and make instances look
		// far more useful than any measured run has shown.
		b0, w0, _ := summary.PlanningComponents(drawn)
		po.Within = (b + w) * w0 / (b0 + w0)
		po.Between = b + w - po.Within
		po.WithinNotIdentified = true
		po.ComponentsSource = fmt.Sprintf("total variance σ²_b + σ²_w = %.4g estimated from %s (%d model × variant cells, %d templates); %s has one instance per template, so σ²_w, the within-template variance, is NOT identified: the total is split as the planning defaults split theirs (an assumption: σ²_w = %.4g, %.0f%% of it; σ²_b = %.4g); a pilot with 2 or more instances per template measures the split%s",
			b+w, from, n, sum.Clusters, from, po.Within, 100*w0/(b0+w0), po.Between, shareNote(pc.InformativeShare))
	} else {
		po.ComponentsSource += fmt.Sprintf(" (%s has no paired difference that varies to estimate them from)", from)
	}
	return ok, nil
}

// shareNote says, for a ComponentsSource, that the components are those of
// the informative templates and what share of the templates the plan
// counts as informative ("" when all are).
func shareNote(share float64) string {
	if !(share > 0 && share < 1) {
		return ""
	}
	return fmt.Sprintf("; they are the components of the templates solved in some pair on either side (%.1f%% of the pilot's templates: a template never solved cannot show a drop), and the plan, as the summary does, tests on that share of its templates (G' = %.1f%% of G, rounded), assuming the same share at any number of templates and instances", 100*share, 100*share)
}

// withinIdentified reports whether any model × variant cell of s with
// observed components has two distinct pairs in a template, so that σ²_w
// was estimated (stats.Components.WithinIdentified).
func withinIdentified(s *summary.Summary) bool {
	for i := range s.Models {
		for j := range s.Models[i].Variants {
			if pr := s.Models[i].Variants[j].Paired; pr != nil && pr.Power != nil && pr.Power.Source == "observed" && pr.Power.WithinIdentified {
				return true
			}
		}
	}
	return false
}

// setTemplates returns the number of templates with an instance in set.
func setTemplates(set *templates.Set) int {
	seen := map[string]bool{}
	for i := range set.Instances {
		seen[set.Instances[i].TemplateID] = true
	}
	return len(seen)
}

// PlanOptions are the inputs of MakePlan: the drop to detect, the design of
// the run, the test's level and power, and the variance components of the
// per-pair difference (base right − variant right, 0/1).
type PlanOptions struct {
	// DropPP is the paired drop to detect, in percentage points, in (0,
	// 100]; 0 leaves the templates needed out (minimum detectable drop
	// only).
	DropPP float64
	// Templates is G, the number of templates of the run (MDE and power at
	// that size); 0 leaves it out (then DropPP is needed). With 1 there is
	// no minimum detectable drop.
	Templates int
	// Instances is the number of instances per template and variant, m: the
	// distinct pairs per template of a variant that re-draws its values.
	Instances int
	// Variants are the run's variants (base included or not) and Primary a
	// pre-specified primary variant: the test's family is 1 with a primary,
	// else the number of variants other than base (Holm's first step tests
	// at α divided by it).
	Variants []string
	Primary  string
	// Alpha is the family-wise level (e.g. 0.05), Power the power (e.g. 0.8).
	Alpha, Power float64
	// Between and Within are σ²_b and σ²_w of the per-pair difference, in
	// squared fractions; ComponentsSource says where they come from.
	Between, Within  float64
	ComponentsSource string
	// WithinNotIdentified is true when the components come from a run with
	// one instance per template: Within is then an assumption, not an
	// estimate (see RunPlanOptions.From).
	WithinNotIdentified bool
	// InformativeShare is the share of the templates expected to be
	// informative (solved in some pair on either side), in [0, 1]: a
	// pilot's (PilotComponents.InformativeShare), whose Between and Within
	// are those of its informative templates' pairs. The sizes then rest on
	// G' = stats.InformativeOf(G, share) of G templates, as the summary's
	// MDE does (stats.PairedDropMDEInformed). 0 or 1: every template
	// (components of all templates, as the planning defaults are).
	InformativeShare float64
	// MaxTemplates bounds the search: 0 (DefaultMaxTemplates) or 2 to
	// MaxTemplatesLimit (CheckMaxTemplates).
	MaxTemplates int
}

// PlanRow is the power analysis at one number of instances m.
type PlanRow struct {
	Instances int `json:"instances"`
	// MDEPP is the minimum detectable drop, pp, with Plan.Templates
	// templates of m instances (nil when there are fewer than 2).
	MDEPP *float64 `json:"mde_pp,omitempty"`
	// TemplatesNeeded is, given a drop, the smallest number of templates
	// of m instances that detects it (0: more than Plan.MaxTemplates), and
	// MDEAtNeededPP the minimum detectable drop there; nil without a drop.
	TemplatesNeeded *int    `json:"templates_needed,omitempty"`
	MDEAtNeededPP   float64 `json:"mde_at_needed_pp,omitempty"`
}

// Plan is the power analysis of a run: what it can detect at its size and,
// given a drop, how many templates that drop needs. Sizes are for one
// variant's paired drop.
type Plan struct {
	DropPP    float64  `json:"drop_pp,omitempty"` // the drop to detect, pp (0: none given)
	Templates int      `json:"templates"`         // G, the run's templates
	Instances int      `json:"instances"`         // m, instances per template and variant
	Variants  []string `json:"variants"`
	Primary   string   `json:"primary_variant,omitempty"`
	// Tests is the size of the Holm family the drop is tested in (1 with a
	// primary variant); TestAlpha = Alpha/Tests is the level of Holm's first
	// step, used for the sizes below (conservative for the other steps).
	Tests     int     `json:"tests"`
	Alpha     float64 `json:"alpha"`
	TestAlpha float64 `json:"test_alpha"`
	Power     float64 `json:"power"`
	// Between and Within are σ²_b and σ²_w of the per-pair difference
	// (squared fractions), ICC = σ²_b/(σ²_b + σ²_w).
	Between          float64 `json:"between_variance"`
	Within           float64 `json:"within_variance"`
	ICC              float64 `json:"icc"`
	ComponentsSource string  `json:"components_source"`
	// WithinNotIdentified is true when σ²_w could not be estimated (the
	// source run had one instance per template) and Within is the share
	// of the measured total the planning defaults give σ²_w, an
	// assumption.
	WithinNotIdentified bool `json:"within_not_identified,omitempty"`
	// InformativeShare is PlanOptions.InformativeShare (omitted when every
	// template counts).
	InformativeShare float64 `json:"informative_share,omitempty"`
	// SignFlipMinTemplates is the smallest number of templates at which the
	// exact sign-flip test can reach TestAlpha at all
	// (stats.SignFlipMinClusters).
	SignFlipMinTemplates int `json:"sign_flip_min_templates"`
	// MinTemplates is the fewest templates whose informative share
	// (stats.InformativeOf) holds SignFlipMinTemplates: below it the test
	// cannot reject whatever the drop, so no size needs fewer. It equals
	// SignFlipMinTemplates when every template counts.
	MinTemplates int `json:"min_templates"`
	// MDEPP is the minimum detectable drop (pp) with Templates × Instances
	// (nil with fewer than 2 templates), PowerAtDropPct the power to
	// detect DropPP there (nil without both; 0 below the sign-flip floor).
	MDEPP          *float64 `json:"mde_pp"`
	PowerAtDropPct *float64 `json:"power_at_drop_pct,omitempty"`
	// NeededTemplates is, given a drop, the smallest number of templates
	// detecting it with Instances instances (0: more than MaxTemplates),
	// MDEAtNeededPP the minimum detectable drop there; nil without a drop.
	NeededTemplates *int    `json:"needed_templates,omitempty"`
	MDEAtNeededPP   float64 `json:"mde_at_needed_pp,omitempty"`
	MaxTemplates    int     `json:"max_templates"`
	// ByInstances is the analysis at 1, 2, 5, 10 and 20 instances and at
	// Instances.
	ByInstances []PlanRow `json:"by_instances"`
}

// MinPlanPower is the least power a plan is stated at (plan --power): at
// power 0.5 the minimum detectable drop is the drop the test detects as
// often as not, and below α/2 the normal-approximation formula
// (t_{1−α/2} + t_{power}) gives a negative drop.
const MinPlanPower = 0.5

// maxComponent bounds a variance component MakePlan takes. A variance of a
// −1/0/1 difference is at most 1, and so is a given one (checkGiven), but
// the ANOVA estimates a pilot gives (PooledComponents) are unbiased, not
// bounded by 1: G′ template differences of ±1 with mean 0 give a σ²_b of
// G′/(G′ − 1), up to 2 at G′ = 2.
const maxComponent = 2

// checkGiven refuses given variance components (plan --between and
// --within, or the planning defaults) outside [0, 1], where a variance of
// a −1/0/1 difference lies, as a probe.OptionError naming the flags.
func (o PlanOptions) checkGiven() error {
	if !(o.Between >= 0 && o.Between <= 1) || !(o.Within >= 0 && o.Within <= 1) {
		return probe.OptionErrorf("--between and --within are variances of a paired difference of 0/1 answers (−1, 0 or 1): each must be in [0, 1], got %v and %v", o.Between, o.Within)
	}
	return nil
}

// check validates the options; errors are probe.OptionErrors naming the flag.
// The variance components may be estimates up to maxComponent.
func (o PlanOptions) check() error {
	switch {
	case !(o.DropPP >= 0 && o.DropPP <= 100):
		return probe.OptionErrorf("--drop must be in (0, 100] percentage points, got %v", o.DropPP)
	case o.Instances < 1:
		return probe.OptionErrorf("--instances must be at least 1, got %d", o.Instances)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return probe.OptionErrorf("--alpha must be in (0, 1), got %v", o.Alpha)
	case !(o.Power >= MinPlanPower && o.Power < 1):
		why := fmt.Sprintf("below %v a minimum detectable drop is one the test misses more often than it finds it (and below α/2 the formula's drop is negative)", MinPlanPower)
		if o.Power >= 1 {
			why = "no finite number of templates gives a power of 1"
		}
		return probe.OptionErrorf("--power must be in [%v, 1), got %v: %s", MinPlanPower, o.Power, why)
	case !(o.Between >= 0 && o.Between <= maxComponent) || !(o.Within >= 0 && o.Within <= maxComponent):
		return probe.OptionErrorf("the variance components σ²_b (--between) and σ²_w (--within) must be in [0, %d] (estimates of variances of a −1/0/1 difference), got %v and %v", maxComponent, o.Between, o.Within)
	case o.Between+o.Within == 0:
		return probe.OptionError{Msg: "--between and --within must not both be 0"}
	case !(o.InformativeShare >= 0 && o.InformativeShare <= 1):
		return probe.OptionErrorf("the informative share must be in [0, 1], got %v", o.InformativeShare)
	}
	if o.MaxTemplates != 0 {
		if err := CheckMaxTemplates(o.MaxTemplates); err != nil {
			return err
		}
	}
	if o.Primary != "" && (o.Primary == summary.BaseVariant || !slices.Contains(o.Variants, o.Primary)) {
		return probe.OptionErrorf("--primary %s must be one of the other variants in --variants", o.Primary)
	}
	if !slices.ContainsFunc(o.Variants, func(v string) bool { return v != summary.BaseVariant }) {
		return probe.OptionError{Msg: "--variants needs a variant other than base: a drop is measured against base"}
	}
	return nil
}

// MakePlan computes a Plan: with o.Templates templates of o.Instances
// instances, the minimum detectable drop and, given o.DropPP, the power to
// detect it; given o.DropPP, the number of templates needed at o.Instances
// and at other instance counts. The sizes follow stats.PairedDropMDE, as
// the summary's printed MDE does: (t_{1−α/2,G−1} + t_{power,G−1}) ·
// √((σ²_b + σ²_w/m)/G) (Bloom 1995; the design effect of Donner & Klar
// 2000), and with one instance per template the exact sign test's
// (stats.SignTestMDE), at the level of Holm's first step, and never fall
// below the number of templates at which the sign-flip test can reach that
// level. In this probe σ²_b holds the fixed base prompt's own variance
// (stats.FixedBaseComponents): more instances divide only σ²_w. With an
// o.InformativeShare in (0, 1) (a pilot's) the sizes rest on G' =
// stats.InformativeOf(G, share) of G templates (stats.
// PairedDropMDEInformed, PairedDropPowerInformed, RequiredClustersInformed),
// as the summary's MDE does. Errors are probe.OptionErrors naming the option
// that is out of range.
func MakePlan(o PlanOptions) (*Plan, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Templates < 0 || (o.Templates == 0 && o.DropPP == 0) {
		return nil, probe.OptionError{Msg: "plan: a number of templates (≥ 1) or a drop to detect (--drop) is needed"}
	}
	tests := 0
	for _, v := range o.Variants {
		if v != summary.BaseVariant {
			tests++
		}
	}
	if o.Primary != "" {
		tests = 1
	}
	maxG := o.MaxTemplates
	if maxG == 0 {
		maxG = DefaultMaxTemplates
	}
	c := stats.Components{Between: o.Between, Within: o.Within}
	pl := &Plan{DropPP: o.DropPP, Templates: o.Templates, Instances: o.Instances, Variants: o.Variants, Primary: o.Primary, Tests: tests,
		Alpha: o.Alpha, TestAlpha: o.Alpha / float64(tests), Power: o.Power,
		Between: o.Between, Within: o.Within, ICC: c.ICC(), ComponentsSource: o.ComponentsSource, WithinNotIdentified: o.WithinNotIdentified, MaxTemplates: maxG}
	if o.InformativeShare > 0 && o.InformativeShare < 1 {
		pl.InformativeShare = o.InformativeShare
	}
	pl.SignFlipMinTemplates = stats.SignFlipMinClusters(pl.TestAlpha)
	pl.MinTemplates = pl.SignFlipMinTemplates
	for stats.InformativeOf(pl.MinTemplates, o.InformativeShare) < pl.SignFlipMinTemplates {
		pl.MinTemplates++
	}
	mdeAt := func(g, m int) float64 {
		return 100 * stats.PairedDropMDEInformed(g, stats.InformativeOf(g, o.InformativeShare), float64(m), c, pl.TestAlpha, o.Power, summary.DefaultFewTemplates)
	}
	row := func(m int) PlanRow {
		r := PlanRow{Instances: m}
		if o.Templates >= 2 {
			mde := mdeAt(o.Templates, m)
			r.MDEPP = &mde
		}
		if o.DropPP > 0 {
			g, ok := stats.RequiredClustersInformed(o.DropPP/100, float64(m), o.InformativeShare, c, pl.TestAlpha, o.Power, pl.SignFlipMinTemplates, maxG, summary.DefaultFewTemplates)
			if !ok {
				g = 0
			} else {
				r.MDEAtNeededPP = mdeAt(g, m)
			}
			r.TemplatesNeeded = &g
		}
		return r
	}
	ms := []int{1, 2, 5, 10, 20}
	if !slices.Contains(ms, o.Instances) {
		ms = append(ms, o.Instances)
		slices.Sort(ms)
	}
	for _, m := range ms {
		r := row(m)
		pl.ByInstances = append(pl.ByInstances, r)
		if m == o.Instances {
			pl.MDEPP, pl.NeededTemplates, pl.MDEAtNeededPP = r.MDEPP, r.TemplatesNeeded, r.MDEAtNeededPP
		}
	}
	if pl.MDEPP != nil && o.DropPP > 0 {
		pw := 0.0 // below the sign-flip floor the test cannot reject at all
		if o.Templates >= pl.SignFlipMinTemplates {
			pw = 100 * stats.PairedDropPowerInformed(o.Templates, stats.InformativeOf(o.Templates, o.InformativeShare), float64(o.Instances), c, o.DropPP/100, pl.TestAlpha, summary.DefaultFewTemplates)
		}
		pl.PowerAtDropPct = &pw
	}
	return pl, nil
}

// PilotComponents are the variance components of a run's per-pair
// differences pooled for planning (PooledComponents).
type PilotComponents struct {
	// Between and Within are σ²_b and σ²_w (squared fractions): the means
	// over the cells of summary.Power's Between and Within, which are those
	// of the informative templates' pairs.
	Between, Within float64
	// InformativeShare is the mean over the cells of G'/G
	// (summary.Power.InformativeTemplates of Templates; 1 for a cell
	// where that is 0 or G), in (0, 1].
	InformativeShare float64
	// Cells is the number of model × variant cells pooled.
	Cells int
}

// PooledComponents returns the variance components of a run's per-pair
// differences for planning: the means of Between, Within and the
// informative share over the model × variant cells whose Power was
// estimated from the run ("observed"), and how many there were; ok is
// false when none was. Cells whose σ²_w is not identified (one pair per
// template: a variant that re-draws nothing, such as paraphrase, where
// Between holds the whole variance) are left out when any cell identifies
// it. The components already hold the fixed base prompt's own variance in
// Between (stats.FixedBaseComponents): the estimators see it shared by
// every pair of a template. They are those of the informative templates
// only (summary.Power.InformativeTemplates), so a plan must use them with
// the share (PlanOptions.InformativeShare), as the summary's MDE does.
func PooledComponents(s *summary.Summary) (PilotComponents, bool) {
	var cells []*summary.Power
	identified := false
	for i := range s.Models {
		for j := range s.Models[i].Variants {
			pr := s.Models[i].Variants[j].Paired
			if pr == nil || pr.Power == nil || pr.Power.Source != "observed" {
				continue
			}
			cells = append(cells, pr.Power)
			identified = identified || pr.Power.WithinIdentified
		}
	}
	var pc PilotComponents
	for _, c := range cells {
		if identified && !c.WithinIdentified {
			continue
		}
		pc.Between += c.Between
		pc.Within += c.Within
		share := 1.0
		if c.InformativeTemplates > 0 && c.InformativeTemplates < c.Templates {
			share = float64(c.InformativeTemplates) / float64(c.Templates)
		}
		pc.InformativeShare += share
		pc.Cells++
	}
	if pc.Cells == 0 {
		return PilotComponents{}, false
	}
	n := float64(pc.Cells)
	pc.Between, pc.Within, pc.InformativeShare = pc.Between/n, pc.Within/n, pc.InformativeShare/n
	return pc, true
}
