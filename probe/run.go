package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/templates"
)

// File names inside a run directory.
const (
	FileManifest  = "manifest.json"
	FileResults   = "results.csv"
	FileTraces    = "traces.jsonl"
	FileSummary   = "summary.json"
	FileNarrative = "narrative.md"
	FileSet       = "set.jsonl"
)

// DDC is the Dewey Decimal reading of one prompt by the embedder.
type DDC struct {
	Top      string  `json:"top"`       // class code of the best class, e.g. "500"
	TopName  string  `json:"top_name"`  // its class name, e.g. "Science"
	RunnerUp string  `json:"runner_up"` // class code of the second class
	Margin   float64 `json:"margin"`    // cosine(top) − cosine(runner-up)
}

// Classifier reads texts into DDC classes, one result per text in order.
// The embed package provides one; nil disables the DDC columns.
type Classifier func(texts []string) ([]DDC, error)

// Config is everything that defines a run. It is stored in the manifest, and
// `fragility run --resume DIR` continues from the stored Config.
type Config struct {
	Models    []string `json:"models"`    // GGUF paths, never copied or modified
	Templates string   `json:"templates"` // "builtin", a directory, a file, or a GSM8K .jsonl
	// Items is a file of the user's own document-question items (package
	// docqa); when set, Templates is not read and Prompt is PromptDocQA.
	Items     string              `json:"items,omitempty"`
	Variants  []templates.Variant `json:"variants"`
	Instances int                 `json:"instances"`
	Seed      int64               `json:"seed"`
	MaxTokens int                 `json:"max_tokens"`
	Shots     int                 `json:"shots"`            // few-shot exemplars, 0..MaxShotsFor(Prompt)
	Prompt    string              `json:"prompt,omitempty"` // prompt preset: "fragility" ("" in older manifests) or "gsm-symbolic"
	Level     string              `json:"level,omitempty"`  // GSM-Symbolic difficulty level of the templates read; "" infers it from folder names
	// Reference is what noop, noop-seeming and paraphrase are compared with
	// (templates.Options.Reference): templates.ReferenceDrawn, the symbolic
	// instance of the same index, or templates.ReferenceOriginal ("" in
	// older manifests), the base instance at the template's own values.
	Reference string `json:"reference,omitempty"`
	// Split keeps the templates of one split (templates.SplitDev or
	// SplitTest; "" all of them).
	Split string `json:"split,omitempty"`
	// Protocol is the frozen protocol file the run follows (run
	// --protocol) and ProtocolSHA256 its hash; "" for none.
	Protocol       string     `json:"protocol,omitempty"`
	ProtocolSHA256 string     `json:"protocol_sha256,omitempty"`
	Temperature    float64    `json:"temperature"`   // 0 = greedy
	ChatTemplate   string     `json:"chat_template"` // "" = the model's own (or the recorded fallback)
	Params         llm.Params `json:"params"`        // NSeq = sequences decoded together in one batch
	BootstrapB     int        `json:"bootstrap_resamples"`
	// Overrides is the label-overrides file (run --overrides; see Override)
	// and OverridesSHA256 its sha256, set by Validate: a report refuses the
	// file once it has changed.
	Overrides       string `json:"overrides,omitempty"`
	OverridesSHA256 string `json:"overrides_sha256,omitempty"`
	// Shard, when set, runs only that part of the plan (see ShardBatches);
	// nil runs the whole plan. It is not part of the plan (PlanSHA256).
	Shard *Shard `json:"shard,omitempty"`
	// Primary is the pre-specified primary variant (`run --primary`): the
	// model's verdict is this variant's, tested alone, instead of the most
	// severe over the variants with Holm's adjustment. "" for none.
	Primary string `json:"primary_variant,omitempty"`
	// Conditions are the run's conditions (ConditionNone,
	// ConditionCalculator), each run on every item; nil means none alone.
	// CalcCalls is the calculator's call limit per item (DefaultCalcCalls
	// when 0 and the calculator runs).
	Conditions []string `json:"conditions,omitempty"`
	CalcCalls  int      `json:"calc_calls,omitempty"`
	// Decode is how prompts are split into llama_decode calls
	// (DecodeKeepPrefix, set by Validate when empty; DecodePerBatch): it
	// can change logits, so it is part of the plan. Manifests written before
	// it was recorded have none, which means DecodePerBatch.
	Decode string `json:"decode,omitempty"`
	OutDir string `json:"-"`

	// ModelSources has, for each of Models named from another tool's store
	// (Ollama, Hugging Face, LM Studio), where it was found; nil for a path.
	ModelSources []*models.Source `json:"model_sources,omitempty"`
}

