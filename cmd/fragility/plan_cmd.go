package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/bench"
	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "plan",
		Usage: "plan a run before it runs: its size per shard (items, tokens, memory, time) and the drop it can detect (power analysis)",
		Description: `Plans the run that fragility run would start with the same flags (models, templates, variants,
instances, seed, --batch, --max-tokens, --n-ctx, --level, --prompt, --shots, --primary,
--conditions; --threads, --threads-batch and --chat-template are taken and change no size). Nothing
is written; a model is loaded only for the calibration below. It prints two parts.

Sizing: the run's items (models × the set that --templates, --variants and --instances generate,
as run generates it), its batches of --batch items and their split into --shards shards as run
--shard K/N splits them; per shard the generated tokens (at most items × --max-tokens; expected
from the mean tokens per item of a previous run given with --from), each model's memory at
--n-ctx × --batch (gguf-parser-go's estimate from the GGUF header: weights, KV cache, compute
buffers) and, given a generation rate, the expected generation time. The rate, in generated
tokens per second, first found first: --tokens-per-second; --bench FILE, the JSON of fragility
bench --json on the target machine ((b) scaled by (c)'s batching speed-up when the bench batched as
many items as --batch); --from RUN_DIR, a previous run there (its generated tokens over its
generation seconds); the last fragility bench on this machine (recorded in
~/.cache/fragility/bench-last.json), for the same model (sha256), threads and CPU; a calibration:
with a model given (--model; the default model with --preset or --calibrate set), the plan's first
--calibrate items (default 8, whole batches of --batch) generated on each model as run would, at
--batch and --threads, for at most --calibrate-seconds each. Without --from, the calibration's mean
answer length is the expected tokens per item, printed as an estimate; with none of these, the
expected tokens are --max-tokens, an upper bound. Each line says where its numbers came from.
Model loading and the DDC classifier are not counted. With no --model and the default model not in
the cache, one line says so and items and tokens are sized without memory. The items are counted
by drawing the set as run does, on every core, and the counts are kept in
~/.cache/fragility/plan-counts: a later plan of the same templates and set flags reads them.

Power, for one variant's paired drop (base right − variant right): G is the number of templates
--templates yields (those that do not load or draw are skipped, as run skips them) and m is
--instances. It gives the minimum detectable drop (MDE) with G templates at --power (default
80%), two-sided at --alpha (default 0.05, divided over the variants other than base as Holm's
first step does, or whole for a --primary variant); with --drop D, the power to detect D and the
templates D needs; and a table of both by instances (1, 2, 5, 10, 20). The sizes use

   MDE = (t_{1−α/2,G−1} + t_{power,G−1}) · √((σ²_b + σ²_w/m) / G) + c

(Bloom 1995; Donner & Klar 2000; c = 1/(m·G), the continuity correction of the sign-flip test's
lattice, Cox 1970, below 20 templates, and 0 from 20, where the test is randomized at ties and
its level is exactly α), never below the templates the sign-flip test needs to reach α
at all, with σ²_b and σ²_w the between- and within-template variance of the per-pair difference:
estimated from a previous run with --from RUN_DIR (pooled over its models and variants), given
with --between/--within, or the planning defaults of the run's design (printed with the plan): with
--reference drawn (the default) σ²_b = τ² = 0.01 and σ²_w = 2(1−ρ)μ(1−μ) = 0.25 (μ = 0.5, ρ = 0.5,
τ = 0.10); with --reference original, or variants compared with base only, 0.25 and 0.20.

With --reference original, templates, not instances, buy power. A template's base prompt is one fixed prompt (its copies
collapse) shared by all of the template's pairs, so its own right/wrong variance stays in σ²_b
whatever --instances is; instances divide only σ²_w, and only for variants that re-draw values
(names, numbers, symbolic, noop, noop-seeming). Under the planning defaults, with Holm over
symbolic and noop (the default variants), a 10 pp drop needs about 336 templates at 2 instances
and 260 at 10 (250 at 20), a 5 pp drop about 1,334 and 1,029. The 68 built-in templates detect
drops of about 22.5 pp at 2 instances, 19.8 pp at 10 and 19.4 pp at 20; with the 100
GSM-Symbolic templates (168 in all), 14.2, 12.4 and 12.2 pp; a --primary variant lowers these by
about a tenth. No library here reaches 10 pp. The defaults are assumptions, not measurements: a
pilot run and --from replace them.

Examples:
   fragility plan --drop 5
   fragility plan --templates builtin --instances 10 --drop 10
   fragility plan --model m.gguf --shards 8 --from runs/pilot
   fragility plan --model m.gguf --batch 8 --shards 4                  # rate and tokens per item from a short calibration
   fragility plan --model m-Q4_K_M.gguf --instances 10 --batch 8 --shards 4 --bench bench.json
   fragility plan --templates ~/ml-gsm-symbolic/templates/symbolic --variants base,symbolic --primary symbolic --drop 10
   fragility plan --drop 10 --between 0.1 --within 0.15 --json
   fragility plan --templates ~/ml-gsm-symbolic/templates --preset gsm-symbolic-paper   # adds the time on a GPU (--gpu-bench FILE, else an assumed rate, said so)
   fragility plan --dataset hf:datasets/apple/GSM-Symbolic --dataset hf:datasets/apple/GSM-Symbolic:p1   # the released instances: 100 originals, 5,000 items per level`,
		Flags: []cli.Flag{flagJSON, flagModels, flagTemplates, flagDataset, flagTemplateIDs, flagLimit, flagMaxItems, flagItems, flagLevel, flagPrompt, flagShots, flagVariants, flagInstances, flagSeed, flagPreset, flagGPUBench,
			flagMaxTokens, flagBatch, flagNCtx, flagNBatch, flagGPULayers, flagPrimary, flagReference, flagSplit, flagSkipInvalid, flagConditions, flagCalcCalls,
			flagThreads, flagThreadsB, flagTemplate, flagProtocol,
			&cli.IntFlag{Name: "shards", Value: 1, Usage: "number of shards to size (as fragility run --shard K/N)"},
			&cli.Float64Flag{Name: "tokens-per-second", Usage: "measured generation rate on the target machine"},
			&cli.StringFlag{Name: "bench", Usage: "the JSON of fragility bench --json on the target machine, for the rate"},
			&cli.StringFlag{Name: "from", Usage: "a previous run directory: its rate and mean tokens per item (sizing) and its variance components (power)"},
			&cli.IntFlag{Name: "calibrate", Value: bench.DefaultCalibrationItems, Usage: "with --model (or --preset) and no --from: generate this many of the plan's first items (whole batches of --batch) on each model to measure its rate and estimate its tokens per item; 0: none. Given explicitly, the default model is calibrated too"},
			&cli.Float64Flag{Name: "calibrate-seconds", Value: bench.DefaultCalibrationLimit.Seconds(), Usage: "the most time the calibration takes per model, after loading it; answers still running then count at --max-tokens"},
			&cli.Float64Flag{Name: "drop", Usage: "a paired drop to detect, in percentage points: its power and the templates it needs", DefaultText: "none, minimum detectable drop only"},
			&cli.Float64Flag{Name: "alpha", Value: 1 - summary.DefaultConfidence, Usage: "family-wise level of the test"},
			&cli.Float64Flag{Name: "power", Value: summary.DefaultPower, Usage: "power at which the minimum detectable drop is stated"},
			&cli.Float64Flag{Name: "between", Usage: "between-template variance σ²_b of the per-pair 0/1 difference", DefaultText: "the planning default of the run's design, see the output"},
			&cli.Float64Flag{Name: "within", Usage: "within-template variance σ²_w of the per-pair 0/1 difference", DefaultText: "the planning default of the run's design"},
			&cli.IntFlag{Name: "max-templates", Value: plan.DefaultMaxTemplates, Usage: fmt.Sprintf("largest number of templates to consider, 2 to %d (a drop that needs more is reported as needing more than this)", plan.MaxTemplatesLimit)},
		},
		Action: planAction,
	})
}

func planAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageError{fmt.Sprintf("plan takes no arguments, got %q", c.Args().First())}
	}
	cfg := rundir.Config{ChatTemplate: c.String(flagTemplate.Name)}
	if err := runDefinition(c, &cfg); err != nil {
		return err
	}
	if cfg.Preset != nil {
		fmt.Fprintln(os.Stderr, presetLine(cfg.Preset))
	}
	if err := applyProtocol(c, &cfg); err != nil { // the run a frozen protocol defines, as run applies it
		return err
	}
	if ms := c.StringSlice(flagModels.Name); len(ms) > 0 {
		models, err := resolveModels(ms, "llm")
		if err != nil {
			return err
		}
		cfg.Models = models
	}
	// The values run refuses, refused with run's messages.
	if err := checkRunOptions(c, cfg); err != nil {
		return err
	}
	cfg.Params.NSeq, cfg.Params.NCtx, cfg.Params.NBatch, cfg.Params.GPULayers = c.Int(flagBatch.Name), c.Int(flagNCtx.Name), c.Int(flagNBatch.Name), c.Int(flagGPULayers.Name)
	cfg.Params.NCtx, cfg.Params.NBatch = cfg.Params.Defaults().NCtx, cfg.Params.Defaults().NBatch // sized as run loads them (0: the default)
	o, err := planOptions(c, &cfg)
	if err != nil {
		return err
	}
	given := len(cfg.Models) > 0 // by --model or the protocol, not the default model
	if len(cfg.Models) == 0 {
		if p, err := defaultModelPath("llm"); err == nil {
			cfg.Models = []string{p}
		} else {
			o.Sizing.NoModel = fmt.Sprintf("none at hand (no --model; %v): items and tokens are for one model, memory is not estimated", err)
		}
	}
	if b := c.String("bench"); b != "" {
		rate, err := plan.BenchThroughput(b, cfg.Params.NSeq)
		if err != nil {
			return err
		}
		o.Sizing.Rate = rate
	}
	if r := c.Float64("tokens-per-second"); r > 0 {
		o.Sizing.Rate = plan.Throughput{TokensPerSecond: r, Source: "--tokens-per-second"}
	}
	presetRate(c, cfg, &o)
	if err := planMeasures(c, cfg, given, &o); err != nil {
		return err
	}
	p, err := plan.PlanRun(cfg, o)
	var oe probe.OptionError
	if errors.As(err, &oe) {
		return usageError{oe.Msg}
	}
	if err != nil {
		return err
	}
	if c.Bool(flagJSON.Name) {
		return printJSON(p)
	}
	printSizing(p.Sizing, cfg)
	if err := printPresetGPU(c, p.Sizing, cfg); err != nil {
		return err
	}
	printLeftOut(p.LeftOut)
	for _, n := range append(append(p.Notices, p.PilotNotes...), p.RateNotes...) {
		fmt.Printf("Note: %s\n", n)
	}
	printPilotCut(p.PilotCut)
	fmt.Println()
	printPower(p.Power, cfg)
	return nil
}

