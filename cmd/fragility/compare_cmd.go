package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/compare"
	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// flagReferenceModel is compare's reference model, the file the others are
// compared with token by token; --reference is the design, as in run.
var flagReferenceModel = &cli.StringFlag{Name: "reference-model", Aliases: []string{"r"}, Usage: "the file the others are compared with, token by token: one of the files (a path, its file name or a cached model's name; default: the file with original weights with the most bits per weight)"}

func init() {
	register(&cli.Command{
		Name:      "compare",
		Usage:     "compare quantizations of one model: the run of fragility run on every file, plus KL divergence per token against a reference model",
		ArgsUsage: "[flags] A.gguf B.gguf [C.gguf ...]  (paths or cached model names)",
		Description: `Runs the same items on every file exactly as fragility run does with the files as --model
(the same flags with the same meanings and defaults: --reference drawn pairs noop, noop-seeming
and paraphrase with the symbolic instance they are drawn on and adds symbolic and placebo, the
same --batch, DDC classification unless --no-ddc), writes the run's summary.json and
narrative.md and shows its verdicts, then feeds the reference model's prompts and generated
tokens to every other file (teacher forcing) and compares, at every token, the two next-token
distributions over the full vocabulary: KL(ref||q) in nats with mean ± standard error and
percentiles (max, 99.9, 99, 95, 90, median, 10, 5, 1, 0.1, min), the same-top-token rate, Δp
of the reference's token (mean, RMS) and the entropy difference in bits, the statistics
llama.cpp's llama-perplexity --kl-divergence reports. Beside them: each file's accuracy in
every variant of the run (symbolic and placebo included) and its drop from the variant's
reference (base, or the symbolic instance it was drawn on).

The reference model is the file with the most bits per weight unless --reference-model names
one (--reference is the design, drawn or original, as in run). Files must share a tokenizer
(one model family). There is no default: name at least two files (a cached model's name works
too). Results: the run's files, DIR/compare.csv, DIR/compare.md (its path printed, one KL line per compared file), DIR/compare.json
and DIR/report.html with the comparison plotted beside the run's other plots (--no-html skips
it). --from DIR compares an existing run instead (its manifest fixes the design). An
interrupted compare finishes with fragility run --resume DIR.

Examples:
   fragility compare --out runs/cmp gemma-3-270m-F16.gguf gemma-3-270m-Q8_0.gguf gemma-3-270m-Q4_K_M.gguf
   fragility compare --variants base,noop-seeming --no-ddc --instances 5 --out runs/ns a-Q8_0.gguf a-Q4_K_M.gguf
   fragility compare --reference-model a-Q4_K_M.gguf --instances 1 --max-tokens 64 --out runs/q a-Q4_K_M.gguf a-Q8_0.gguf a-Q4_0.gguf
   fragility compare --from runs/q --reference-model a-Q8_0.gguf
   fragility compare --from runs/q --json | jq '.models[].agreement.kl_nats.mean'

Flags may come before or after the file names.`,
		Flags: append(modelFlags(), flagTemplate, flagJSON, flagReferenceModel,
			&cli.StringFlag{Name: "from", Usage: "compare the models of this existing run directory instead of running"},
			flagTemplates, flagDataset, flagTemplateIDs, flagLimit, flagMaxItems, flagItems, flagLevel, flagPrompt, flagVariants, flagInstances, flagMaxTokens, flagShots, flagPreset,
			&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "0: greedy; >0: seeded sampling"},
			flagBatch,
			&cli.IntFlag{Name: "bootstrap", Value: summary.DefaultBootstrapResamples, Usage: "cluster-bootstrap resamples over templates", Action: bootstrapInRange},
			flagPrimary, flagReference, flagSplit, flagSkipInvalid, flagProtocol, flagConditions, flagCalcCalls,
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "run directory (created; never overwritten without --force)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing run directory"},
			&cli.StringFlag{Name: "overrides", Usage: "label overrides (JSONL: template or item, and answer or exclude with a reason) applied before scoring"},
			&cli.StringFlag{Name: "embedder", Usage: "sentence-embedder directory or cached embedder name for the DDC columns (default: the default embedder)"},
			&cli.BoolFlag{Name: "no-ddc", Usage: "skip the DDC classification"},
			&cli.StringFlag{Name: "ddc-level", Value: "main", Usage: "DDC level: main (10 classes) or division (the 99 divisions in use)"},
			&cli.BoolFlag{Name: "copy", Usage: "also put the narrative on the system clipboard"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress and no verdicts or table on stdout"},
			&cli.BoolFlag{Name: "no-html", Usage: "do not write report.html"},
		),
		Action: compareAction,
	})
}