// Decode procedures (Config.Decode).
const (
	// DecodePerBatch: each batch starts from a cleared KV state and decodes
	// the prefix its prompts share once, then each prompt's rest.
	DecodePerBatch = "per-batch/1"
	// DecodeKeepPrefix: the prefix every prompt of a model and condition
	// shares (the instruction and worked examples; see KeptPrefix) is
	// decoded once per model and its KV cells kept between batches
	// (llm.GenerateOptions.KeepPrefix); each batch decodes what follows it.
	// A batch whose prompts do not all start with it is decoded as in
	// DecodePerBatch.
	DecodeKeepPrefix = "keep-prefix/1"
)

// Embedder describes the embedder in the manifest.
type Embedder struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Level  string `json:"level"`
}

// Event is a progress report, sent after every finished batch of trials and,
// while a batch runs, every 200 ms or so from its first token (Done unchanged).
type Event struct {
	Model       string  // path of the model being run
	Done, Total int     // trials finished (resumed ones included) and planned, all models
	Tokens      int     // tokens generated in this process so far
	Seconds     float64 // generation wall time in this process so far
}

// Options are the parts of a run that are not part of its definition.
type Options struct {
	Force      bool              // overwrite an existing run directory
	Resume     bool              // continue the run in OutDir from its manifest
	Classifier Classifier        // nil: no DDC columns
	Embedder   *Embedder         // recorded in the manifest when Classifier is set
	Progress   func(Event)       // may be nil
	Log        io.Writer         // one-line notices; may be nil
	ToolInfo   map[string]string // version, build flags... recorded in the manifest
	// ShardSource says where Config.Shard came from ("--shard 2/8", a
	// scheduler's environment variable), for the manifest; may be "".
	ShardSource string
}

// plannedItem is one item of the plan: an instance for one model.
type plannedItem struct {
	model int
	inst  *templates.Instance
	id    string
	cond  string // condition; "" is ConditionNone
}

// CheckNBatch refuses (an OptionError) a logical batch of nbatch tokens
// (--n-batch; 0 = llama.cpp's default) smaller than the batch items decoded
// together (--batch): each generation step decodes one token of every item
// of a batch in one llama_batch, which llama_decode asserts holds at most
// n_batch tokens (see llm.Params.Check).
func CheckNBatch(nbatch, batch int) error {
	if nb := (llm.Params{NBatch: nbatch}).Defaults().NBatch; nb < batch {
		return optionErrorf("--n-batch must be at least --batch (%d): each generation step decodes one token of every item of a batch together, got %d", batch, nb)
	}
	return nil
}

// itemID is the unique ID of an instance run on the model with index mi.
func itemID(mi int, inst *templates.Instance) string {
	return fmt.Sprintf("m%d/%s", mi, inst.ID)
}

// Order returns the run order of n items: a permutation drawn from a PCG
// generator seeded with (seed, "order") (math/rand/v2 Perm). Every model runs
// its items in this same order.
func Order(n int, seed int64) []int {
	return rand.New(rand.NewPCG(uint64(seed), 0x6f72646572)).Perm(n)
}

// MaxBatch is the largest number of sequences decoded together.
const MaxBatch = 64

// MinContext is the smallest context, in tokens, a run accepts.
const MinContext = 64

// DrawnDesign reports whether the run pairs some variant with a drawn
// reference (Reference ReferenceDrawn and a variant of
// templates.DrawnReferenceVariants): its variance components are then the
// drawn design's (summary.PlanningComponents).
func (c Config) DrawnDesign() bool {
	if c.Items != "" || c.Reference != templates.ReferenceDrawn {
		return false
	}
	return slices.ContainsFunc(c.Variants, func(v templates.Variant) bool { return slices.Contains(templates.DrawnReferenceVariants, v) })
}

// Validate checks a Config before anything is loaded. An option out of
// range is an OptionError (wrong usage); a bad model file is an error naming
// the file.
func (c *Config) Validate() error {
	if len(c.Models) == 0 {
		return errors.New("no model given (--model)")
	}
	if err := c.ValidateOptions(); err != nil {
		return err
	}
	for _, m := range c.Models {
		if err := llm.CheckGGUFContext(m, c.Params.Defaults().NCtx); err != nil {
			return err
		}
	}
	return nil
}

