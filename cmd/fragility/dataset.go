package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// flagDataset reads released GSM-Symbolic instances instead of templates.
var flagDataset = &cli.StringSliceFlag{
	Name: "dataset",
	Usage: "released GSM-Symbolic instances instead of templates: a test.jsonl of apple/GSM-Symbolic, or " + models.HFDatasetPrefix +
		"ORG/NAME[@REV][:CONFIG] in the Hugging Face hub cache (config main, p1 or p2: the level; default main); repeat it for several levels. " +
		"Each original is asked once as base, each instance as symbolic (its instance index the paper's dataset); --prompt gsm-symbolic and every instance unless given",
}

// datasetPresetFlags are the flag values --preset gsm-symbolic-paper sets
// with --dataset: the released instances have no drawn variant (no
// GSM-NoOp) and their own instances.
var datasetPresetFlags = [][2]string{
	{flagPrompt.Name, probe.PromptGSMSymbolic},
	{flagVariants.Name, "base,symbolic"},
	{"temperature", "0"},
}

// usesDataset reports whether the command has --dataset and it was given.
func usesDataset(c *cli.Context) bool {
	return hasFlag(c, flagDataset.Name) && c.IsSet(flagDataset.Name)
}

// datasetDefinition is runDefinition for --dataset: the released
// instances, read and checked here (bad input is one line naming the file
// and line, exit 1, before anything runs); variants base and symbolic
// only (another is wrong usage); the gsm-symbolic prompt unless --prompt
// is given; every instance in the files unless --instances is given; with
// --preset gsm-symbolic-paper, datasetPresetFlags.
func datasetDefinition(c *cli.Context, cfg *rundir.Config) error {
	names := c.StringSlice(flagDataset.Name)
	for _, f := range []string{flagTemplates.Name, flagItems.Name, flagProtocol.Name} {
		if c.IsSet(f) {
			return usageError{fmt.Sprintf("--dataset and --%s: give one or the other (the released instances are asked as they are; drawn variants come from templates, in a run of their own)", f)}
		}
	}
	if c.IsSet(flagSplit.Name) {
		return usageError{"--split chooses templates by a hash of their text; it is not for --dataset"}
	}
	var preset *rundir.RunPreset
	if name := c.String(flagPreset.Name); name != "" {
		if name != rundir.PresetGSMSymbolicPaper {
			return usageError{fmt.Sprintf("--preset %q: want %s", name, rundir.PresetGSMSymbolicPaper)}
		}
		preset = &rundir.RunPreset{Name: name, Expanded: map[string]string{}}
		for _, kv := range datasetPresetFlags {
			if !hasFlag(c, kv[0]) {
				continue
			}
			if c.IsSet(kv[0]) {
				preset.Given = append(preset.Given, kv[0])
				continue
			}
			if err := c.Set(kv[0], kv[1]); err != nil {
				return fmt.Errorf("--preset %s: setting --%s: %w", name, kv[0], err)
			}
			preset.Expanded[kv[0]] = kv[1]
		}
	}
	prompt, variants := c.String(flagPrompt.Name), c.String(flagVariants.Name)
	if !c.IsSet(flagPrompt.Name) {
		prompt = probe.PromptGSMSymbolic
		if err := c.Set(flagPrompt.Name, prompt); err != nil {
			return err
		}
	}
	if !c.IsSet(flagVariants.Name) {
		variants = "base,symbolic"
	}
	vs, err := templates.ParseVariants(variants)
	if err != nil {
		return usageError{"--variants: " + err.Error()}
	}
	for _, v := range vs {
		if !slices.Contains(templates.DatasetVariants, v) {
			return usageError{fmt.Sprintf("--variants %s: --dataset holds the originals (base) and the released instances (symbolic); no other variant is drawn for them (run the templates for drawn variants)", v)}
		}
	}
	cfg.Variants, cfg.Templates, cfg.Datasets = vs, "", names
	cfg.Seed, cfg.MaxTokens = int64(c.Uint64(flagSeed.Name)), c.Int(flagMaxTokens.Name)
	if err := promptFlags(c, cfg); err != nil {
		return err
	}
	if cfg.Prompt == probe.PromptDocQA {
		return usageError{"--prompt docqa reads document questions (--items), not --dataset"}
	}
	d, err := probe.LoadDataset(names, cfg.Level)
	if err != nil {
		return err
	}
	cfg.Instances = d.Instances()
	if c.IsSet(flagInstances.Name) {
		cfg.Instances = c.Int(flagInstances.Name)
		if cfg.Instances < 1 || cfg.Instances > d.Instances() {
			return usageError{fmt.Sprintf("--instances %d: the dataset holds %d datasets (instances 0 to %d)", cfg.Instances, d.Instances(), d.Instances()-1)}
		}
	}
	nt, no := d.Counts()
	fmt.Fprintf(os.Stderr, "fragility: --dataset: %d templates (levels %s), %d originals asked once as base, %d of its %d datasets as symbolic; --prompt %s\n",
		nt, strings.Join(d.Levels(), ", "), no, cfg.Instances, d.Instances(), cfg.Prompt)
	if preset != nil {
		preset.Levels = d.Levels()
		cfg.Preset = preset
	}
	return primaryAndBatch(c, cfg)
}

// datasetContents says what the item set of a --dataset run holds, for
// plan: the originals asked once as base and, per level, the released
// instances (templates × datasets); "" when the set cannot be made (run
// says why).
func datasetContents(cfg rundir.Config) string {
	set, err := probe.DatasetSet(cfg)
	if err != nil {
		return ""
	}
	base := 0
	type level struct {
		items     int
		templates map[string]bool
		datasets  map[int]bool
	}
	levels := map[string]*level{}
	for _, in := range set.Instances {
		if in.Variant == templates.VariantBase {
			base++
			continue
		}
		l := levels[in.Level]
		if l == nil {
			l = &level{templates: map[string]bool{}, datasets: map[int]bool{}}
			levels[in.Level] = l
		}
		l.items++
		l.templates[in.TemplateID], l.datasets[in.Index] = true, true
	}
	parts := []string{count(base, "original") + " asked once as base"}
	for _, lv := range []string{templates.LevelSymbolic, templates.LevelP1, templates.LevelP2} {
		if l := levels[lv]; l != nil {
			parts = append(parts, fmt.Sprintf("level %s: %s (%s × %s)", lv, count(l.items, "released instance"), count(len(l.templates), "template"), count(len(l.datasets), "dataset")))
		}
	}
	return strings.Join(parts, "; ")
}