// planMeasures gives the plan what measures its time where no rate is
// given (--tokens-per-second, --bench): the last fragility bench recorded
// on this machine (bench.LastPath), and, when a model was given (by
// --model or the protocol; the default model only with a --preset, whose
// plan is asked how long, or an explicit --calibrate) and --calibrate is
// not 0, a calibration of each
// model on the plan's first items (bench.Calibrate, at --batch and
// --threads, at most --calibrate-seconds of generation each), which also
// estimates the tokens per item unless --from gives them. --from's pilot
// comes first (plan.PlanRun).
func planMeasures(c *cli.Context, cfg rundir.Config, given bool, o *plan.RunPlanOptions) error {
	if len(cfg.Models) == 0 {
		return nil
	}
	n, sec := c.Int("calibrate"), c.Float64("calibrate-seconds")
	if n < 0 || n > 1024 {
		return usageError{fmt.Sprintf("--calibrate must be between 0 (no calibration) and 1024 items, got %d", n)}
	}
	if !(sec >= 1 && sec <= 86400) {
		return usageError{fmt.Sprintf("--calibrate-seconds must be between 1 and 86400, got %v", sec)}
	}
	calibrate := n > 0 && (given || c.IsSet("calibrate") || cfg.Preset != nil) && c.String("from") == ""
	path, err := bench.LastPath()
	last := (*bench.Last)(nil)
	if err == nil && o.Sizing.Rate.TokensPerSecond <= 0 {
		if last, err = bench.ReadLast(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "fragility: plan: %v (left aside)\n", err)
		}
	}
	if last == nil && !calibrate {
		return nil
	}
	load := loadParams(c) // threads and GPU layers as run loads the model
	load.NSeq, load.NBatch = cfg.Params.NSeq, cfg.Params.NBatch
	o.Load, o.LastBench, o.LastBenchPath = load, last, path
	if !calibrate {
		return nil
	}
	for _, m := range cfg.Models { // calibration loads each model: a file Load would refuse is refused first
		if err := llm.CheckGGUF(m); err != nil {
			return err
		}
	}
	o.CalibrateItems = n
	limit := time.Duration(sec * float64(time.Second))
	o.Calibrate = func(cfg rundir.Config, mi int, items []probe.PlannedItem) (*bench.Calibration, error) {
		fmt.Fprintf(os.Stderr, "fragility: plan: calibrating %s on %s of the plan at --batch %d, for at most %s (--calibrate 0 skips it)\n",
			filepath.Base(cfg.Models[mi]), count(len(items), "item"), load.NSeq, limit)
		return bench.Calibrate(context.Background(), bench.CalibrateConfig{Run: cfg, Model: cfg.Models[mi], Params: load, Items: items, Limit: limit})
	}
	return nil
}

