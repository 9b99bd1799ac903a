package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// flagPreset chooses a run preset of run and plan.
var flagPreset = &cli.StringFlag{Name: "preset", Usage: "run preset: gsm-symbolic-paper (with --templates DIR holding symbolic/, p1/, p2/, any of them: the gsm-symbolic prompt, greedy, the originals, every level found, GSM-NoOp drawn on the symbolic instance, 50 datasets; flags given explicitly override it; recorded in the manifest)"}

// paperPresetFlags are the flag values of the gsm-symbolic-paper preset,
// in the order they are applied.
var paperPresetFlags = [][2]string{
	{flagPrompt.Name, probe.PromptGSMSymbolic},
	{flagVariants.Name, "base,symbolic,noop-seeming"},
	{flagReference.Name, templates.ReferenceDrawn},
	{flagInstances.Name, "50"},
	{"temperature", "0"},
}

// applyPreset expands --preset into the flags it stands for, leaving the
// flags given explicitly as given, and records the expansion in cfg.Preset.
// Without --preset it does nothing. Wrong usage (an unknown preset, a
// templates folder without a level folder, --items) is a usageError.
func applyPreset(c *cli.Context, cfg *rundir.Config) error {
	name := c.String(flagPreset.Name)
	if name == "" {
		return nil
	}
	if name != rundir.PresetGSMSymbolicPaper {
		return usageError{fmt.Sprintf("--preset %q: want %s", name, rundir.PresetGSMSymbolicPaper)}
	}
	if c.IsSet(flagItems.Name) {
		return usageError{"--preset " + name + " reads GSM-Symbolic templates (--templates DIR), not --items"}
	}
	srcs := c.StringSlice(flagTemplates.Name)
	if len(srcs) > 1 {
		return usageError{"--preset " + name + " reads one GSM-Symbolic templates folder (--templates DIR, given once)"}
	}
	var dir string
	if len(srcs) == 1 {
		dir = srcs[0]
	}
	levels, err := presetLevels(dir)
	if err != nil {
		return err
	}
	p := &rundir.RunPreset{Name: name, Expanded: map[string]string{}, Levels: levels}
	for _, kv := range paperPresetFlags {
		if !hasFlag(c, kv[0]) {
			continue
		}
		if c.IsSet(kv[0]) {
			p.Given = append(p.Given, kv[0])
			continue
		}
		if err := c.Set(kv[0], kv[1]); err != nil {
			return fmt.Errorf("--preset %s: setting --%s: %w", name, kv[0], err)
		}
		p.Expanded[kv[0]] = kv[1]
	}
	cfg.Preset = p
	return nil
}

// hasFlag reports whether the command defines the flag name.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// presetLevels returns the difficulty levels a GSM-Symbolic templates
// folder gives: its level folders (symbolic, p1, p2; any case), or the
// folder's own level when it is one of them. A path that is not such a
// folder is wrong usage, named in the error.
func presetLevels(dir string) ([]string, error) {
	if dir == "" || dir == "builtin" {
		return nil, usageError{"--preset " + rundir.PresetGSMSymbolicPaper + " needs --templates DIR: a downloaded GSM-Symbolic templates folder holding symbolic/, p1/ or p2/"}
	}
	if l, err := templates.ParseLevel(filepath.Base(filepath.Clean(dir))); err == nil && l != "" {
		return []string{l}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--preset %s: --templates %s is not a readable folder (%v)", rundir.PresetGSMSymbolicPaper, dir, err)}
	}
	var levels []string
	for _, e := range entries {
		if l, err := templates.ParseLevel(e.Name()); e.IsDir() && err == nil && l != "" && !slices.Contains(levels, l) {
			levels = append(levels, l)
		}
	}
	if len(levels) == 0 {
		return nil, usageError{fmt.Sprintf("--preset %s: %s holds no symbolic/, p1/ or p2/ folder (point --templates at the templates folder of a GSM-Symbolic download)", rundir.PresetGSMSymbolicPaper, dir)}
	}
	order := []string{templates.LevelSymbolic, templates.LevelP1, templates.LevelP2}
	slices.SortFunc(levels, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return levels, nil
}

// presetLine describes an expanded preset in one line for stderr.
func presetLine(p *rundir.RunPreset) string {
	var set []string
	for _, kv := range paperPresetFlags {
		if v, ok := p.Expanded[kv[0]]; ok {
			set = append(set, "--"+kv[0]+" "+v)
		}
	}
	s := fmt.Sprintf("fragility: --preset %s: levels %s; set %s", p.Name, strings.Join(p.Levels, ", "), strings.Join(set, " "))
	if len(p.Given) > 0 {
		s += "; as given: --" + strings.Join(p.Given, ", --")
	}
	return s
}

// flagGPUBench gives plan a GPU's measured rate for the preset's GPU line.
var flagGPUBench = &cli.StringFlag{Name: "gpu-bench", Usage: "with --preset: the JSON of fragility bench --json run on a GPU machine, for the plan's GPU time (default: an assumed rate, said so)"}

// presetRate gives a preset plan the recorded CPU rate of the preset's
// workload when no rate was given (--tokens-per-second, --bench, --from)
// nor measured (the last bench on this machine, a calibration: PlanRun
// uses it last).
func presetRate(c *cli.Context, cfg rundir.Config, o *plan.RunPlanOptions) {
	if cfg.Preset != nil && o.Sizing.Rate.TokensPerSecond == 0 && c.String("from") == "" {
		o.FallbackRate = plan.PaperPresetCPURate // unless a bench or a calibration measures one
	}
}

// printPresetGPU writes, for a preset plan, the expected generation time on
// a GPU: from --gpu-bench when given, else from the assumed rate, said so.
func printPresetGPU(c *cli.Context, p *plan.ShardPlan, cfg rundir.Config) error {
	if cfg.Preset == nil {
		return nil
	}
	rate := plan.PaperPresetGPUAssumedRate
	if f := c.String(flagGPUBench.Name); f != "" {
		r, err := plan.BenchThroughput(f, cfg.Params.NSeq)
		if err != nil {
			return err
		}
		rate = r
	}
	fmt.Printf("On a GPU: %s of generation at %.0f generated tokens/s (%s)\n", duration(p.GenTokens/rate.TokensPerSecond), rate.TokensPerSecond, rate.Source)
	return nil
}