// ValidateOptions is Validate without the model files: it checks only the
// options (each error an OptionError), so that a command can refuse wrong
// usage before it loads backends or reads a model.
func (c *Config) ValidateOptions() error {
	if c.ChatTemplate != "" && !strings.Contains(c.ChatTemplate, "{") && !slices.Contains(llm.BuiltinChatTemplates(), c.ChatTemplate) {
		return optionErrorf("--chat-template %q is not a llama.cpp built-in template (known: %s)", c.ChatTemplate, strings.Join(llm.BuiltinChatTemplates(), ", "))
	}
	if c.Overrides != "" {
		if abs, err := filepath.Abs(c.Overrides); err == nil {
			c.Overrides = abs
		}
		_, sum, err := ReadOverrides(c.Overrides)
		if err != nil {
			return err
		}
		c.OverridesSHA256 = sum
	}
	if c.Instances < 1 {
		return optionErrorf("--instances must be at least 1, got %d", c.Instances)
	}
	if c.MaxTokens < 1 {
		return optionErrorf("--max-tokens must be at least 1, got %d", c.MaxTokens)
	}
	preset, err := ParsePrompt(c.Prompt)
	if err != nil {
		return OptionError{"--prompt: " + err.Error()}
	}
	if c.Shots < 0 || c.Shots > MaxShotsFor(preset) {
		return optionErrorf("--shots must be between 0 and %d with --prompt %s, got %d", MaxShotsFor(preset), preset, c.Shots)
	}
	if (c.Items != "") != (preset == PromptDocQA) {
		return optionErrorf("--prompt %s goes with --items FILE (document questions), and only with it", PromptDocQA)
	}
	if _, err := templates.ParseLevel(c.Level); err != nil {
		return OptionError{"--level: " + err.Error()}
	}
	if c.Temperature < 0 || math.IsNaN(c.Temperature) || math.IsInf(c.Temperature, 0) {
		return optionErrorf("--temperature must be a finite number ≥ 0, got %v", c.Temperature)
	}
	if c.Params.NSeq < 1 {
		c.Params.NSeq = 1
	}
	switch c.Decode {
	case "":
		c.Decode = DecodeKeepPrefix
	case DecodeKeepPrefix, DecodePerBatch:
	default:
		return optionErrorf("unknown decode procedure %q (known: %s, %s)", c.Decode, DecodeKeepPrefix, DecodePerBatch)
	}
	if c.Params.NUBatch <= 0 {
		// Recorded as llama.cpp will use it, not as 0.
		c.Params.NUBatch = c.Params.Defaults().NUBatch
	}
	if c.Params.NSeq > MaxBatch {
		return optionErrorf("--batch must be between 1 and %d, got %d", MaxBatch, c.Params.NSeq)
	}
	if c.Params.NCtx != 0 && c.Params.NCtx < MinContext {
		return optionErrorf("--n-ctx must be at least %d tokens (a prompt with its instruction needs about 100), got %d", MinContext, c.Params.NCtx)
	}
	if c.Params.Threads < 0 || c.Params.ThreadsBatch < 0 || c.Params.NBatch < 0 {
		return optionErrorf("--threads, --threads-batch and --n-batch must be positive (0: default), got %d, %d and %d", c.Params.Threads, c.Params.ThreadsBatch, c.Params.NBatch)
	}
	if c.Params.Threads > llm.MaxThreads || c.Params.ThreadsBatch > llm.MaxThreads {
		return optionErrorf("--threads and --threads-batch must be at most %d (ggml's limit), got %d and %d", llm.MaxThreads, c.Params.Threads, c.Params.ThreadsBatch)
	}
	if err := CheckNBatch(c.Params.NBatch, c.Params.NSeq); err != nil {
		return err
	}
	seen := map[string]string{}
	for _, m := range c.Models {
		key := m
		if abs, err := filepath.Abs(m); err == nil {
			key = abs
		}
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%s: the same model file is given twice (also as %s)", m, prev)
		}
		seen[key] = m
	}
	if c.BootstrapB < 0 || c.BootstrapB > summary.MaxBootstrapResamples {
		return optionErrorf("--bootstrap must be between 1 and %d resamples, got %d", summary.MaxBootstrapResamples, c.BootstrapB)
	}
	if c.BootstrapB == 0 {
		c.BootstrapB = summary.DefaultBootstrapResamples
	}
	if c.Shard != nil {
		if err := c.Shard.Valid(); err != nil {
			return OptionError{"--shard " + err.Error()}
		}
	}
	if err := c.validateConditions(); err != nil {
		return err
	}
	switch {
	case c.Items != "":
		c.Reference = "" // document items have no drawn instances
	case c.Reference != "" && c.Reference != templates.ReferenceOriginal && c.Reference != templates.ReferenceDrawn:
		return optionErrorf("--reference %q: want drawn or original", c.Reference)
	}
	if c.Primary != "" {
		if c.Primary == summary.BaseVariant {
			return OptionError{"--primary names the variant whose drop against base decides the verdict: it cannot be base"}
		}
		expanded := c.Items != "" && strings.HasPrefix(c.Primary, docqa.Paraphrase+"-") && slices.Contains(c.Variants, docqa.Paraphrase)
		if !slices.Contains(c.Variants, templates.Variant(c.Primary)) && !expanded {
			return optionErrorf("--primary %s is not one of the run's variants (--variants)", c.Primary)
		}
	}
	return nil
}

