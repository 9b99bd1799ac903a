package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// Flags shared by every command that loads a model. A flag with the same
// name means the same thing in every command.
var (
	flagThreads   = &cli.IntFlag{Name: "threads", Value: llm.DefaultThreads(), Action: threadsInRange("threads"), Usage: "CPU threads for llama.cpp's one-token decodes (generation one sequence at a time, and the tail of a batch); the default is every core ($FRAGILITY_THREADS when it is a positive integer), which was fastest on 2 cores even with the DDC embedder beside generation (docs/performance.md); thread counts change speed, not logits"}
	flagThreadsB  = &cli.IntFlag{Name: "threads-batch", Value: llm.DefaultThreadsBatch(), Action: threadsInRange("threads-batch"), Usage: "CPU threads for llama.cpp's decodes of several tokens (prompts, and generation steps of several sequences), as llama.cpp's --threads-batch; the default is every core ($FRAGILITY_THREADS when it is a positive integer); thread counts change speed, not logits"}
	flagNCtx      = &cli.IntFlag{Name: "n-ctx", Value: 2048, Usage: "context length per sequence, in tokens: at least 64, or 0 for the default"}
	flagNBatch    = &cli.IntFlag{Name: "n-batch", Value: 512, Usage: "logical batch size for prompt processing, in tokens"}
	flagGPULayers = &cli.IntFlag{Name: "gpu-layers", Value: -1, Usage: "layers to offload to a GPU (-1: all when a GPU backend is loaded; 0: CPU only; no other negative value)"}
	flagSeed      = &cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed for instance draws, order and sampling"}
	flagTemplate  = &cli.StringFlag{Name: "chat-template", Usage: "use this llama.cpp built-in chat template (e.g. gemma, chatml) instead of the model's own"}
	flagJSON      = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON on stdout"}
	flagBackend   = &cli.StringFlag{Name: "backend-dir", EnvVars: []string{"FRAGILITY_BACKEND_DIR"}, Usage: "directory holding ggml GPU backends (default: lib/ next to the binary)"}
)

// Flags that define a run, shared by `run` and `plan` (which sizes and
// plans the run that `run` would start with the same flags), besides
// flagTemplates, flagLevel, flagPrompt and flagShots.
var (
	flagModels      = &cli.StringSliceFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage + " (repeatable)"}
	flagVariants    = &cli.StringFlag{Name: "variants", Value: "base,symbolic,noop", Usage: "comma-separated: base,names,numbers,symbolic,paraphrase,noop,noop-seeming"}
	flagInstances   = &cli.IntFlag{Name: "instances", Aliases: []string{"n"}, Value: 2, Usage: "instances per template and variant"}
	flagMaxTokens   = &cli.IntFlag{Name: "max-tokens", Value: 256, Usage: "output budget per item, in tokens"}
	flagBatch       = &cli.IntFlag{Name: "batch", Value: 8, Usage: "items decoded together, one sequence each, in one llama_batch (1: one at a time); part of the run's definition, as llama.cpp is not batch-invariant"}
	flagItems       = &cli.StringFlag{Name: "items", Usage: "JSONL file of your own document questions (docs/docqa.md) instead of templates; variants then: " + docqa.VariantsHelp + " (default base,paraphrase,distractor), --prompt docqa, --instances 1"}
	flagConditions  = &cli.StringFlag{Name: "conditions", Value: results.ConditionNone, Usage: "comma-separated conditions, each run on every item: none (the model alone), calculator (the model may write <<EXPR= and gets the exact result; docs/running.md)"}
	flagCalcCalls   = &cli.IntFlag{Name: "calc-calls", Value: probe.DefaultCalcCalls, Usage: "calculator calls per item that get a result (with --conditions calculator)"}
	flagReference   = &cli.StringFlag{Name: "reference", Value: templates.ReferenceDrawn, Usage: "what noop, noop-seeming and paraphrase are compared with: drawn (the symbolic instance of the same index, which the run then includes: the pair differs only in the clause or the wording) or original (the base instance at the template's own values, as before); recorded in the manifest"}
	flagSkipInvalid = &cli.BoolFlag{Name: "skip-invalid", Usage: "run even when more than 10% of the templates fail to load or draw (they are left out, listed in the manifest and the narrative)"}
	flagSplit       = &cli.StringFlag{Name: "split", Value: templates.SplitAll, Usage: "templates of one split only: dev (about 30%, for tuning prompts and parsers), test (the rest, for a frozen protocol) or all; each template's split comes from a hash of its content"}
	flagPrimary     = &cli.StringFlag{Name: "primary", Usage: "pre-specified primary variant (e.g. symbolic): the model's verdict is its drop, tested alone; recorded in the manifest (default: Holm across all variants, verdict from the most severe)"}
)

