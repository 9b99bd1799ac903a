package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/fragility/fragility/embed"
	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/shard"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "run",
		Usage: "run the probe: models × templates × variants × instances, then statistics and a narrative",
		Description: `Plans the full matrix, generates and validates the item set before any model loads, runs
every item in its own KV state in an order shuffled by --seed, and streams one row per trial to
DIR/results.csv (and per-token entropies to DIR/traces.jsonl) as it goes. At the end it writes
summary.json and narrative.md, prints each model's verdict with the few numbers it rests on
and the path of the narrative, and writes report.html (the narrative,
plots and a table of every trial in one page that opens from disk; --no-html skips it).
Progress goes to stderr.

An interrupted run (Ctrl-C, SIGTERM) keeps every finished trial; --resume DIR finishes it and
gives the same results as an uninterrupted run; a flag that would change
the resumed run's settings is refused.

Examples:
   fragility run --out runs/demo
   fragility run --model qwen2.5-coder-1.5b --out runs/q15
   fragility run --model ollama:qwen3:8b --model hf:unsloth/Qwen3-8B-GGUF:Q4_K_M --out runs/mine
   fragility run --model a-Q4_K_M.gguf --model a-Q8_0.gguf --variants base,symbolic,noop,names,numbers --instances 5 --out runs/q
   fragility run --templates ~/ml-gsm-symbolic/templates/symbolic --out runs/gsym --shots 2
   fragility run --templates gsm8k_test.jsonl --variants base --instances 1 --out runs/gsm8k
   fragility run --templates ~/ml-gsm-symbolic/templates/p1 --prompt gsm-symbolic --out runs/p1
   fragility run --templates ~/ml-gsm-symbolic/templates --preset gsm-symbolic-paper --out runs/paper   # the paper's protocol, its table beside ours
   fragility run --dataset hf:datasets/apple/GSM-Symbolic --dataset hf:datasets/apple/GSM-Symbolic:p1 --out runs/released   # the instances the paper ran (your download)
   fragility run --variants base,symbolic,noop --primary symbolic --out runs/primary
   fragility run --conditions none,calculator --calc-calls 10 --variants base,numbers,symbolic --out runs/calc
   fragility run --items examples/docqa.jsonl --variants base,paraphrase,distractor --out runs/docqa
   fragility run --resume runs/q
   fragility run --shard 2/4 --out runs/q/shards/2 ...     # the second of four shards (see fragility merge)
   fragility run --shard auto --out runs/q/shards/$SLURM_ARRAY_TASK_ID ...

--shard K/N runs shard K of N (numbered from 1) of the planned matrix: a contiguous range of
whole batches of the unsharded order, so every item is decoded in exactly the batch it would
have been in a single run. --shard auto takes K and N from a Slurm job array
(SLURM_ARRAY_TASK_ID, _MIN, _STEP and _COUNT: any --array=A-B[:S]) or from a Kubernetes Indexed
Job (JOB_COMPLETION_INDEX, 0-based, with --shards N). fragility merge joins the shards into one
run directory; deploy/ has ready launch files.

` + storesHelp,
		Flags: append(modelFlags(), flagTemplate,
			flagModels, flagTemplates, flagDataset, flagTemplateIDs, flagLimit, flagMaxItems, flagItems, flagLevel, flagPrompt, flagVariants, flagInstances, flagMaxTokens, flagShots, flagPreset,
			&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "0: greedy; >0: seeded sampling"},
			flagBatch,
			&cli.IntFlag{Name: "bootstrap", Value: summary.DefaultBootstrapResamples, Usage: "cluster-bootstrap resamples over templates", Action: bootstrapInRange},
			flagPrimary, flagReference, flagSplit, flagSkipInvalid, flagProtocol, flagConditions, flagCalcCalls,
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "run directory (created; never overwritten without --force)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing run directory"},
			&cli.StringFlag{Name: "overrides", Usage: "label overrides (JSONL: template or item, and answer or exclude with a reason) applied before scoring"},
			&cli.StringFlag{Name: "resume", Usage: "finish the interrupted run in this directory (its manifest defines the run)"},
			&cli.StringFlag{Name: "embedder", Usage: "sentence-embedder directory or cached embedder name for the DDC columns (default: the default embedder)"},
			&cli.BoolFlag{Name: "no-ddc", Usage: "skip the DDC classification"},
			&cli.StringFlag{Name: "ddc-level", Value: "main", Usage: "DDC level: main (10 classes) or division (the 99 divisions in use)"},
			&cli.BoolFlag{Name: "copy", Usage: "also put the narrative on the system clipboard"},
			&cli.BoolFlag{Name: "no-compare", Usage: "with several quantizations of one model, skip the KL comparison after the run"},
			&cli.BoolFlag{Name: "no-html", Usage: "do not write report.html"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar and no verdicts on stdout"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard K/N (1 ≤ K ≤ N) of the plan, or auto: from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX"},
			&cli.IntFlag{Name: "shards", Usage: "number of shards, for --shard auto with a Kubernetes Indexed Job (its completions)"},
		),
		Action: runAction,
	})
}