// compareAction is `fragility compare`: it runs the given GGUF files on
// the same items as `fragility run` would (or takes the run in --from),
// writes the run's narrative and compares the files' distributions against
// the reference model.
func compareAction(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := compareReferenceFlag(c); err != nil {
		return err
	}
	// The flags run has too, refused as run refuses them, before any model
	// is looked for.
	if err := checkModelFlags(c); err != nil {
		return err
	}
	dir := c.String("from")
	quiet := c.Bool("quiet")
	// --reference-model may name a cached model as well as a file.
	refModel := c.String(flagReferenceModel.Name)
	if r, err := models.Resolve(refModel, "llm"); refModel != "" && err == nil {
		refModel = r
	}
	var sum *summary.Summary
	if dir == "" {
		var err error
		if dir, sum, err = compareNewRun(ctx, stop, c, refModel, quiet); err != nil {
			return err
		}
	} else {
		if c.NArg() > 0 {
			return usageError{"--from RUN_DIR compares that run's models: give no GGUF files"}
		}
		llm.LoadBackends(c.String(flagBackend.Name))
	}
	// narrative.md, compare.md and report.html are written into dir: not
	// while another process writes it.
	lock, err := lockRunDir(dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	// With --json, stdout holds the comparison's JSON alone.
	if err := compareNarrative(c, dir, sum, quiet || c.Bool("json")); err != nil {
		return err
	}
	if err := compareRun(ctx, dir, refModel, c.Bool("json"), c.Bool("quiet")); err != nil {
		return err
	}
	if c.Bool("no-html") {
		return nil
	}
	return writeHTMLReport(dir)
}

// compareReferenceFlag refuses compare's --reference given a model, its
// meaning before --reference-model (one line naming the new flag), and
// --reference with --from, whose run records its design. A value that is
// neither a model nor drawn or original is left to run's own check.
func compareReferenceFlag(c *cli.Context) error {
	if !c.IsSet(flagReference.Name) {
		return nil
	}
	v := c.String(flagReference.Name)
	if v != templates.ReferenceDrawn && v != templates.ReferenceOriginal && namesModel(c, v) {
		return usageError{fmt.Sprintf("--reference %s: the reference model is now --reference-model %s (--reference is the design, drawn or original, as in run)", v, v)}
	}
	if c.String("from") != "" {
		return usageError{"--reference with --from: the run's manifest records its design (--reference-model chooses the model the others are compared with)"}
	}
	return nil
}

// namesModel reports whether v reads as a model rather than a design: a
// .gguf name, a path, a store's name (ollama:, hf:, NAME:TAG), one of the
// files to compare, an existing file or a cached model's name.
func namesModel(c *cli.Context, v string) bool {
	if strings.HasSuffix(strings.ToLower(v), ".gguf") || strings.ContainsAny(v, `/\:`) || slices.Contains(c.Args().Slice(), v) {
		return true
	}
	if fi, err := os.Stat(v); err == nil && !fi.IsDir() {
		return true
	}
	_, err := models.Resolve(v, "llm")
	return err == nil
}

// compareNewRun runs the GGUF files given as arguments on the same items
// as `fragility run` would with them as --model (runDefinition: the same
// design, reference and flags), the DDC classifier beside unless --no-ddc,
// and returns the run directory and its summary. ctx and stop are the
// command's signal context: the first Ctrl-C stops the run after the decode
// step under way, saying so at once, and it exits with exitInterrupt after
// saying how to finish; a second one quits at once, as in run.
func compareNewRun(ctx context.Context, stop func(), c *cli.Context, refModel string, quiet bool) (string, *summary.Summary, error) {
	cfg, err := compareConfig(c, refModel)
	if err != nil {
		return "", nil, err
	}
	cfg.Params = loadParams(c)
	cfg.Params.NSeq = c.Int(flagBatch.Name)
	opt := probe.Options{Force: c.Bool("force"), Log: os.Stderr, ToolInfo: toolInfo()}
	closer, err := runClassifier(c, "", cfg.Params.GPULayers == 0, &opt)
	if err != nil {
		return "", nil, err
	}
	if closer != nil {
		defer closer()
	}
	if !quiet {
		opt.Progress = newProgress(func(path string) string { return modelLabel(cfg, path) }, os.Stderr)
	}
	clock := newRunClock(cfg, "")
	opt.Progress = clock.wrap(opt.Progress)
	go clock.onInterrupt(ctx, stop, os.Stderr, cfg.OutDir)
	sum, err := probe.Run(ctx, cfg, opt)
	if err != nil {
		if errors.Is(err, llm.ErrAborted) {
			fmt.Fprintf(os.Stderr, "\nfragility: interrupted; every finished trial is in %s. Finish with `fragility run --resume %s` (it compares the files when they are one family; `fragility compare --from %s` afterwards compares them in any case)\n", cfg.OutDir, cfg.OutDir, cfg.OutDir)
			stopCPUProfile()
			os.Exit(exitInterrupt)
		}
		return "", nil, err
	}
	return cfg.OutDir, sum, nil
}

// compareConfig reads the run of a new compare from the command line as
// run's runConfig does (runDefinition, --preset, --protocol, the options
// run refuses), with the files given as arguments as its models, checked
// to load and to share a vocabulary before anything runs.
func compareConfig(c *cli.Context, refModel string) (rundir.Config, error) {
	cfg := rundir.Config{ChatTemplate: c.String(flagTemplate.Name), BootstrapB: c.Int("bootstrap"),
		OutDir: c.String("out"), Overrides: c.String("overrides")}
	if c.NArg() < 2 {
		return cfg, usageError{"expected at least two GGUF files (or --from RUN_DIR)"}
	}
	if cfg.OutDir == "" {
		return cfg, usageError{"--out DIR is required"}
	}
	if err := outNotStdout(c, "compare writes a run directory"); err != nil {
		return cfg, err
	}
	if err := runDefinition(c, &cfg); err != nil {
		return cfg, err
	}
	cfg.Temperature = c.Float64("temperature")
	if cfg.Preset != nil {
		fmt.Fprintln(os.Stderr, presetLine(cfg.Preset))
	}
	if err := applyProtocol(c, &cfg); err != nil {
		return cfg, err
	}
	// What run refuses, refused with run's messages before the files are read.
	if err := checkRunOptions(c, cfg); err != nil {
		return cfg, err
	}
	files, sources, err := resolveModelSources(c.Args().Slice(), "llm")
	if err != nil {
		return cfg, err
	}
	if refModel != "" && !namesOneOf(refModel, files) {
		return cfg, usageError{fmt.Sprintf("--reference-model %s is not one of the files to compare", c.String(flagReferenceModel.Name))}
	}
	// The loader's own check first: a damaged file is named in one plain
	// line, not in the vocabulary reader's error chain.
	for _, f := range files {
		if err := llm.CheckGGUF(f); err != nil {
			return cfg, err
		}
	}
	if err := plan.CheckVocabularies(files); err != nil {
		return cfg, err
	}
	cfg.Models, cfg.ModelSources = files, sources
	return cfg, nil
}

// compareNarrative writes narrative.md of the new run in dir from its
// summary sum and, unless quiet, shows its verdicts and where the
// narrative is, as run does; for --from (sum nil) it writes narrative.md
// only when the run has none (a compare of an older version wrote none),
// from the run's files as `fragility report` does. --copy puts the
// narrative on the clipboard.
func compareNarrative(c *cli.Context, dir string, sum *summary.Summary, quiet bool) error {
	path := filepath.Join(dir, rundir.FileNarrative)
	if sum == nil {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if _, err := report.Rewrite(dir); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "fragility: %s written (the run had none)\n", path)
		}
	} else {
		if err := report.WriteNarrative(dir, sum); err != nil {
			return err
		}
		if !quiet {
			fmt.Print(report.Verdicts(sum))
			fmt.Printf("\nThe narrative (method, tables, every number): %s\n\n", path)
		}
		fmt.Fprintf(os.Stderr, "fragility: %s; files in %s\n", count(sum.Trials, "trial"), dir)
		if sum.Trials > 0 && sum.Skipped == sum.Trials {
			return fmt.Errorf("%s: every item was skipped (see skip_reason in results.csv; a prompt longer than --n-ctx is the usual cause)", dir)
		}
	}
	if c.Bool("copy") {
		narr, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		copyToClipboard(string(narr))
	}
	return nil
}

