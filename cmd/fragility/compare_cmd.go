package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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

func init() {
	register(&cli.Command{
		Name:      "compare",
		Usage:     "compare quantizations of one model: KL divergence per token against a reference, side by side with accuracy and drops",
		ArgsUsage: "[flags] A.gguf B.gguf [C.gguf ...]  (paths or cached model names)",
		Description: `Runs the same items on every file (as fragility run with several models, without DDC), then
feeds the reference file's prompts and generated tokens to every other file (teacher forcing)
and compares, at every token, the two next-token distributions over the full vocabulary:
KL(ref||q) in nats with mean ± standard error and percentiles (max, 99.9, 99, 95, 90, median,
10, 5, 1, 0.1, min), the same-top-token rate, Δp of the reference's token (mean, RMS) and the
entropy difference in bits, the statistics llama.cpp's llama-perplexity --kl-divergence reports.
Beside them: each file's accuracy per variant and its drops from base.

The reference is the file with the most bits per weight unless --reference names one. Files
must share a tokenizer (one model family). There is no default: name at least two files (a
cached model's name works too). Results: DIR/compare.csv, DIR/compare.md (printed),
DIR/compare.json, next to the run's own files, and DIR/report.html with the comparison plotted
beside the run's other plots (--no-html skips it). --from DIR compares an existing run instead.

Examples:
   fragility compare --out runs/cmp gemma-3-270m-F16.gguf gemma-3-270m-Q8_0.gguf gemma-3-270m-Q4_K_M.gguf
   fragility compare --reference a-Q4_K_M.gguf --instances 1 --max-tokens 64 --out runs/q a-Q4_K_M.gguf a-Q8_0.gguf a-Q4_0.gguf
   fragility compare --from runs/q --reference a-Q8_0.gguf
   fragility compare --from runs/q --json | jq '.models[].agreement.kl_nats.mean'

Flags may come before or after the file names.`,
		Flags: append(modelFlags(), flagTemplate, flagJSON,
			&cli.StringFlag{Name: "reference", Aliases: []string{"r"}, Usage: "reference file (default: the one with the most bits per weight)"},
			&cli.StringFlag{Name: "from", Usage: "compare the models of this existing run directory instead of running"},
			flagTemplates, flagTemplateIDs, flagLimit,
			&cli.StringFlag{Name: "variants", Value: "base,symbolic,noop", Usage: "comma-separated: base,names,numbers,symbolic,paraphrase,noop,noop-seeming"},
			&cli.IntFlag{Name: "instances", Aliases: []string{"n"}, Value: 2, Usage: "instances per template and variant"},
			&cli.IntFlag{Name: "max-tokens", Value: 256, Usage: "output budget per item, in tokens"},
			flagShots, flagPrompt, flagLevel,
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "items decoded together, one sequence each, in one llama_batch"},
			&cli.IntFlag{Name: "bootstrap", Value: summary.DefaultBootstrapResamples, Usage: "cluster-bootstrap resamples over templates", Action: bootstrapInRange},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "run directory (created; never overwritten without --force)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing run directory"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress and no table on stdout"},
			&cli.BoolFlag{Name: "no-html", Usage: "do not write report.html"},
		),
		Action: compareAction,
	})
}