// errAlreadyComplete is runConfig's answer to --resume on a complete run.
var errAlreadyComplete = errors.New("the run is complete")

// runAction is `fragility run`: it reads the run from the command line (or
// the manifest of --resume DIR), opens the DDC classifier, runs the probe
// with a progress bar and writes and shows its reports.
func runAction(c *cli.Context) error {
	cfg, resume, shardSource, err := runConfig(c)
	if errors.Is(err, errAlreadyComplete) {
		return finishComplete(c, resume)
	}
	if err != nil {
		return err
	}
	p := loadParams(c)
	p.NSeq = c.Int(flagBatch.Name)
	cfg.Params = p

	opt := probe.Options{Resume: resume != "", Force: c.Bool("force"), Log: os.Stderr,
		ToolInfo: toolInfo(), ShardSource: shardSource}
	closer, err := runClassifier(c, resume, p.GPULayers == 0, &opt)
	if err != nil {
		return err
	}
	if closer != nil {
		defer closer()
	}
	if !c.Bool("quiet") {
		opt.Progress = newProgress(func(path string) string { return modelLabel(cfg, path) }, os.Stderr)
	}
	clock := newRunClock(cfg, resume)
	opt.Progress = clock.wrap(opt.Progress)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C stops the run after the decode step under way,
	// saying so at once; restoring the default handling makes a second
	// one quit at once.
	go clock.onInterrupt(ctx, stop, os.Stderr, cfg.OutDir)
	sum, err := probe.Run(ctx, cfg, opt)
	if err != nil {
		if errors.Is(err, llm.ErrAborted) {
			fmt.Fprintf(os.Stderr, "\nfragility: interrupted; every finished trial is in %s. Finish with: fragility run --resume %s\n", cfg.OutDir, cfg.OutDir)
			stopCPUProfile()
			os.Exit(exitInterrupt)
		}
		return err
	}
	lock, err := lockRunDir(cfg.OutDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return finishRun(ctx, c, cfg.OutDir, sum)
}

// finishComplete answers --resume on a run whose manifest says complete:
// when a process was killed after that and before its summary.json or
// narrative.md was written (a run directory with its traces.jsonl), it
// writes them (and the reports finishRun writes); otherwise there is
// nothing to resume.
func finishComplete(c *cli.Context, dir string) error {
	lock, err := lockRunDir(dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	missing := ""
	for _, name := range []string{rundir.FileSummary, rundir.FileNarrative} {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) && missing == "" {
			missing = name
		}
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.FileTraces)); err != nil {
		missing = "" // not a directory a run wrote (no traces.jsonl): left as it is
	}
	if missing == "" {
		// A complete run's files must still read as report reads them: a
		// results.csv torn or edited after the run finished is not an
		// interrupted run, and "nothing to resume" left no way forward.
		if _, err := probe.Recompute(dir); err != nil {
			what := err.Error()
			if torn := (*results.TornRowError)(nil); errors.As(err, &torn) {
				what = rundir.FileResults + " " + torn.Where() // its advice is for an interrupted run
			}
			return fmt.Errorf("%s is complete, but its files no longer read (%s): they changed after the run finished, so there is nothing to resume: restore them from a copy, or give the run's own command again with --force to run it anew", dir, what)
		}
		fmt.Fprintf(os.Stderr, "fragility: %s is complete: nothing to resume (fragility report %s re-renders its reports)\n", dir, dir)
		return nil
	}
	fmt.Fprintf(os.Stderr, "fragility: %s is complete but has no %s (the process ended before writing it): writing the reports\n", dir, missing)
	sum, err := probe.WriteSummary(dir)
	if err != nil {
		return err
	}
	return finishRun(context.Background(), c, dir, sum)
}