// runDefinition reads the flags that define a run's items and test (the
// templates, variants, instances, seed, output budget, prompt preset,
// shots, level and primary variant) into cfg; wrong values are usage
// errors. Models, batch and the rest are the caller's.
func runDefinition(c *cli.Context, cfg *rundir.Config) error {
	if usesDataset(c) {
		return datasetDefinition(c, cfg)
	}
	if err := applyPreset(c, cfg); err != nil {
		return err
	}
	cfg.Templates, cfg.Instances = templatesSource(c), c.Int(flagInstances.Name)
	cfg.Seed, cfg.MaxTokens = int64(c.Uint64(flagSeed.Name)), c.Int(flagMaxTokens.Name)
	if c.IsSet(flagItems.Name) {
		return itemsDefinition(c, cfg)
	}
	vs, err := templates.ParseVariants(c.String(flagVariants.Name))
	if err != nil {
		return usageError{"--variants: " + err.Error()}
	}
	cfg.Variants = vs
	cfg.SkipInvalid = c.Bool(flagSkipInvalid.Name)
	if cfg.Split, err = templates.ParseSplit(c.String(flagSplit.Name)); err != nil {
		return usageError{"--split: " + err.Error()}
	}
	if err := promptFlags(c, cfg); err != nil {
		return err
	}
	if cfg.Prompt == probe.PromptDocQA {
		return usageError{"--prompt docqa reads document questions: give them with --items FILE"}
	}
	return primaryAndBatch(c, cfg)
}

// itemsDefinition is runDefinition for --items: document questions (package
// docqa) with their own variants, the docqa prompt and, unless given, one
// instance (base and paraphrase prompts are the same at every index).
func itemsDefinition(c *cli.Context, cfg *rundir.Config) error {
	cfg.Items, cfg.Templates = c.String(flagItems.Name), ""
	if cfg.Items == "" {
		return usageError{"--items needs a file"}
	}
	if c.IsSet(flagTemplates.Name) || c.IsSet(flagLevel.Name) || c.IsSet(flagTemplateIDs.Name) || c.IsSet(flagLimit.Name) || c.IsSet(flagSplit.Name) {
		return usageError{"--items replaces --templates (and --level, --split, --template-ids, --limit, which choose templates): give one or the other"}
	}
	if p := c.String(flagPrompt.Name); c.IsSet(flagPrompt.Name) && p != probe.PromptDocQA {
		return usageError{fmt.Sprintf("--items takes --prompt %s, not %s", probe.PromptDocQA, p)}
	}
	if c.IsSet(flagShots.Name) && c.Int(flagShots.Name) != 0 {
		return usageError{"--shots: the docqa prompt has no worked examples"}
	}
	cfg.Prompt, cfg.Shots = probe.PromptDocQA, 0
	list := "base,paraphrase,distractor"
	if c.IsSet(flagVariants.Name) {
		list = c.String(flagVariants.Name)
	}
	vs, err := docqa.ParseVariants(list)
	if err != nil {
		return usageError{"--variants: " + err.Error()}
	}
	cfg.Variants = vs
	if !c.IsSet(flagInstances.Name) {
		cfg.Instances = 1
	}
	return primaryAndBatch(c, cfg)
}

// primaryAndBatch checks --primary against cfg.Variants, and --batch.
func primaryAndBatch(c *cli.Context, cfg *rundir.Config) error {
	vs := cfg.Variants
	cfg.Primary = c.String(flagPrimary.Name)
	cfg.Reference = c.String(flagReference.Name)
	if cfg.Items == "" && cfg.Reference != templates.ReferenceDrawn && cfg.Reference != templates.ReferenceOriginal {
		msg := fmt.Sprintf("--reference %q: want drawn or original (the design: which instance a variant is paired with)", cfg.Reference)
		if strings.HasSuffix(strings.ToLower(cfg.Reference), ".gguf") {
			msg += "; a model to compare quantizations against is fragility compare's --reference-model"
		}
		return usageError{msg}
	}
	expanded := cfg.Items != "" && strings.HasPrefix(cfg.Primary, docqa.Paraphrase+"-") && slices.Contains(vs, docqa.Paraphrase)
	if cfg.Primary != "" && (cfg.Primary == summary.BaseVariant || !(slices.Contains(vs, templates.Variant(cfg.Primary)) || expanded)) {
		return usageError{fmt.Sprintf("--primary %s must be one of the other variants in --variants (%s)", cfg.Primary, c.String(flagVariants.Name))}
	}
	if s := c.String(flagConditions.Name); s != "" {
		conds, err := probe.ParseConditions(s)
		if err != nil {
			return usageError{"--conditions: " + err.Error()}
		}
		cfg.Conditions = conds
	}
	if c.IsSet(flagCalcCalls.Name) {
		if n := c.Int(flagCalcCalls.Name); n < 1 {
			return usageError{fmt.Sprintf("--calc-calls must be at least 1, got %d", n)}
		}
		if !slices.Contains(cfg.Conditions, results.ConditionCalculator) {
			return usageError{"--calc-calls goes with --conditions calculator"}
		}
	}
	cfg.CalcCalls = c.Int(flagCalcCalls.Name)
	return probe.CheckBatch(c.Int(flagBatch.Name))
}