// compareRun compares the models of the finished run in dir (probe.Compare)
// and prints compare.md, or the comparison as JSON. The run command can call
// it after a run of several files of one model family.
func compareRun(ctx context.Context, dir, refModel string, asJSON, quiet bool) error {
	opt := compare.CompareOptions{Reference: refModel, Log: os.Stderr}
	if !quiet {
		opt.Progress = compareProgress(os.Stderr)
	}
	cmp, err := compare.Compare(ctx, dir, opt)
	if err != nil {
		if errors.Is(err, llm.ErrAborted) {
			fmt.Fprintln(os.Stderr, "\nfragility: compare interrupted")
			os.Exit(exitInterrupt)
		}
		return err
	}
	if err := report.WriteCompareNarrative(dir, cmp); err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmp)
	}
	if !quiet {
		fmt.Print("\n" + report.CompareLines(cmp))
		fmt.Printf("Every table of the comparison: %s\n", filepath.Join(dir, rundir.FileCompareMD))
	}
	fmt.Fprintf(os.Stderr, "fragility: %s, %s and %s in %s\n", rundir.FileCompareCSV, rundir.FileCompareMD, rundir.FileCompareJSON, dir)
	return nil
}

// sameFamilyRun reports whether a run's models are at least two files of
// one model family (rundir.SameFamily on their recorded identities), the
// condition for the run command to follow a run with compareRun.
func sameFamilyRun(dir string) bool {
	man, err := rundir.ReadManifest(dir)
	if err != nil || len(man.Models) < 2 {
		return false
	}
	for _, m := range man.Models[1:] {
		if !rundir.SameFamily(man.Models[0].Identity, m.Identity) {
			return false
		}
	}
	return true
}

// namesOneOf reports whether ref names one of paths, by path or file name.
func namesOneOf(ref string, paths []string) bool {
	for _, p := range paths {
		if filepath.Clean(p) == filepath.Clean(ref) || filepath.Base(p) == filepath.Base(ref) {
			return true
		}
	}
	return false
}

// compareProgress is compare's progress on w (countProgress).
func compareProgress(w *os.File) func(done, total int) {
	return countProgress(w, "compare: %d/%d items scored against the reference")
}