// Run plans, validates and runs a probe, streaming every finished trial to
// OutDir (results.csv and traces.jsonl, fsynced after every batch), then writes
// summary.json and narrative.md and returns the summary. The item set is
// generated and validated before any model loads; so is the output directory.
// On a cancelled ctx it returns an error wrapping llm.ErrAborted and leaves a
// valid, resumable run directory. Any other error after the run directory's
// manifest exists (a model llama.cpp refuses, a failed write) leaves the
// manifest with status "failed" and the error as fail_reason, never
// "running".
func Run(ctx context.Context, cfg Config, opt Options) (*summary.Summary, error) {
	var man *Manifest
	sum, err := run(ctx, cfg, opt, &man)
	if err != nil && man != nil && man.Status == "running" {
		man.Status = "failed"
		if errors.Is(err, llm.ErrAborted) || ctx.Err() != nil {
			man.Status = "interrupted"
		}
		man.FailReason = err.Error()
		man.Finished = time.Now().UTC().Format(time.RFC3339)
		if werr := writeJSONAtomic(filepath.Join(man.Config.OutDir, FileManifest), man); werr != nil {
			return nil, fmt.Errorf("%w (and the manifest could not record it: %v)", err, werr)
		}
	}
	return sum, err
}

func run(ctx context.Context, cfg Config, opt Options, manOut **Manifest) (*summary.Summary, error) {
	out := cfg.OutDir
	if opt.Resume {
		stored, err := ReadManifest(out)
		if err != nil {
			return nil, err
		}
		cfg = stored.Config
		cfg.OutDir = out
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	set, err := generateSet(cfg)
	if err != nil {
		return nil, err
	}
	if len(set.Instances) == 0 && cfg.Items != "" {
		return nil, fmt.Errorf("items %s: no instance could be generated", cfg.Items)
	}
	if len(set.Instances) == 0 {
		if len(set.Skipped) > 0 {
			return nil, fmt.Errorf("templates %s: no instance could be generated (%d templates skipped; first: %s)", cfg.Templates, len(set.Skipped), set.Skipped[0].Reason)
		}
		return nil, fmt.Errorf("templates %s: no instance could be generated", cfg.Templates)
	}
	if cfg.Overrides != "" {
		if err := checkOverrides(cfg.Overrides, set); err != nil {
			return nil, err
		}
	}
	if err := prepareDir(out, opt.Force, opt.Resume); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	for _, sk := range set.Skipped {
		logf("%s", sk)
	}

	man := &Manifest{
		Tool:            opt.ToolInfo,
		LlamaCommit:     llm.LlamaCommit,
		LlamaModule:     llm.OllamaModule,
		BuildFlags:      llm.BuildFlags,
		SystemInfo:      llm.SystemInfo(),
		GOOS:            runtime.GOOS,
		GOARCH:          runtime.GOARCH,
		Config:          cfg,
		Prompt:          promptInfo(cfg),
		Skipped:         set.Skipped,
		Sampler:         samplerName(cfg),
		ExtractionRules: answer.ExtractionRulesVersion,
		ErrorRules:      anatomy.Version,
		Calculator:      calcInfo(cfg),
		Order:           "math/rand/v2 PCG(seed, 0x6f72646572).Perm over the set's instances; the same order for every model",
		Batching:        fmt.Sprintf("batches of %d consecutive items of the order, per model, decoded together in one llama_batch (an item whose prompt does not fit the context is recorded as skipped and leaves its batch one shorter); a prefix common to a batch's prompts (at least %d tokens) is decoded once into sequence 0 and its KV cells copied to the others (llama_memory_seq_cp)", cfg.Params.NSeq, llm.MinSharedPrefix),
		KVType:          "f16 (llama.cpp default)",
		Status:          "running",
		Started:         time.Now().UTC().Format(time.RFC3339),
		SetFile:         FileSet,
		Excluded:        len(set.Excluded),
		Flagged:         len(set.Flagged),
		Embedder:        opt.Embedder,
	}
	if opt.Resume {
		if old, err := ReadManifest(out); err == nil {
			man.Started = old.Started
			man.Resumes = old.Resumes + 1
			// Time spent by earlier processes of this run (recorded when
			// they were interrupted): the totals cover the whole run.
			man.GenerationSeconds, man.WallSeconds = old.GenerationSeconds, old.WallSeconds
		}
	}
	for i, p := range cfg.Models {
		mm, err := fileIdentity(p, cfg.modelSource(i))
		if err != nil {
			return nil, err
		}
		man.Models = append(man.Models, mm)
	}
	if opt.Resume {
		old, _ := ReadManifest(out)
		for i := range man.Models {
			if old != nil && i < len(old.Models) && old.Models[i].SHA256 != man.Models[i].SHA256 {
				return nil, fmt.Errorf("%s: sha256 changed since the run started (%s, now %s): cannot resume", man.Models[i].Path, old.Models[i].SHA256, man.Models[i].SHA256)
			}
			// What an earlier process learnt by loading a model this one
			// may not load again (its items are done).
			if old != nil && i < len(old.Models) {
				man.Models[i].Metadata, man.Models[i].Backend = old.Models[i].Metadata, old.Models[i].Backend
			}
		}
		if old != nil {
			man.Devices, man.Prompt.Rendering = old.Devices, old.Prompt.Rendering
			if old.Shard != nil && opt.ShardSource == "" {
				opt.ShardSource = old.Shard.Source
			}
		}
	}
	setJSONL, err := setBytes(set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(out, FileSet), err)
	}
	// The plan: every model's items in batches of NSeq consecutive items of
	// the order; a shard runs a contiguous range of these batches.
	batches := planBatches(cfg, set)
	modelSHA := make([]string, len(man.Models))
	for i, mm := range man.Models {
		modelSHA[i] = mm.SHA256
	}
	man.PlanSHA256, _ = planSHA(cfg, batches, setJSONL, modelSHA, opt.Embedder)
	if opt.Resume {
		if old, err := ReadManifest(out); err == nil && old.PlanSHA256 != "" && old.PlanSHA256 != man.PlanSHA256 {
			return nil, fmt.Errorf("%s: the plan changed since the run started (plan sha256 %s, now %s: the templates, the embedder or this binary's prompt differ): cannot resume", out, old.PlanSHA256, man.PlanSHA256)
		}
	}
	planItems := len(set.Instances) * len(cfg.Models)
	if cfg.Shard != nil {
		if cfg.Shard.Count > len(batches) {
			return nil, fmt.Errorf("--shard %s: the plan has only %d batch(es) of --batch %d (%d items), so at most %d shards", cfg.Shard, len(batches), cfg.Params.NSeq, planItems, len(batches))
		}
		lo, hi := ShardBatches(*cfg.Shard, len(batches))
		host, _ := os.Hostname()
		man.Shard = &ShardInfo{Shard: *cfg.Shard, Source: opt.ShardSource, Host: host, FirstBatch: lo,
			Batches: hi - lo, PlanBatches: len(batches), PlanItems: planItems}
		batches = batches[lo:hi]
		for _, b := range batches {
			man.Shard.Items += len(b.items)
		}
		logf("shard %s: batches %d..%d of %d (%d of %d items), plan sha256 %s", cfg.Shard, lo+1, hi, man.Shard.PlanBatches, man.Shard.Items, planItems, man.PlanSHA256)
	}
	if err := WriteFileAtomic(filepath.Join(out, FileSet), setJSONL); err != nil {
		return nil, err
	}
	if err := writeJSONAtomic(filepath.Join(out, FileManifest), man); err != nil {
		return nil, err
	}
	*manOut = man

	// DDC reading of every distinct question this run decodes, once, in a
	// goroutine that runs beside generation (in run order, so the first
	// items are ready first).
	var qs []string
	seen := map[string]bool{}
	total := 0
	for _, b := range batches {
		total += len(b.items)
		for _, it := range b.items {
			if q := it.inst.Question; !seen[q] {
				seen[q] = true
				qs = append(qs, q)
			}
		}
	}
	ddc := newDDCStore(opt.Classifier, qs)
	defer func() {
		man.EmbedSeconds, man.EmbedWaitSeconds = ddc.seconds()
	}()

	done, err := openStreams(out, opt.Resume)
	if err != nil {
		return nil, err
	}
	defer done.close()

	finished := len(done.trials)
	var genTokens int
	var genSec float64
	runStart := time.Now()
	for mi, path := range cfg.Models {
		var mine []planBatch
		todo := 0
		for _, b := range batches {
			if b.model != mi {
				continue
			}
			mine = append(mine, b)
			for _, it := range b.items {
				if !done.has(it.id) {
					todo++
				}
			}
		}
		if todo == 0 {
			continue
		}
		m, err := llm.Load(path, cfg.Params)
		if err != nil {
			return nil, err
		}
		md := m.Metadata()
		man.Models[mi].Metadata = &md
		man.Models[mi].Backend = llm.BackendSummary(cfg.Params.GPULayers)
		man.Devices = llm.Devices()
		if err := writeJSONAtomic(filepath.Join(out, FileManifest), man); err != nil {
			m.Close()
			return nil, err
		}
		err = runModel(ctx, m, mi, mine, cfg, man, ddc, done, func(n, tok int, sec float64) {
			finished += n
			genTokens += tok
			genSec += sec
			if opt.Progress != nil {
				opt.Progress(Event{Model: path, Done: finished, Total: total, Tokens: genTokens, Seconds: time.Since(runStart).Seconds()})
			}
		})
		m.Close()
		if err != nil {
			man.Status = "failed"
			if errors.Is(err, llm.ErrAborted) || ctx.Err() != nil {
				man.Status = "interrupted"
			} else {
				man.FailReason = err.Error()
			}
			man.Finished = time.Now().UTC().Format(time.RFC3339)
			man.GenerationSeconds += genSec
			man.WallSeconds += time.Since(runStart).Seconds()
			if werr := writeJSONAtomic(filepath.Join(out, FileManifest), man); werr != nil {
				return nil, fmt.Errorf("%w (and the manifest could not record it: %v)", err, werr)
			}
			return nil, err
		}
	}
	man.Status = "complete"
	man.Finished = time.Now().UTC().Format(time.RFC3339)
	man.EmbedSeconds, man.EmbedWaitSeconds = ddc.seconds()
	if opt.Classifier != nil {
		logf("ddc: %d distinct prompts classified in %.1fs beside generation; the run waited %.1fs for them", len(qs), man.EmbedSeconds, man.EmbedWaitSeconds)
	}
	man.GenerationSeconds += genSec
	man.WallSeconds += time.Since(runStart).Seconds()
	if err := writeJSONAtomic(filepath.Join(out, FileManifest), man); err != nil {
		return nil, err
	}
	sum, err := WriteSummary(out)
	if err != nil && cfg.Shard != nil {
		// A shard's own summary is a convenience (the run's statistics come
		// from the merged shards): a part of the plan that the statistics
		// cannot summarise on its own does not fail the shard.
		logf("shard %s: no summary of this shard alone (%v); fragility merge computes the run's", cfg.Shard, err)
		return &summary.Summary{Trials: len(done.trials), Skipped: countSkipped(done.trials)}, nil
	}
	return sum, err
}