// lockRunDir takes the lock of the run directory dir (rundir.LockDir) when
// dir is a directory; otherwise it returns a nil lock and leaves the error
// to the command's own reading of dir.
func lockRunDir(dir string) (*rundir.DirLock, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	return rundir.LockDir(dir)
}

// runConfig reads the run's definition from the command line: for
// --resume DIR only the directory (the flags that would change the run are
// refused), otherwise the shard, the output directory, the definition and
// the models, with the options checked before any GPU notice. It returns
// the resumed directory ("" for a new run) and where the shard came from;
// errAlreadyComplete when the resumed run is complete.
func runConfig(c *cli.Context) (cfg rundir.Config, resume, shardSource string, err error) {
	if err := outNotStdout(c, "run writes a run directory (results.csv, traces.jsonl, the report)"); err != nil {
		return cfg, "", "", err
	}
	if c.NArg() > 0 {
		return cfg, "", "", usageError{fmt.Sprintf("run takes no arguments, got %q (models are --model, templates --templates)", c.Args().First())}
	}
	cfg = rundir.Config{
		Templates:    templatesSource(c),
		Instances:    c.Int(flagInstances.Name),
		Seed:         int64(c.Uint64(flagSeed.Name)),
		MaxTokens:    c.Int(flagMaxTokens.Name),
		Temperature:  c.Float64("temperature"),
		ChatTemplate: c.String(flagTemplate.Name),
		BootstrapB:   c.Int("bootstrap"),
		OutDir:       c.String("out"),
		Overrides:    c.String("overrides"),
	}
	resume = c.String("resume")
	if resume != "" {
		if cfg.OutDir != "" && filepath.Clean(cfg.OutDir) != filepath.Clean(resume) {
			return cfg, resume, "", usageError{"--resume DIR and --out name different directories"}
		}
		if c.IsSet("shard") || c.IsSet("shards") {
			return cfg, resume, "", usageError{"--shard/--shards with --resume: a resumed run keeps the shard its manifest records"}
		}
		if err := resumeFlags(c); err != nil {
			return cfg, resume, "", err
		}
		// A directory without a readable manifest is refused before
		// loadParams prints any GPU notice.
		man, err := rundir.ReadManifest(resume)
		if err != nil {
			return cfg, resume, "", err
		}
		if man.Status == "complete" {
			return cfg, resume, "", errAlreadyComplete
		}
		cfg.OutDir = resume
		return cfg, resume, "", nil
	}
	if shardSource, err = newRunConfig(c, &cfg); err != nil {
		return cfg, resume, "", err
	}
	return cfg, resume, shardSource, nil
}

// newRunConfig fills cfg for a new run: its shard (returning where it came
// from), the definition and the models (the default LLM when none is given).
func newRunConfig(c *cli.Context, cfg *rundir.Config) (shardSource string, err error) {
	if spec := c.String("shard"); spec != "" {
		sh, src, err := shard.ParseShard(spec, c.Int("shards"), os.Getenv)
		if err != nil {
			return "", usageError{err.Error()}
		}
		cfg.Shard, shardSource = &sh, src
	} else if c.IsSet("shards") {
		return "", usageError{"--shards is for --shard auto"}
	}
	if cfg.OutDir == "" {
		return "", usageError{"--out DIR is required (or --resume DIR)"}
	}
	if err := runDefinition(c, cfg); err != nil {
		return "", err
	}
	if cfg.Preset != nil {
		fmt.Fprintln(os.Stderr, presetLine(cfg.Preset))
	}
	if err := applyProtocol(c, cfg); err != nil {
		return "", err
	}
	// Wrong usage is refused before the models are looked for (as plan
	// does) and before loadParams prints any GPU notice.
	if err := checkRunOptions(c, *cfg); err != nil {
		return "", err
	}
	models, sources, err := resolveModelSources(c.StringSlice(flagModels.Name), "llm")
	if err != nil {
		return "", err
	}
	if len(models) == 0 {
		p, err := defaultModelPath("llm")
		if err != nil {
			return "", err
		}
		models = []string{p}
	}
	cfg.Models, cfg.ModelSources = models, sources
	return shardSource, nil
}