// checkRunOptions refuses, as wrong usage, options of the run cfg defines
// that run would refuse (probe.ValidateOptions): the decoding flags
// are read here into a copy's Params (flagParams), so that run, plan and
// compare refuse the same values with the same message before any backend
// or model loads. cfg is not changed.
func checkRunOptions(c *cli.Context, cfg rundir.Config) error {
	cfg.Params = flagParams(c)
	return probe.ValidateOptions(&cfg)
}

// flagParams reads the decoding flags as given, before loadParams turns
// --gpu-layers -1 into 0 where no GPU backend is loaded: --threads,
// --threads-batch, --n-ctx, --n-batch, --gpu-layers and, in a command that
// has it, --batch (the sequences decoded together; 0, that is 1, in one
// that has not).
func flagParams(c *cli.Context) llm.Params {
	return llm.Params{Threads: c.Int(flagThreads.Name), ThreadsBatch: c.Int(flagThreadsB.Name), NCtx: c.Int(flagNCtx.Name),
		NBatch: c.Int(flagNBatch.Name), NSeq: c.Int(flagBatch.Name), GPULayers: c.Int(flagGPULayers.Name)}
}

// checkModelFlags refuses, as wrong usage, the values of the decoding flags
// (flagParams) that run refuses, with run's messages (probe.CheckBatch,
// probe.CheckParams), for a command that loads a model without defining a
// run (bench, generate, inspect, compare --from); call it before any model
// is looked up. 0 keeps its meaning of the default where run gives it one.
func checkModelFlags(c *cli.Context) error {
	if c.IsSet(flagBatch.Name) { // a command without --batch decodes one sequence
		if err := probe.CheckBatch(c.Int(flagBatch.Name)); err != nil {
			return err
		}
	}
	return probe.CheckParams(flagParams(c))
}

// threadsInRange is the flag action of a thread count: 0 (the default) to
// llm.MaxThreads, else wrong usage. A count far above the cores is refused
// before any model loads: llama.cpp would start that many threads.
func threadsInRange(name string) func(*cli.Context, int) error {
	return func(_ *cli.Context, n int) error {
		if n < 0 || n > llm.MaxThreads {
			return usageError{fmt.Sprintf("--%s must be between 0 (the default) and %d, got %d", name, llm.MaxThreads, n)}
		}
		return nil
	}
}

// bootstrapInRange is the flag action of --bootstrap: 1 to
// probe.MaxBootstrapResamples, else wrong usage.
func bootstrapInRange(_ *cli.Context, n int) error {
	if n < 1 || n > summary.MaxBootstrapResamples {
		return usageError{fmt.Sprintf("--bootstrap must be between 1 and %d resamples, got %d", summary.MaxBootstrapResamples, n)}
	}
	return nil
}

func modelFlags() []cli.Flag {
	return []cli.Flag{flagThreads, flagThreadsB, flagNCtx, flagNBatch, flagGPULayers, flagSeed, flagBackend}
}

// defaultModelPath returns the cached default model of kind ("llm" or
// "embedder"), or an error naming it and how to fetch it.
func defaultModelPath(kind string) (string, error) { return models.DefaultPath(kind) }

// resolveModel is the one place where what a user passed as a model (a
// --model or --embedder value, a model argument) becomes the path a loader
// opens: a path as it is, or the cached file of a model named in the
// manifest (`fragility models list`); "" means the default model of kind.
// A named model that is not cached fails with one line naming it and the
// command that fetches it.
func resolveModel(arg, kind string) (string, error) {
	if arg == "" {
		return defaultModelPath(kind)
	}
	return models.Resolve(arg, kind)
}