// compareAction is `fragility compare`: it runs the given GGUF files on
// the same items (or takes the run in --from) and compares their
// distributions against the reference.
func compareAction(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The flags run has too, refused as run refuses them, before any model
	// is looked for.
	if err := checkModelFlags(c); err != nil {
		return err
	}
	dir := c.String("from")
	quiet := c.Bool("quiet")
	// --reference may name a cached model as well as a file.
	ref := c.String("reference")
	if r, err := models.Resolve(ref, "llm"); ref != "" && err == nil {
		ref = r
	}
	if dir == "" {
		var err error
		if dir, err = compareNewRun(ctx, c, ref, quiet); err != nil {
			return err
		}
	} else {
		if c.NArg() > 0 {
			return usageError{"--from RUN_DIR compares that run's models: give no GGUF files"}
		}
		llm.LoadBackends(c.String(flagBackend.Name))
	}
	// compare.md and report.html are written into dir: not while another
	// process writes it.
	lock, err := lockRunDir(dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := compareRun(ctx, dir, ref, c.Bool("json"), quiet); err != nil {
		return err
	}
	if c.Bool("no-html") {
		return nil
	}
	return writeHTMLReport(dir)
}

// compareNewRun runs the GGUF files given as arguments on the same items,
// as `fragility run` would, and returns the run directory; an interruption
// exits with exitInterrupt after saying how to finish.
func compareNewRun(ctx context.Context, c *cli.Context, ref string, quiet bool) (string, error) {
	if c.NArg() < 2 {
		return "", usageError{"expected at least two GGUF files (or --from RUN_DIR)"}
	}
	if c.String("out") == "" {
		return "", usageError{"--out DIR is required"}
	}
	if err := outNotStdout(c, "compare writes a run directory"); err != nil {
		return "", err
	}
	vs, err := templates.ParseVariants(c.String("variants"))
	if err != nil {
		return "", usageError{"--variants: " + err.Error()}
	}
	cfg := rundir.Config{
		Templates:    templatesSource(c),
		Variants:     vs,
		Instances:    c.Int("instances"),
		Seed:         int64(c.Uint64(flagSeed.Name)),
		MaxTokens:    c.Int("max-tokens"),
		ChatTemplate: c.String(flagTemplate.Name),
		BootstrapB:   c.Int("bootstrap"),
		OutDir:       c.String("out"),
	}
	if err := promptFlags(c, &cfg); err != nil {
		return "", err
	}
	// What run refuses, refused with run's messages before the files are read.
	if err := checkRunOptions(c, cfg); err != nil {
		return "", err
	}
	files, sources, err := resolveModelSources(c.Args().Slice(), "llm")
	if err != nil {
		return "", err
	}
	if ref != "" && !namesOneOf(ref, files) {
		return "", usageError{fmt.Sprintf("--reference %s is not one of the files to compare", c.String("reference"))}
	}
	// The loader's own check first: a damaged file is named in one plain
	// line, not in the vocabulary reader's error chain.
	for _, f := range files {
		if err := llm.CheckGGUF(f); err != nil {
			return "", err
		}
	}
	if err := plan.CheckVocabularies(files); err != nil {
		return "", err
	}
	cfg.Models, cfg.ModelSources = files, sources
	cfg.Params = loadParams(c)
	cfg.Params.NSeq = c.Int("batch")
	opt := probe.Options{Force: c.Bool("force"), Log: os.Stderr,
		ToolInfo: map[string]string{"name": "fragility", "version": version}}
	if !quiet {
		opt.Progress = func(ev probe.Event) {
			fmt.Fprintf(os.Stderr, "\rrun: %d/%d items (%s)   ", ev.Done, ev.Total, filepath.Base(ev.Model))
		}
	}
	_, err = probe.Run(ctx, cfg, opt)
	if !quiet {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		if errors.Is(err, llm.ErrAborted) {
			fmt.Fprintf(os.Stderr, "fragility: interrupted; finish the run with `fragility run --resume %s`, then `fragility compare --from %s`\n", cfg.OutDir, cfg.OutDir)
			os.Exit(exitInterrupt)
		}
		return "", err
	}
	return cfg.OutDir, nil
}

// compareRun compares the models of the finished run in dir (probe.Compare)
// and prints compare.md, or the comparison as JSON. The run command can call
// it after a run of several files of one model family.
func compareRun(ctx context.Context, dir, reference string, asJSON, quiet bool) error {
	opt := compare.CompareOptions{Reference: reference, Log: os.Stderr}
	if !quiet {
		opt.Progress = func(done, total int) {
			fmt.Fprintf(os.Stderr, "\rcompare: %d/%d items scored against the reference", done, total)
			if done == total {
				fmt.Fprintln(os.Stderr)
			}
		}
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
		fmt.Print(report.CompareNarrative(cmp))
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