// runClassifier opens the DDC classifier into opt unless --no-ddc; a
// resumed run classifies as its manifest says, with the same embedder
// file. It returns the classifier's closer (nil when none is open).
func runClassifier(c *cli.Context, resume string, beside bool, opt *probe.Options) (func(), error) {
	useDDC, embedDir, level, embedSHA := !c.Bool("no-ddc"), c.String("embedder"), c.String("ddc-level"), ""
	for _, f := range []string{"ddc-level", "embedder"} {
		if !useDDC && c.IsSet(f) {
			return nil, usageError{fmt.Sprintf("--no-ddc with --%s: the DDC columns are off, so --%s would be ignored; give one of the two", f, f)}
		}
	}
	if resume != "" {
		// The run's manifest, not this command line, says whether and how
		// prompts were classified: the resumed trials must match the others.
		man, err := rundir.ReadManifest(resume)
		if err != nil {
			return nil, err
		}
		useDDC = man.Embedder != nil
		if useDDC {
			level, embedSHA = man.Embedder.Level, man.Embedder.SHA256
			if embedDir == "" {
				embedDir = filepath.Dir(man.Embedder.Path)
			}
		}
	}
	if !useDDC {
		return nil, nil
	}
	cls, info, closer, err := openClassifier(embedDir, level, beside)
	if err != nil {
		return nil, err
	}
	if embedSHA != "" && info.SHA256 != embedSHA {
		closer()
		return nil, fmt.Errorf("%s: sha256 changed since the run started (%s, now %s): cannot resume", info.Path, embedSHA, info.SHA256)
	}
	opt.Classifier, opt.Embedder = cls, info
	return closer, nil
}

// finishRun writes the narrative of a finished run in out and shows it
// (a shard only says it is done), then compares the models when they are
// one family and writes report.html, as the flags say.
func finishRun(ctx context.Context, c *cli.Context, out string, sum *summary.Summary) error {
	if err := report.WriteNarrative(out, sum); err != nil {
		return err
	}
	if man, err := rundir.ReadManifest(out); err == nil && man.Shard != nil {
		// A shard's statistics are a part's: the run's come from the merge.
		fmt.Fprintf(os.Stderr, "fragility: shard %s done: %d trials in %s (plan sha256 %.12s); when all %d shards are done: fragility merge OUT SHARD_DIR...\n",
			man.Shard.Shard, sum.Trials, out, man.PlanSHA256, man.Shard.Count)
		if sum.Trials > 0 && sum.Skipped == sum.Trials {
			fmt.Fprintf(os.Stderr, "fragility: %s: every item of this shard was skipped (see skip_reason in results.csv)\n", out)
		}
		return nil
	}
	narr, err := os.ReadFile(filepath.Join(out, rundir.FileNarrative))
	if err != nil {
		return err
	}
	if !c.Bool("quiet") {
		// The answer first: the verdicts and what they rest on; the
		// whole narrative is in the file.
		fmt.Print(report.Verdicts(sum))
		fmt.Printf("\nThe narrative (method, tables, every number): %s\n", filepath.Join(out, rundir.FileNarrative))
	}
	fmt.Fprintf(os.Stderr, "fragility: %s; files in %s\n", count(sum.Trials, "trial"), out)
	if sum.Trials > 0 && sum.Skipped == sum.Trials {
		return fmt.Errorf("%s: every item was skipped (see skip_reason in results.csv; a prompt longer than --n-ctx is the usual cause)", out)
	}
	if c.Bool("copy") {
		copyToClipboard(string(narr))
	}
	// Several quantizations of one model: teacher-force the reference's
	// tokens through the others and report the KL divergence (compare.md).
	if !c.Bool("no-compare") && sameFamilyRun(out) {
		fmt.Fprintln(os.Stderr, "fragility: the models are one family: comparing their distributions (--no-compare skips this)")
		if err := compareRun(ctx, out, "", false, c.Bool("quiet")); err != nil {
			return err
		}
	}
	if !c.Bool("no-html") {
		if err := writeHTMLReport(out); err != nil {
			return fmt.Errorf("%w (the run's other files are complete; fragility report --html %s retries the page)", err, out)
		}
	}
	return nil
}