// resolveModels resolves every argument with resolveModel.
func resolveModels(args []string, kind string) ([]string, error) {
	out, _, err := resolveModelSources(args, kind)
	return out, err
}

// resolveModelSources is resolveModels that also says where each model
// named from another tool's store (ollama:, hf:, lmstudio:, a bare Ollama
// NAME:TAG) was found: sources[i] is nil for a path or a cached model, and
// sources is nil when no model came from a store. A store's file is checked
// against its digest here, before anything runs.
func resolveModelSources(args []string, kind string) (paths []string, sources []*models.Source, err error) {
	for _, a := range args {
		if strings.TrimSpace(a) == "" {
			return nil, nil, usageError{"--model: an empty model name or path"}
		}
	}
	paths, srcs, err := models.ResolveSources(args, kind)
	if err != nil {
		return nil, nil, err
	}
	if slices.ContainsFunc(srcs, func(s *models.Source) bool { return s != nil }) {
		sources = srcs
	}
	return paths, sources, nil
}

// modelUsage is the usage text of the --model flags (no backquotes: the CLI
// library would take a backquoted word for the value's placeholder).
const modelUsage = "GGUF file, cached model name (see fragility models list), or a model of another tool's store read in place: ollama:NAME[:TAG] (or a bare NAME:TAG), hf:ORG/REPO[@REV][:FILE], lmstudio:ORG/REPO[/FILE] (see fragility models list --all); default: the default LLM"

// storesHelp is the paragraph of --help on models named from the stores of
// other tools.
const storesHelp = `Models you already have: --model ollama:NAME[:TAG] (or a bare NAME:TAG that is not a file;
OLLAMA_MODELS, else ~/.ollama/models and /usr/share/ollama/.ollama/models),
hf:ORG/REPO[@REV][:FILE] (the Hugging Face hub cache: HF_HUB_CACHE, else HF_HOME/hub, else
~/.cache/huggingface/hub; refs/main unless @REV is given) and lmstudio:ORG/REPO[/FILE]
(~/.lmstudio/models, ~/.cache/lm-studio/models) read the GGUF file where it lies, never copied.
An Ollama or Hugging Face file is checked against its sha256 digest before the run. Results
name the model as the store does (ollama:qwen3 is qwen3:latest); the manifest records the
store, the digest and the file. The GGUF's own chat template and the run's recorded sampling
are used, not the template, parameters (temperature, stop strings) or system prompt of an
Ollama manifest; their layers' digests are recorded in the manifest as unused_layers.`

// modelOrDefault returns the model the --model flag names (resolveModel), or
// the cached default LLM.
func modelOrDefault(c *cli.Context) (string, error) {
	return resolveModel(c.String("model"), "llm")
}

// loadParams builds llm.Params from the shared flags and loads GPU backends
// first. GPU layers default to all only when a GPU backend was found; when
// none was and --gpu-layers asked for one, the first model loaded says so
// (llm.AfterLoad).
func loadParams(c *cli.Context) llm.Params {
	dir := llm.LoadBackends(c.String(flagBackend.Name))
	gpu := c.Int(flagGPULayers.Name)
	if len(llm.GPUs()) == 0 {
		if gpu != 0 {
			note := fmt.Sprintf("no GPU backend in %s (see `make cuda`)", dir)
			if why := llm.GPUProblem(dir); why != "" {
				note = why
			}
			// Said once a model has loaded, so that bad input (a damaged
			// file, a wrong path) gets its one line alone.
			var once sync.Once
			llm.AfterLoad = func(*llm.Model) {
				once.Do(func() { fmt.Fprintf(os.Stderr, "fragility: %s; running on CPU\n", note) })
			}
		}
		gpu = 0
	}
	return llm.Params{
		GPULayers:    gpu,
		Threads:      c.Int(flagThreads.Name),
		ThreadsBatch: c.Int(flagThreadsB.Name),
		NCtx:         c.Int(flagNCtx.Name),
		NBatch:       c.Int(flagNBatch.Name),
		Seed:         c.Uint64(flagSeed.Name),
	}
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// quotePiece renders a token piece for a table: Go-quoted, so that
// whitespace and partial UTF-8 stay visible.
func quotePiece(s string) string {
	q := fmt.Sprintf("%q", s)
	if len(q) > 24 {
		q = q[:21] + "...\""
	}
	return strings.ReplaceAll(q, "\t", " ")
}