// planOptions reads plan's sizing and power flags (--drop, --shards,
// --tokens-per-second, --from, --between, --within, …) for the run cfg
// defines; wrong values are usage errors.
func planOptions(c *cli.Context, cfg *rundir.Config) (plan.RunPlanOptions, error) {
	if c.IsSet("drop") && !(c.Float64("drop") > 0) {
		return plan.RunPlanOptions{}, usageError{fmt.Sprintf("--drop must be in (0, 100] percentage points, got %v", c.Float64("drop"))}
	}
	if c.Int("shards") < 1 {
		return plan.RunPlanOptions{}, usageError{fmt.Sprintf("--shards must be at least 1, got %d", c.Int("shards"))}
	}
	if r := c.Float64("tokens-per-second"); c.IsSet("tokens-per-second") && !(r >= 1e-3 && r <= 1e7) {
		return plan.RunPlanOptions{}, usageError{fmt.Sprintf("--tokens-per-second must be between 0.001 and 10000000, got %v", r)}
	}
	// 0 is no limit and no default here (the flag's default is spelled
	// out): it is refused with the allowed range, as 1 and negatives are.
	if err := plan.CheckMaxTemplates(c.Int("max-templates")); err != nil {
		return plan.RunPlanOptions{}, usageError{err.Error()}
	}
	o := plan.RunPlanOptions{From: c.String("from"), ComponentsGiven: c.IsSet("between") || c.IsSet("within"),
		Sizing: plan.ShardPlanOptions{Shards: c.Int("shards"), Memory: true},
		Power: plan.PlanOptions{DropPP: c.Float64("drop"), Alpha: c.Float64("alpha"), Power: c.Float64("power"),
			Between: c.Float64("between") + 0, Within: c.Float64("within") + 0, MaxTemplates: c.Int("max-templates")}} // + 0: -0 is 0
	if o.ComponentsGiven {
		o.Power.ComponentsSource = "given with --between/--within"
		b, w, _ := summary.PlanningComponents(cfg.DrawnDesign())
		if !c.IsSet("between") {
			o.Power.Between, o.Power.ComponentsSource = b, "--within given, σ²_b the planning default"
		}
		if !c.IsSet("within") {
			o.Power.Within, o.Power.ComponentsSource = w, "--between given, σ²_w the planning default"
		}
	}
	return o, nil
}

// printLeftOut lists the templates the set leaves out, with their reasons
// (at most 10, then how many more).
func printLeftOut(ls []templates.Skip) {
	if len(ls) == 0 {
		return
	}
	fmt.Printf("Left out: %s that could not be loaded or drawn (run leaves them out too; more than %.0f%% stops a run without --skip-invalid):\n", count(len(ls), "template"), 100*probe.MaxLeftOutShare)
	for i, sk := range ls {
		if i == 10 {
			fmt.Printf("  … and %d more\n", len(ls)-10)
			break
		}
		fmt.Printf("  %s\n", sk)
	}
}