// resumeKeeps names the flags a resumed run accepts: they change how the
// run is shown or where its embedder is found, not its plan or a logit.
var resumeKeeps = map[string]bool{"resume": true, "out": true, "quiet": true, "copy": true,
	"no-compare": true, "no-html": true, "embedder": true, "help": true}

// resumeFlags refuses, naming it, any flag given with --resume that would
// change the plan or the numbers of the run its manifest defines (models,
// templates, instances, seed, tokens, sampling, context, threads, ...).
func resumeFlags(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if resumeKeeps[name] {
			continue
		}
		for _, n := range f.Names() {
			if c.IsSet(n) {
				return usageError{fmt.Sprintf("--%s with --resume: a resumed run keeps the settings its manifest records (only --out, --quiet, --copy, --no-compare, --no-html and --embedder may be given)", name)}
			}
		}
	}
	return nil
}

// ddcCacheOptions keeps DDC class vectors in the user cache directory
// (fragility/ddc), keyed by the embedder's sha256 and the class texts.
func ddcCacheOptions() []embed.ClassifierOption {
	if uc, err := os.UserCacheDir(); err == nil {
		return []embed.ClassifierOption{embed.WithCacheDir(filepath.Join(uc, "fragility", "ddc"))}
	}
	return nil
}

// openClassifier opens the sentence embedder in dir (default: the cached
// default embedder) and returns a DDC classifier at level for probe.Run. With
// beside (a CPU run), the embedder runs in one goroutine (embed.WithSequential)
// so that, working beside llama.cpp's threads, it does not slow generation.
func openClassifier(dir, level string, beside bool) (probe.Classifier, *rundir.Embedder, func(), error) {
	if dir == "" {
		var err error
		if dir, err = defaultModelPath("embedder"); err != nil {
			return nil, nil, nil, fmt.Errorf("%w (or pass --no-ddc)", err)
		}
	} else {
		given := dir
		var err error
		if dir, err = resolveModel(dir, "embedder"); err != nil {
			return nil, nil, nil, err
		}
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, nil, fmt.Errorf("--embedder %s: %w", given, templates.BarePathError(err))
		}
	}
	lv, err := embed.ParseLevel(level)
	if err != nil {
		return nil, nil, nil, usageError{err.Error()}
	}
	var opts []embed.Option
	if beside {
		opts = append(opts, embed.WithSequential())
	}
	e, err := embed.Open(dir, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	// The class vectors (about 10 s at main level the first time, then read
	// from the cache) are computed on first use, inside the run's background
	// DDC goroutine, so they overlap generation too.
	var (
		once   sync.Once
		cls    *embed.Classifier
		clsErr error
	)
	info := &rundir.Embedder{Name: e.Name(), Path: e.ModelPath(), SHA256: e.SHA256(), Level: lv.String()}
	f := func(texts []string) ([]probe.DDC, error) {
		once.Do(func() { cls, clsErr = embed.NewClassifier(e, lv, ddcCacheOptions()...) })
		if clsErr != nil {
			return nil, clsErr
		}
		rs, err := cls.ClassifyAll(texts)
		if err != nil {
			return nil, err
		}
		out := make([]probe.DDC, len(rs))
		for i, r := range rs {
			out[i] = probe.DDC{Top: r.Top.Code, TopName: r.Top.Name, RunnerUp: r.RunnerUp.Code, Margin: r.Margin}
		}
		return out, nil
	}
	return f, info, func() { e.Close() }, nil
}

// toolInfo describes this binary for a manifest: name, version and the
// sha256 of the executable (so that `fragility merge` can tell whether
// shards ran the same binary; "" when it cannot be read).
func toolInfo() map[string]string {
	info := map[string]string{"name": "fragility", "version": version}
	if exe, err := os.Executable(); err == nil {
		if sum, err := models.SHA256File(exe); err == nil {
			info["binary_sha256"] = sum
		}
	}
	return info
}

// modelLabel is how progress names the model at path: the store's name when
// it was named from one (a blob's file name is its digest), else the file
// name.
func modelLabel(cfg rundir.Config, path string) string {
	for i, p := range cfg.Models {
		if p == path && i < len(cfg.ModelSources) && cfg.ModelSources[i] != nil {
			return cfg.ModelSources[i].Name
		}
	}
	return filepath.Base(path)
}