func countSkipped(ts []results.Trial) int {
	n := 0
	for i := range ts {
		if ts[i].Skipped() {
			n++
		}
	}
	return n
}

func samplerName(cfg Config) string {
	if cfg.Temperature == 0 {
		return "greedy (argmax over the full vocabulary, lowest id among ties)"
	}
	return fmt.Sprintf("temperature %g over the full vocabulary, math/rand/v2 PCG(seed, sequence slot) with seed %d", cfg.Temperature, cfg.Seed)
}

// prepareDir refuses to overwrite an existing run unless force, and checks
// that the directory is writable.
func prepareDir(dir string, force, resume bool) error {
	if dir == "" {
		return errors.New("no output directory given (--out)")
	}
	if resume {
		return checkWritable(dir)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if !force {
			return fmt.Errorf("output directory %s already exists and is not empty: use --force to overwrite it or --resume to finish it", dir)
		}
		for _, name := range RunFiles {
			os.Remove(filepath.Join(dir, name))
		}
	}
	return checkWritable(dir)
}

// progressTick is the shortest interval between two progress reports of a
// batch in flight.
var progressTick = 200 * time.Millisecond

// runModel runs every not-yet-done item of one model's batches. The items
// of one batch are decoded together, less those already done (a resumed run
// decodes a batch cut short by an interruption whole again and writes it in
// order, see streams) and those whose prompt does not fit the context, which
// are recorded as skipped (written before the batch's decoded items). On an
// interruption the batch's finished items are written before it returns.
// progress gets the items finished, the tokens generated since its last call
// and the generation seconds of each finished batch; it is also called while
// a batch runs, with no item finished.
func runModel(ctx context.Context, m *llm.Model, mi int, batches []planBatch, cfg Config, man *Manifest, ddc *ddcStore, st *streams, progress func(n, tokens int, sec float64)) error {
	md := m.Metadata()
	type prepared struct {
		it       plannedItem
		rendered llm.Rendered
		tokens   []llm.Token
	}
	var queue []prepared
	var keeps keptPrefixes
	flush := func() (err error) {
		if len(queue) == 0 {
			return nil
		}
		prompts := make([][]llm.Token, len(queue))
		for i, q := range queue {
			prompts[i] = q.tokens
		}
		// Progress from the first token: the tokens of the batch in flight,
		// at most every progressTick, without waiting for the batch to end.
		reported := 0
		lastTick := time.Now()
		onStep := func(tokens int) {
			if now := time.Now(); now.Sub(lastTick) >= progressTick || reported == 0 {
				progress(0, tokens-reported, 0)
				reported, lastTick = tokens, now
			}
		}
		opt := llm.GenerateOptions{MaxTokens: cfg.MaxTokens, Stop: queue[0].rendered.Stop, Temperature: cfg.Temperature, Seed: uint64(cfg.Seed), OnStep: onStep}
		if opt.KeepPrefix, err = keeps.get(m, cfg, queue[0].it.cond); err != nil {
			return fmt.Errorf("%s: %w", md.Path, err)
		}
		calc := newCalculator(cfg, queue[0].it.cond, len(queue))
		calc.setOptions(&opt)
		t0 := time.Now()
		gens, genErr := m.GenerateBatch(ctx, prompts, opt)
		if genErr != nil && gens == nil {
			return fmt.Errorf("%s: %w", md.Path, genErr)
		}
		wall := time.Since(t0).Seconds()
		var trials []results.Trial
		var traces []Trace
		ntok, held, n := 0, false, 0
		for i, q := range queue {
			g := gens[i]
			ntok += g.Generated()
			if h, ok := st.heldOf(q.it.id); ok {
				// Finished before an earlier interruption: its recorded
				// result stands (this decode of the whole batch repeats it).
				held = true
				if genErr == nil {
					trials, traces = append(trials, h.trial), append(traces, h.trace)
				}
				continue
			}
			if genErr != nil && !g.Done() {
				continue // cut short by the interruption: run again on resume
			}
			tr, err := newTrial(q.it, md, cfg, ddc)
			if err != nil {
				return err
			}
			tr.PromptTokens = len(q.tokens)
			calls := calc.finish(i, g)
			fillFromGeneration(&tr, g, wall/float64(len(queue)), q.it.inst.Accepted, q.it.cond, calls)
			trials = append(trials, tr)
			trace := newTrace(tr.ItemID, q.rendered, q.tokens, g, len(queue))
			trace.CalcCalls = calls
			traces = append(traces, trace)
			n++
		}
		write := st.append
		if held && genErr == nil {
			write = st.completeHeld
			n = len(queue)
		}
		if len(trials) > 0 {
			if err := write(trials, traces); err != nil {
				return err
			}
		}
		progress(n, ntok-reported, wall)
		queue = queue[:0]
		if genErr != nil {
			return fmt.Errorf("%s: %w", md.Path, genErr)
		}
		return nil
	}
	for _, b := range batches {
		for _, it := range b.items {
			if st.has(it.id) {
				continue
			}
			r, err := renderCondition(m, cfg, itemText(it.inst), it.cond)
			if err != nil {
				return fmt.Errorf("%s: %w", md.Path, err)
			}
			toks, err := m.Tokenize(r.Text, true, true)
			if err != nil {
				return fmt.Errorf("%s: item %s: %w", md.Path, it.id, err)
			}
			man.noteRendering(mi, r)
			if nctx := cfg.Params.Defaults().NCtx; len(toks)+1 >= nctx {
				tr, err := newTrial(it, md, cfg, ddc)
				if err != nil {
					return err
				}
				tr.PromptTokens = len(toks)
				tr.StopReason = "skipped"
				tr.SkipReason = (&llm.PromptTooLongError{Tokens: len(toks), NCtx: nctx}).Error()
				if err := st.append([]results.Trial{tr}, []Trace{{ItemID: tr.ItemID, Prompt: r.Text, PromptTokenIDs: toks, SkipReason: tr.SkipReason}}); err != nil {
					return err
				}
				progress(1, 0, 0)
				continue
			}
			queue = append(queue, prepared{it: it, rendered: r, tokens: toks})
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// newTrial fills the identity columns of a trial.
func newTrial(it plannedItem, md llm.Metadata, cfg Config, ddc *ddcStore) (results.Trial, error) {
	in := it.inst
	id := IdentifyModel(cfg.modelName(it.model, md.Path), md.Name, md.Quantization)
	t := results.Trial{
		ItemID:         it.id,
		ModelPath:      md.Path,
		ModelName:      id.Name,
		ModelFamily:    id.Family,
		Quantization:   md.Quantization,
		TemplateID:     in.TemplateID,
		Relation:       in.Relation,
		Steps:          in.Steps,
		Level:          in.Level,
		Variant:        string(in.Variant),
		Reference:      string(in.Reference),
		IDOrig:         in.IDOrig,
		AltAnswer:      in.AltAnswer,
		OriginalAnswer: in.OriginalAnswer,
		Instance:       in.Index,
		Seed:           in.Seed,
		Question:       in.Question,
		Expected:       in.Answer,
		Rule:           answer.RuleNone,
		Passages:       docqa.PassageList(in),
		Condition:      results.ConditionName(it.cond),
	}
	d, ok, err := ddc.get(in.Question)
	if err != nil {
		return t, err
	}
	if ok {
		t.DDCTop, t.DDCTopName, t.DDCRunnerUp, t.DDCMargin = d.Top, d.TopName, d.RunnerUp, d.Margin
	}
	return t, nil
}

// fillFromGeneration scores a generation and fills the outcome columns. A
// document item (accepted answers given) is scored by docqa.ScoreResponse,
// any other against t.Expected as a number.
//
// cond is the item's condition and calls its calculator calls; injected
// tokens (calculator results) are in no entropy statistic.
func fillFromGeneration(t *results.Trial, g *llm.Generation, seconds float64, accepted []string, cond string, calls []CalcCall) {
	t.Response = g.Text
	t.Tokens = g.Generated()
	t.StopReason = g.StopReason
	t.Seconds = seconds
	ex := answer.Extract(g.Text)
	t.Correct = ex.Rule != answer.RuleNone && answer.AnswerMatches(ex.Value, t.Expected)
	t.ExpectedAnywhere = answer.ExpectedAnywhere(g.Text, t.Expected)
	t.ScoreRule = docqa.ScoreNumber
	if t.F1 = 0; t.Correct {
		t.F1 = 1
	}
	if accepted != nil {
		sc := docqa.ScoreResponse(g.Text, accepted)
		ex = answer.Extraction{Value: sc.Value, Rule: sc.Rule, Start: sc.Start, End: sc.End}
		t.Correct, t.ExpectedAnywhere, t.ScoreRule, t.F1, t.NotStated = sc.Correct, sc.Anywhere, sc.ScoreRule, sc.F1, sc.NotStated
	}
	t.Rule = ex.Rule
	t.Extracted = ex.Value
	var all, ans []float64
	off := 0
	for _, tok := range g.Tokens {
		start, end := off, off+len(tok.Piece)
		off = end
		if tok.Injected {
			continue
		}
		all = append(all, tok.EntropyBits)
		if ex.Rule != answer.RuleNone && start < ex.End && end > ex.Start {
			ans = append(ans, tok.EntropyBits)
		}
	}
	if len(ans) == 0 {
		ans = all
	}
	t.EntropyMean, t.EntropyP95, t.BranchingMedian = entropyStats(all)
	t.AnswerEntropyMean, t.AnswerEntropyP95, t.AnswerBranching = entropyStats(ans)
	finishTrial(t, g, ex, cond, calls)
}

// entropyStats returns the mean and 95th percentile of per-token entropies
// (bits) and the median branching factor 2^H; zeros for no tokens. Quantiles
// use linear interpolation between order statistics (Hyndman & Fan 1996,
// definition 7).
func entropyStats(h []float64) (mean, p95, medianBranching float64) {
	if len(h) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), h...)
	sort.Float64s(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	return sum / float64(len(s)), quantile7(s, 0.95), math.Exp2(quantile7(s, 0.5))
}

// quantile7 is the q-quantile of sorted data by linear interpolation
// (Hyndman & Fan 1996, definition 7; R's default).
func quantile7(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Trace is one line of traces.jsonl: the exact rendered prompt, its token
// ids, and every generated token with its entropy (bits) and natural
// log-probability. Floats are written in shortest round-trip form, so
// `fragility verify` can compare them bit for bit.
type Trace struct {
	ItemID         string       `json:"item_id"`
	Prompt         string       `json:"prompt"`
	PromptTokenIDs []llm.Token  `json:"prompt_token_ids"`
	BatchSize      int          `json:"batch_size,omitempty"` // sequences decoded together with this item
	StopReason     string       `json:"stop_reason,omitempty"`
	SkipReason     string       `json:"skip_reason,omitempty"`
	Tokens         []TraceToken `json:"tokens"`
	CalcCalls      []CalcCall   `json:"calc_calls,omitempty"` // calculator calls, in order (condition calculator)
}

// TraceToken is one generated token in a Trace.
type TraceToken struct {
	ID          llm.Token `json:"id"`
	Piece       string    `json:"piece"`
	EntropyBits float64   `json:"entropy_bits"`
	LogProb     float64   `json:"logprob"`
	Injected    bool      `json:"injected,omitempty"` // fed by the calculator, not generated: no entropy
}

func newTrace(id string, r llm.Rendered, toks []llm.Token, g *llm.Generation, batch int) Trace {
	tr := Trace{ItemID: id, Prompt: r.Text, PromptTokenIDs: toks, BatchSize: batch, StopReason: g.StopReason}
	for _, t := range g.Tokens {
		tr.Tokens = append(tr.Tokens, TraceToken{ID: t.ID, Piece: t.Piece, EntropyBits: t.EntropyBits, LogProb: t.LogProb, Injected: t.Injected})
	}
	return tr
}

// generateSet loads the templates of cfg and generates its item set, as
// Run does. A folder may hold templates that are refused or cannot be drawn
// (a downloaded GSM-Symbolic folder): they are left out, each with a
// one-line reason, and listed in set.Skipped (then in the set file and the
// manifest).
func generateSet(cfg Config) (*templates.Set, error) {
	if cfg.Items != "" {
		items, err := docqa.Load(cfg.Items)
		if err != nil {
			return nil, err
		}
		return docqa.Generate(items, templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed})
	}
	ts, skipped, err := templates.LoadSkipping(cfg.Templates, templates.LoadOptions{Level: cfg.Level})
	if err != nil {
		return nil, err
	}
	st, statErr := os.Stat(cfg.Templates)
	folder := statErr == nil && st.IsDir()
	set, err := templates.Generate(ts, templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed, SkipFailing: folder, Reference: cfg.Reference, Split: cfg.Split})
	if err != nil {
		return nil, err
	}
	set.Skipped = append(skipped, set.Skipped...)
	return set, nil
}

// setBytes returns set.jsonl's content for set.
func setBytes(set *templates.Set) ([]byte, error) {
	var b bytes.Buffer
	if err := set.WriteJSONL(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadTraces reads traces.jsonl of a run directory.
func ReadTraces(dir string) ([]Trace, error) {
	path := filepath.Join(dir, FileTraces)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Trace
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t Trace
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, t)
	}
	return out, nil
}