// printPilotCut writes what the pilot says of the answers the planned
// budget would cut: a warning, with the budget to raise to, when the share
// is large (plan.CutWarnShare); one line when some would be cut; nothing
// otherwise.
func printPilotCut(pc *plan.PilotCut) {
	if pc == nil || pc.Cut == 0 {
		return
	}
	line := fmt.Sprintf("the pilot %s (run at --max-tokens %d) says --max-tokens %d would cut %d of %d answers (%.0f%%)",
		pc.Pilot, pc.PilotBudget, pc.Budget, pc.Cut, pc.Scored, pc.SharePct)
	if pc.AtMost {
		line = fmt.Sprintf("the pilot %s (run at --max-tokens %d) cut %d of %d answers (%.0f%%) at its budget, so --max-tokens %d may cut up to that many: how far they would run is unknown",
			pc.Pilot, pc.PilotBudget, pc.Cut, pc.Scored, pc.SharePct, pc.Budget)
	}
	if !pc.Large {
		fmt.Printf("Cut by the budget: %s.\n", line)
		return
	}
	advice := fmt.Sprintf("raise --max-tokens to %d or more (under %.0f%% of the pilot's answers are longer)", max(pc.SuggestMaxTokens, pc.Budget+1), plan.CutWarnShare)
	if pc.SuggestMaxTokens == 0 {
		advice = fmt.Sprintf("the pilot's own budget (%d) cut %d of its %d answers (%.0f%%), so it does not show how long they run: raise --max-tokens well above %d and pilot again", pc.PilotBudget, pc.PilotCut, pc.Scored, 100*float64(pc.PilotCut)/float64(pc.Scored), pc.PilotBudget)
		if pc.Budget > pc.PilotBudget {
			advice = fmt.Sprintf("how many of them --max-tokens %d still cuts the pilot cannot show: pilot again at --max-tokens %d", pc.Budget, pc.Budget)
		}
	}
	fmt.Printf("Warning: %s; a cut answer without a final-answer line counts as no answer, so the budget alone would lower accuracy; %s.\n", line, advice)
}

// printSizing writes the sizing part of a plan for a reader.
func printSizing(p *plan.ShardPlan, cfg rundir.Config) {
	fmt.Println("## Sizing")
	fmt.Println()
	set := fmt.Sprintf("%s, %s, %s refused and drawn again", planSource(cfg), count(cfg.Instances, "instance"), count(p.RefusedDraws, "draw"))
	if cfg.Items != "" { // document items are not drawn: one instance each
		set = planSource(cfg)
	}
	if len(cfg.Datasets) > 0 { // released instances: nothing drawn
		set = planSource(cfg) + ": " + datasetContents(cfg)
	}
	if p.LeftOut > 0 { // variants some templates or items lack
		set += ", " + count(p.LeftOut, "variant instance") + " left out"
	}
	conds := ""
	if p.Conditions > 1 {
		conds = fmt.Sprintf(" × %d conditions (%s)", p.Conditions, strings.Join(cfg.Conditions, ", "))
	}
	if len(p.Models) == 0 {
		fmt.Printf("Run: %s (%s)%s = %s per model in %s of up to %d\n", count(p.Instances, "item"), set, conds, count(p.Items, "item"), count(p.Batches, "batch"), p.Batch)
		fmt.Printf("Model: %s\n", p.ModelNote)
	} else {
		var names []string
		for _, m := range p.Models {
			names = append(names, filepath.Base(m.Path))
		}
		fmt.Printf("Run: %s (%s) × %s (%s)%s = %s in %s of up to %d\n",
			count(len(p.Models), "model"), strings.Join(names, ", "), count(p.Instances, "item"), set, conds, count(p.Items, "item"), count(p.Batches, "batch"), p.Batch)
	}
	fmt.Printf("Generated tokens: at most %d (%d × --max-tokens %d); expected %.0f (%.1f per item: %s)\n",
		p.GenTokensMax, p.Items, p.MaxTokens, p.GenTokens, p.TokensPerItem, p.TokensPerItemSource)
	if p.PromptTokens > 0 {
		per := p.PromptTokens / float64(p.Items)
		fmt.Printf("Prompt tokens: about %.0f (%.1f per item)\n", p.PromptTokens, per)
		if need := int(math.Ceil(per)) + p.MaxTokens; need > cfg.Params.NCtx {
			fmt.Printf("Warning: "+p.PromptTokensSource+" prompts average %.0f tokens, and with --max-tokens %d that is more than --n-ctx %d: a prompt of --n-ctx tokens or more is skipped, and an answer stops where the context is full; raise --n-ctx to %d or more (longer prompts need more)\n", per, p.MaxTokens, cfg.Params.NCtx, need)
		}
	}
	for i, m := range p.Models {
		if m.MemoryBytes > 0 {
			fmt.Printf("Model #%d: %s on disk, about %s to run at --n-ctx %d × --batch %d\n", i, bytesHuman(uint64(m.SizeBytes)), bytesHuman(m.MemoryBytes), cfg.Params.NCtx, p.Batch)
		}
		if ram := probe.MachineMemory(); ram > 0 && m.MemoryBytes > ram {
			fmt.Printf("Note: about %s is more than this machine's %s of memory: it does not run here (a GPU's memory or a larger machine may hold it)\n", bytesHuman(m.MemoryBytes), bytesHuman(ram))
		}
		if m.CtxTrain > 0 && cfg.Params.NCtx > m.CtxTrain {
			fmt.Printf("Warning: %s\n", probe.CtxTrainWarning(filepath.Base(m.Path), cfg.Params.NCtx, m.CtxTrain))
		}
	}
	if p.Rate != nil {
		fmt.Printf("Rate: %.1f generated tokens/s (%s)\nOne machine: %s of generation\n", p.Rate.TokensPerSecond, p.Rate.Source, duration(p.Seconds))
	} else {
		fmt.Println("Rate: none given (--tokens-per-second, --bench or --from; --model measures one here by a calibration, and fragility bench records one for this machine): no times")
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shard\tbatches\titems\tmodel #\ttokens at most\ttokens expected\tmemory\tgeneration time")
	for _, s := range p.Shards {
		var idx []string
		for _, m := range s.Models {
			idx = append(idx, fmt.Sprint(m))
		}
		ms := strings.Join(idx, ",")
		if ms == "" {
			ms = "—"
		}
		t := "—"
		if p.Rate != nil {
			t = duration(s.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%d–%d\t%d\t%s\t%d\t%.0f\t%s\t%s\n", s.Shard, s.FirstBatch+1, s.FirstBatch+s.Batches, s.Items, ms, s.GenTokensMax, s.GenTokens, bytesHuman(s.MemoryBytes), t)
	}
	tw.Flush()
	if p.MemorySource != "" {
		fmt.Printf("\nMemory: %s.\n", p.MemorySource)
	}
}

// planSource names where the plan's items come from: the templates (with
// the subset --template-ids and --limit pick), or the document items file
// (a template is then an item).
func planSource(cfg rundir.Config) string {
	if cfg.Items != "" {
		return "items " + cfg.Items
	}
	s := cfg.Templates
	if len(cfg.Datasets) > 0 {
		s = "dataset " + strings.Join(cfg.Datasets, ", ")
	}
	if len(cfg.TemplateIDs) > 0 {
		s += " (templates " + strings.Join(cfg.TemplateIDs, ",") + ")"
	}
	if cfg.Limit > 0 && len(cfg.Datasets) > 0 {
		s += fmt.Sprintf(" (the first %d templates)", cfg.Limit)
	} else if cfg.Limit > 0 {
		// The templates the limit keeps, as run loads them: a --limit
		// above the source's count keeps them all and is not printed.
		ts, _, err := templates.LoadSkipping(cfg.Templates, templates.LoadOptions{Level: cfg.Level, IDs: cfg.TemplateIDs, Limit: cfg.Limit})
		if err != nil || len(ts) >= cfg.Limit {
			s += fmt.Sprintf(" (the first %d)", cfg.Limit)
		}
	}
	return s
}

// printPower writes the power part of a plan for a reader. With document
// items (--items) each item is its own cluster with one pair per variant:
// the text counts items and has no table over instances.
func printPower(pl *plan.Plan, cfg rundir.Config) {
	if pl == nil {
		fmt.Println("## Power\n\nBase alone: no variant to compare with it, so no drop to plan for; the sizing above is the run.")
		return
	}
	items := cfg.Items != ""
	unit, size := "template", count(pl.Templates, "template")+" ("+planSource(cfg)+") × "+count(pl.Instances, "instance")
	if items {
		unit, size = "item", count(pl.Templates, "item")+" ("+cfg.Items+"), one pair per item and variant"
	}
	per := ""
	if !items {
		per = " with " + count(pl.Instances, "instance") + " each"
	}
	level := fmt.Sprintf("α = %s", trimFloat(pl.TestAlpha))
	if pl.Tests > 1 {
		level += fmt.Sprintf(" (%s Holm-adjusted over %d variants: its first step)", trimFloat(pl.Alpha), pl.Tests)
	} else if pl.Primary != "" {
		level += fmt.Sprintf(" (primary variant %s, tested alone)", pl.Primary)
	}
	fmt.Println("## Power")
	fmt.Println()
	ref := "base, or the symbolic draw for noop, noop-seeming and paraphrase with --reference drawn"
	if items {
		ref = "the item's base question"
	}
	if len(cfg.Datasets) > 0 {
		// Each original is asked once: only its first template's
		// instance-0 draw pairs with it (plan.PlanRun).
		ref = "the original, asked once, paired with the instance-0 draw of its first template; the paper's view pairs every dataset with its original, without a planned test"
	}
	fmt.Printf("Paired drop of a variant against its reference (%s), %s, %s%% power, two-sided at %s.\n\n",
		ref, size, trimFloat(100*pl.Power), level)
	at := count(pl.Templates, unit)
	if !items {
		at += " and " + count(pl.Instances, "instance")
	}
	if pl.MDEPP != nil {
		if *pl.MDEPP > 100 {
			fmt.Printf("No drop is detectable at this size: with %s the minimum detectable drop (%.1f pp) is above 100 pp.\n", at, *pl.MDEPP)
		} else {
			fmt.Printf("Minimum detectable drop with %s: %.1f pp.\n", at, *pl.MDEPP)
		}
	} else {
		fmt.Printf("With %s no drop is detectable: a paired test needs at least 2.\n", count(pl.Templates, unit))
	}
	if pl.PowerAtDropPct != nil {
		fmt.Printf("Power to detect %s pp with them: %.0f%%.\n", trimFloat(pl.DropPP), *pl.PowerAtDropPct)
	}
	if pl.NeededTemplates != nil {
		if *pl.NeededTemplates > 0 {
			fmt.Printf("To detect %s pp: %s%s (minimum detectable drop there: %.1f pp).\n",
				trimFloat(pl.DropPP), count(*pl.NeededTemplates, unit), per, pl.MDEAtNeededPP)
		} else {
			fmt.Printf("To detect %s pp: more than %s%s.\n", trimFloat(pl.DropPP), count(pl.MaxTemplates, unit), per)
		}
	}
	if pl.Templates < pl.MinTemplates {
		fmt.Printf("The sign-flip test cannot reach %s with fewer than %s, whatever the data%s.\n", trimFloat(pl.TestAlpha), count(pl.MinTemplates, unit), informativeMin(pl, unit))
	}
	if !items {
		printInstanceRows(pl)
	}
	fmt.Printf("\nVariance components of the per-pair difference (base right − variant right): between %ss σ²_b = %.4g, within σ²_w = %.4g (ICC %.2f); %s.\n",
		unit, pl.Between, pl.Within, pl.ICC, pl.ComponentsSource)
	switch {
	case items:
		fmt.Println("Each document item is one cluster with one pair per variant (its base question against the variant's), so only σ²_b + σ²_w matters and more items are what lower the minimum detectable drop.")
	case cfg.DrawnDesign():
		fmt.Println("With --reference drawn, noop, noop-seeming and paraphrase pair a drawn problem with the same problem changed in one factor, so each pair's reference noise is within templates (σ²_w), which instances divide; the drop's spread between templates (σ²_b) is divided only by templates. names, numbers and symbolic are still compared with the one base prompt of their template.")
	default:
		fmt.Println("A template's base prompt is one fixed prompt shared by all its pairs, so its own variance is in σ²_b: instances divide only σ²_w, and only for variants that re-draw values (names, numbers, symbolic, noop, noop-seeming); templates are what lower the minimum detectable drop.")
	}
	fmt.Printf("Minimum detectable drop: (t_{1−α/2,G−1} + t_{power,G−1}) · √((σ²_b + σ²_w/m)/G) + c (Bloom 1995; Donner & Klar 2000; G the %ss, m the pairs per %s; c = 1/(m·G), the continuity correction of the sign-flip test's lattice of span 2/m, Cox 1970, below %d %ss, 0 from %d, where the test is randomized at ties); with 1 pair per %s, the drop at which the exact sign test on the discordant %ss (randomized from %d) reaches the power (as the summary prints it).\n", unit, unit, summary.DefaultFewTemplates, unit, summary.DefaultFewTemplates, unit, unit, summary.DefaultFewTemplates)
	if pl.InformativeShare > 0 {
		fmt.Printf("With the pilot's components these rest on the G' = %.1f%% of the G %ss solved in some pair (as the summary's MDE does, stats.PairedDropMDEInformed): the formula with G' for G, times G'/G (the drop over all %ss is G'/G of the drop on them).\n", 100*pl.InformativeShare, unit, unit)
	}
}

// informativeMin says, when the plan rests on an informative share, that
// its least number of templates is that at which the share holds the
// sign-flip test's minimum ("" otherwise).
func informativeMin(pl *plan.Plan, unit string) string {
	if pl.MinTemplates == pl.SignFlipMinTemplates {
		return ""
	}
	return fmt.Sprintf(" (%.1f%% of %d, the informative %ss, is %d, the fewest the test needs)", 100*pl.InformativeShare, pl.MinTemplates, unit, pl.SignFlipMinTemplates)
}

// printInstanceRows writes the plan's table over instances per template;
// a number of templates needed that is the least any drop needs
// (Plan.MinTemplates) is marked and explained below it.
func printInstanceRows(pl *plan.Plan) {
	floor := false
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	head := fmt.Sprintf("instances per template\tMDE with %d templates, pp", pl.Templates)
	if pl.DropPP > 0 {
		head += fmt.Sprintf("\ttemplates needed for %s pp\tMDE there, pp", trimFloat(pl.DropPP))
	}
	fmt.Fprintln(tw, head)
	for _, r := range pl.ByInstances {
		mde := ppText(r.MDEPP)
		if r.MDEPP != nil && *r.MDEPP > 100 {
			mde = "no drop is detectable at this size"
		}
		line := fmt.Sprintf("%d\t%s", r.Instances, mde)
		if r.TemplatesNeeded != nil {
			if *r.TemplatesNeeded == 0 {
				line += fmt.Sprintf("\t> %d\t—", pl.MaxTemplates)
			} else {
				mark := ""
				if *r.TemplatesNeeded == pl.MinTemplates {
					mark, floor = "*", true
				}
				line += fmt.Sprintf("\t%d%s\t%.1f", *r.TemplatesNeeded, mark, r.MDEAtNeededPP)
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if floor {
		fmt.Printf("* the fewest templates at which the sign-flip test can reach %s at all%s: the drop is detected there with at least the stated power.\n", trimFloat(pl.TestAlpha), informativeMin(pl, "template"))
	}
}

// ppText formats an optional value in percentage points.
func ppText(x *float64) string {
	if x == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f", *x)
}

// trimFloat formats x with at most 4 decimals and no trailing zeros.
func trimFloat(x float64) string {
	s := fmt.Sprintf("%.4f", x)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func bytesHuman(b uint64) string {
	switch {
	case b == 0:
		return "—"
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
}

func duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}
