package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/templates"
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

// Decode procedures (rundir.Config.Decode).
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
	DecodeKeepPrefix = "keep-prefix/2"
	// DecodeKeepPrefixV1 is DecodeKeepPrefix before the placebo variant:
	// its kept prefix ran to the problem's text, through the last turn's
	// instruction (KeptPrefix); replayed as recorded.
	DecodeKeepPrefixV1 = "keep-prefix/1"
)

// Event is a progress report, sent after every finished batch of trials and,
// while a batch runs, every 200 ms or so from its first token (Done unchanged).
type Event struct {
	Model       string  // path of the model being run
	Done, Total int     // trials finished (resumed ones included) and planned, all models
	Tokens      int     // tokens generated in this process so far
	DoneTokens  int     // of Tokens, those of the trials finished (the rest are in flight)
	Seconds     float64 // generation wall time in this process so far
}

// Options are the parts of a run that are not part of its definition.
type Options struct {
	Force      bool              // overwrite an existing run directory
	Resume     bool              // continue the run in OutDir from its manifest
	Classifier Classifier        // nil: no DDC columns
	Embedder   *rundir.Embedder  // recorded in the manifest when Classifier is set
	Progress   func(Event)       // may be nil
	Log        io.Writer         // one-line notices; may be nil
	ToolInfo   map[string]string // version, build flags... recorded in the manifest
	// ShardSource says where Config.Shard came from ("--shard 2/8", a
	// scheduler's environment variable), for the manifest; may be "".
	ShardSource string
}

// PlannedItem is one item of the plan: an instance for one model under
// one condition.
type PlannedItem struct {
	Model int                 // index of the model in Config.Models
	Inst  *templates.Instance // the instance, in the run's set
	ID    string              // the item ID (results.ConditionItemID of itemID)
	Cond  string              // condition; "" is results.ConditionNone
}

// CheckNBatch refuses (an OptionError) a logical batch of nbatch tokens
// (--n-batch; 0 = llama.cpp's default) smaller than the batch items decoded
// together (--batch): each generation step decodes one token of every item
// of a batch in one llama_batch, which llama_decode asserts holds at most
// n_batch tokens (see llm.Params.Check).
func CheckNBatch(nbatch, batch int) error {
	if nb := (llm.Params{NBatch: nbatch}).Defaults().NBatch; nb < batch {
		return OptionErrorf("--n-batch must be at least --batch (%d): each generation step decodes one token of every item of a batch together, got %d", batch, nb)
	}
	return nil
}

// MaxBatch is the largest number of sequences decoded together.
const MaxBatch = 64

// MinContext is the smallest context, in tokens, a run accepts.
const MinContext = 64

// CheckBatch refuses, as an OptionError, a number of items decoded together
// (--batch) outside 1..MaxBatch.
func CheckBatch(n int) error {
	if n < 1 || n > MaxBatch {
		return OptionErrorf("--batch must be between 1 and %d, got %d", MaxBatch, n)
	}
	return nil
}

// CtxTrainWarning says that a context of nCtx tokens per sequence is above
// the model's training context nCtxTrain (both in tokens): llama.cpp runs
// it, but positions past nCtxTrain are ones the model never saw in
// training. model names the model (its file name).
func CtxTrainWarning(model string, nCtx, nCtxTrain int) string {
	return fmt.Sprintf("--n-ctx %d is above %s's training context of %d tokens: llama.cpp runs it, but a prompt and answer longer than %d tokens reach positions the model was not trained on", nCtx, model, nCtxTrain, nCtxTrain)
}

// CheckMaxTokens refuses, as an OptionError, an output budget per item
// (--max-tokens) below 1, or not below the context length nCtx (--n-ctx,
// tokens; 0: llm.Params' default), which the prompt and the answer share:
// such a budget can never be reached.
func CheckMaxTokens(n, nCtx int) error {
	if n < 1 {
		return OptionErrorf("--max-tokens must be at least 1, got %d", n)
	}
	if nCtx != 0 && nCtx < MinContext {
		return nil // CheckParams refuses the context itself
	}
	if ctx := (llm.Params{NCtx: nCtx}).Defaults().NCtx; n >= ctx {
		return OptionErrorf("--max-tokens %d is not below the context length --n-ctx %d, which the prompt and the answer share: lower --max-tokens or raise --n-ctx", n, ctx)
	}
	return nil
}

// CheckTemperature refuses, as an OptionError, a sampling temperature
// (--temperature; 0: greedy) that is negative, NaN or infinite.
func CheckTemperature(t float64) error {
	if t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
		return OptionErrorf("--temperature must be a finite number ≥ 0, got %v", t)
	}
	return nil
}

// CheckParams checks decoding parameters as read from the flags of a
// command that loads a model, each wrong value refused as an OptionError
// in one line naming its flag: the sequences decoded together (NSeq,
// --batch; 0 is 1), --gpu-layers (-1: all), --n-ctx (0: the default, else
// at least MinContext), --threads, --threads-batch and --n-batch (0: the
// default; CheckNBatch). It is the one check of these flags: run, plan and
// every other command that takes them refuse the same values with the same
// messages before any model is looked up or loaded.
func CheckParams(p llm.Params) error {
	if p.NSeq < 1 {
		p.NSeq = 1
	}
	if err := CheckBatch(p.NSeq); err != nil {
		return err
	}
	if p.GPULayers < -1 {
		return OptionErrorf("--gpu-layers must be -1 (all), 0 (CPU only) or a number of layers, got %d", p.GPULayers)
	}
	if p.NCtx != 0 && p.NCtx < MinContext {
		return OptionErrorf("--n-ctx must be at least %d tokens (a prompt with its instruction needs about 100), got %d", MinContext, p.NCtx)
	}
	if p.Threads < 0 || p.ThreadsBatch < 0 || p.NBatch < 0 {
		return OptionErrorf("--threads, --threads-batch and --n-batch must be positive (0: default), got %d, %d and %d", p.Threads, p.ThreadsBatch, p.NBatch)
	}
	if p.Threads > llm.MaxThreads || p.ThreadsBatch > llm.MaxThreads {
		return OptionErrorf("--threads and --threads-batch must be at most %d (ggml's limit), got %d and %d", llm.MaxThreads, p.Threads, p.ThreadsBatch)
	}
	return CheckNBatch(p.NBatch, p.NSeq)
}

// Validate checks a Config before anything is loaded. An option out of
// range is an OptionError (wrong usage); a bad model file is an error naming
// the file.
func Validate(c *rundir.Config) error {
	if len(c.Models) == 0 {
		return errors.New("no model given (--model)")
	}
	if err := ValidateOptions(c); err != nil {
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
func ValidateOptions(c *rundir.Config) error {
	for _, check := range []func(*rundir.Config) error{validateFiles, validatePrompt, validateParams, validateRun, validatePrimary} {
		if err := check(c); err != nil {
			return err
		}
	}
	return nil
}

// validateFiles checks --chat-template and reads the overrides file,
// recording its absolute path and sha256.
func validateFiles(c *rundir.Config) error {
	if c.ChatTemplate != "" && !strings.Contains(c.ChatTemplate, "{") && !slices.Contains(llm.BuiltinChatTemplates(), c.ChatTemplate) {
		return OptionErrorf("--chat-template %q is not a llama.cpp built-in template (known: %s)", c.ChatTemplate, strings.Join(llm.BuiltinChatTemplates(), ", "))
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
	return nil
}

// validatePrompt checks the options of what is asked: instances, the token
// limit, the prompt preset and its shots, items, level and temperature.
func validatePrompt(c *rundir.Config) error {
	if c.Instances < 1 {
		return OptionErrorf("--instances must be at least 1, got %d", c.Instances)
	}
	if err := CheckMaxTokens(c.MaxTokens, c.Params.NCtx); err != nil {
		return err
	}
	if c.Limit < 0 {
		return OptionErrorf("--limit must be at least 1 (0: every template), got %d", c.Limit)
	}
	if c.Items != "" && (len(c.TemplateIDs) > 0 || c.Limit > 0) {
		return OptionError{"--template-ids and --limit select templates; --items reads document questions: give one or the other"}
	}
	preset, err := ParsePrompt(c.Prompt)
	if err != nil {
		return OptionError{"--prompt: " + err.Error()}
	}
	if c.Shots < 0 || c.Shots > MaxShotsFor(preset) {
		return OptionErrorf("--shots must be between 0 and %d with --prompt %s, got %d", MaxShotsFor(preset), preset, c.Shots)
	}
	if (c.Items != "") != (preset == PromptDocQA) {
		return OptionErrorf("--prompt %s goes with --items FILE (document questions), and only with it", PromptDocQA)
	}
	if _, err := templates.ParseLevel(c.Level); err != nil {
		return OptionError{"--level: " + err.Error()}
	}
	return CheckTemperature(c.Temperature)
}

// validateParams checks the decode procedure and the decoding parameters
// (CheckParams), filling the defaults it records.
func validateParams(c *rundir.Config) error {
	if c.Params.NSeq < 1 {
		c.Params.NSeq = 1
	}
	switch c.Decode {
	case "":
		c.Decode = DecodeKeepPrefix
	case DecodeKeepPrefix, DecodeKeepPrefixV1, DecodePerBatch:
	default:
		return OptionErrorf("unknown decode procedure %q (known: %s, %s)", c.Decode, DecodeKeepPrefix, DecodePerBatch)
	}
	if c.Params.NUBatch <= 0 {
		// Recorded as llama.cpp will use it, not as 0.
		c.Params.NUBatch = c.Params.Defaults().NUBatch
	}
	return CheckParams(c.Params)
}

// validateRun refuses a model file given twice and checks the bootstrap
// resamples (filling the default), the shard and the conditions.
func validateRun(c *rundir.Config) error {
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
		return OptionErrorf("--bootstrap must be between 1 and %d resamples, got %d", summary.MaxBootstrapResamples, c.BootstrapB)
	}
	if c.BootstrapB == 0 {
		c.BootstrapB = summary.DefaultBootstrapResamples
	}
	if c.Shard != nil {
		if err := c.Shard.Valid(); err != nil {
			return OptionError{"--shard " + err.Error()}
		}
	}
	if err := validateConditions(c); err != nil {
		return err
	}
	switch {
	case c.Items != "":
		c.Reference = "" // document items have no drawn instances
	case c.Reference != "" && c.Reference != templates.ReferenceOriginal && c.Reference != templates.ReferenceDrawn:
		return OptionErrorf("--reference %q: want drawn or original", c.Reference)
	}
	return nil
}

// validatePrimary checks that --primary names one of the run's variants
// other than base.
func validatePrimary(c *rundir.Config) error {
	if c.Primary != "" {
		if c.Primary == summary.BaseVariant {
			return OptionError{"--primary names the variant whose drop against base decides the verdict: it cannot be base"}
		}
		expanded := c.Items != "" && strings.HasPrefix(c.Primary, docqa.Paraphrase+"-") && slices.Contains(c.Variants, docqa.Paraphrase)
		if !slices.Contains(c.Variants, templates.Variant(c.Primary)) && !expanded {
			return OptionErrorf("--primary %s is not one of the run's variants (--variants)", c.Primary)
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
func Run(ctx context.Context, cfg rundir.Config, opt Options) (*summary.Summary, error) {
	var man *rundir.Manifest
	var lock *rundir.DirLock
	defer func() { lock.Unlock() }()
	sum, err := run(ctx, cfg, opt, &man, &lock)
	if err != nil && man != nil && man.Status == "running" {
		man.Status = "failed"
		if errors.Is(err, llm.ErrAborted) || ctx.Err() != nil {
			man.Status = "interrupted"
		}
		man.FailReason = err.Error()
		man.Finished = time.Now().UTC().Format(time.RFC3339)
		if werr := rundir.WriteJSONAtomic(filepath.Join(man.Config.OutDir, rundir.FileManifest), man); werr != nil {
			return nil, fmt.Errorf("%w (and the manifest could not record it: %v)", err, werr)
		}
	}
	return sum, err
}

// runner is the state of one Run shared by its steps: the configuration
// (the stored one on a resume), the options, the item set, the manifest
// being written and the plan's batches (the shard's only, for a shard).
type runner struct {
	ctx      context.Context
	cfg      rundir.Config
	opt      Options
	out      string // the run directory
	set      *templates.Set
	man      *rundir.Manifest
	setJSONL []byte      // set.jsonl's content
	batches  []PlanBatch // the batches this process runs
	qs       []string    // distinct questions, in run order, for the classifier
	total    int         // items of batches, all models
	ddc      *DDCStore
	done     *rundir.Streams
	lock     *rundir.DirLock  // the run directory's, from prepareSet on
	finished int              // trials finished (resumed ones included)
	genTok   int              // tokens generated in this process
	doneTok  int              // of genTok, those of finished items
	genSec   float64          // generation seconds in this process
	split    rundir.TimeSplit // where genSec went
	start    time.Time        // when generation started in this process
}

// run is Run without the last manifest update on an error: it prepares the
// item set and the run directory, writes the set file and the manifest
// (published in *manOut from then on), runs every model's batches beside the
// DDC classifier and completes the run. The run directory's lock, once
// taken, is published in *lockOut for Run to release last.
func run(ctx context.Context, cfg rundir.Config, opt Options, manOut **rundir.Manifest, lockOut **rundir.DirLock) (*summary.Summary, error) {
	r := &runner{ctx: ctx, cfg: cfg, opt: opt, out: cfg.OutDir}
	err := r.prepareSet()
	*lockOut = r.lock
	if err != nil {
		return nil, err
	}
	if err := r.newManifest(); err != nil {
		return nil, err
	}
	if err := r.plan(); err != nil {
		return nil, err
	}
	if err := rundir.WriteFileAtomic(filepath.Join(r.out, rundir.FileSet), r.setJSONL); err != nil {
		return nil, err
	}
	if err := rundir.WriteJSONAtomic(filepath.Join(r.out, rundir.FileManifest), r.man); err != nil {
		return nil, err
	}
	*manOut = r.man
	rundir.CrashPoint("start")

	// DDC reading of every distinct question this run decodes, once, in a
	// goroutine that runs beside generation (in run order, so the first
	// items are ready first).
	r.collectQuestions()
	r.ddc = NewDDCStore(r.opt.Classifier, r.qs)
	defer func() {
		r.man.EmbedSeconds, r.man.EmbedWaitSeconds = r.ddc.Seconds()
	}()

	done, err := rundir.OpenStreams(r.out, r.opt.Resume)
	if err != nil {
		return nil, err
	}
	defer done.Close()
	r.done = done
	r.finished = len(done.Trials)

	if err := r.runModels(); err != nil {
		return nil, err
	}
	return r.complete()
}

// logf writes a one-line notice to opt.Log, if any.
func (r *runner) logf(format string, args ...any) {
	if r.opt.Log != nil {
		fmt.Fprintf(r.opt.Log, format+"\n", args...)
	}
}

// prepareSet reads the stored configuration on a resume, validates the
// configuration, generates the item set, checks the overrides file against
// it and prepares the run directory; it logs the skipped templates.
func (r *runner) prepareSet() error {
	if r.opt.Resume {
		stored, err := rundir.ReadManifest(r.out)
		if err != nil {
			return err
		}
		r.cfg = stored.Config
		r.cfg.OutDir = r.out
	}
	cfg := &r.cfg
	if err := Validate(cfg); err != nil {
		return err
	}
	set, err := GenerateSet(*cfg)
	if err != nil {
		return err
	}
	if err := CheckSetCovers(*cfg, set); err != nil {
		return err
	}
	if len(set.Instances) == 0 && cfg.Items != "" {
		return fmt.Errorf("items %s: no instance could be generated", cfg.Items)
	}
	if len(set.Instances) == 0 {
		if len(set.Skipped) > 0 {
			return fmt.Errorf("templates %s: no instance could be generated (%d templates skipped; first: %s)", cfg.Templates, len(set.Skipped), set.Skipped[0].Reason)
		}
		return fmt.Errorf("templates %s: no instance could be generated", cfg.Templates)
	}
	if err := CheckLeftOut(*cfg, set); err != nil {
		return err
	}
	if cfg.Overrides != "" {
		if err := checkOverrides(cfg.Overrides, set); err != nil {
			return err
		}
	}
	// Refused before the lock too, so that a folder that is not given to
	// this run is left without a fragility.lock.
	if err := rundir.RefuseExisting(r.out, r.opt.Force, r.opt.Resume); err != nil {
		return err
	}
	lock, err := rundir.LockDir(r.out)
	if err != nil {
		return err
	}
	r.lock = lock
	if err := rundir.PrepareDir(r.out, r.opt.Force, r.opt.Resume); err != nil {
		return err
	}
	for _, sk := range set.Skipped {
		r.logf("%s", sk)
	}
	for _, n := range set.Notices() {
		r.logf("%s", n)
	}
	r.set = set
	return nil
}

// newManifest builds the run's manifest in state "running", with the
// identity of every model file; on a resume it carries over what the earlier
// processes recorded and refuses a model file whose sha256 changed.
func (r *runner) newManifest() error {
	cfg, opt, set := r.cfg, r.opt, r.set
	man := &rundir.Manifest{
		Tool:            rundir.WithEntropyKernel(opt.ToolInfo),
		LlamaCommit:     llm.LlamaCommit,
		LlamaModule:     llm.OllamaModule,
		BuildFlags:      llm.BuildFlags,
		SystemInfo:      llm.SystemInfo(),
		GOOS:            runtime.GOOS,
		GOARCH:          runtime.GOARCH,
		Config:          cfg,
		Prompt:          PromptRecord(cfg),
		Skipped:         set.Skipped,
		Sampler:         samplerName(cfg),
		ExtractionRules: answer.ExtractionRulesVersion,
		ErrorRules:      anatomy.Version,
		AnswerScore:     AnswerScoreVersion,
		Calculator:      calcInfo(cfg),
		Order:           "math/rand/v2 PCG(seed, 0x6f72646572).Perm over the set's instances; the same order for every model",
		Batching:        fmt.Sprintf("batches of %d consecutive items of the order, per model, decoded together in one llama_batch (an item whose prompt does not fit the context is recorded as skipped and leaves its batch one shorter); a prefix common to a batch's prompts (at least %d tokens) is decoded once into sequence 0 and its KV cells copied to the others (llama_memory_seq_cp)", cfg.Params.NSeq, llm.MinSharedPrefix),
		KVType:          "f16 (llama.cpp default)",
		Status:          "running",
		Started:         time.Now().UTC().Format(time.RFC3339),
		SetFile:         rundir.FileSet,
		Excluded:        len(set.Excluded),
		Flagged:         len(set.Flagged),
		Embedder:        opt.Embedder,
	}
	r.man = man
	if opt.Resume {
		if old, err := rundir.ReadManifest(r.out); err == nil {
			man.Started = old.Started
			man.Resumes = old.Resumes + 1
			// Time spent by earlier processes of this run (recorded when
			// they were interrupted): the totals cover the whole run.
			man.GenerationSeconds, man.WallSeconds = old.GenerationSeconds, old.WallSeconds
			man.TimeSplit = old.TimeSplit
		}
	}
	for i, p := range cfg.Models {
		mm, err := rundir.FileIdentity(p, cfg.ModelSource(i))
		if err != nil {
			return err
		}
		man.Models = append(man.Models, mm)
	}
	if opt.Resume {
		return r.carryOver()
	}
	return nil
}

// carryOver copies into a resumed run's manifest what an earlier process
// learnt (model metadata and backend, devices, the prompt's rendering, the
// shard's source) and refuses a model file whose sha256 changed, and a
// binary whose answer scoring or llama.cpp differs from the one that
// started the run (refuseMixedBuild).
func (r *runner) carryOver() error {
	man := r.man
	old, _ := rundir.ReadManifest(r.out)
	if err := refuseMixedBuild(r.out, old, man); err != nil {
		return err
	}
	for i := range man.Models {
		if old != nil && i < len(old.Models) && old.Models[i].SHA256 != man.Models[i].SHA256 {
			return fmt.Errorf("%s: sha256 changed since the run started (%s, now %s): cannot resume", man.Models[i].Path, old.Models[i].SHA256, man.Models[i].SHA256)
		}
		// What an earlier process learnt by loading a model this one
		// may not load again (its items are done).
		if old != nil && i < len(old.Models) {
			man.Models[i].Metadata, man.Models[i].Backend = old.Models[i].Metadata, old.Models[i].Backend
		}
	}
	if old != nil {
		man.Devices, man.Prompt.Rendering = old.Devices, old.Prompt.Rendering
		if old.Shard != nil && r.opt.ShardSource == "" {
			r.opt.ShardSource = old.Shard.Source
		}
	}
	return nil
}

// refuseMixedBuild refuses to resume, in dir, a run whose manifest old was
// recorded by a binary with another answer-scoring procedure
// (AnswerScoreVersion) or another llama.cpp commit than man's: their
// numbers differ in more than the last bits, and one run must not mix them.
// A manifest that records no answer scoring (older runs) is not refused.
func refuseMixedBuild(dir string, old, man *rundir.Manifest) error {
	if old == nil {
		return nil
	}
	if old.AnswerScore != "" && old.AnswerScore != man.AnswerScore {
		return fmt.Errorf("%s: started with answer scoring %s, this binary has %s: cannot resume (finish it with the binary that started it, or start over with --force)", dir, old.AnswerScore, man.AnswerScore)
	}
	if old.LlamaCommit != "" && old.LlamaCommit != man.LlamaCommit {
		return fmt.Errorf("%s: started with llama.cpp %s, this binary has %s: cannot resume (finish it with the binary that started it, or start over with --force)", dir, old.LlamaCommit, man.LlamaCommit)
	}
	return nil
}

// plan computes the set file's content, the plan's batches and its sha256
// (refusing a resume whose plan changed), then cuts the shard's batches out
// of the plan when the run is a shard.
func (r *runner) plan() error {
	cfg, man, set := r.cfg, r.man, r.set
	setJSONL, err := setBytes(set)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(r.out, rundir.FileSet), err)
	}
	r.setJSONL = setJSONL
	// The plan: every model's items in batches of NSeq consecutive items of
	// the order; a shard runs a contiguous range of these batches.
	r.batches = PlanBatches(cfg, set)
	modelSHA := make([]string, len(man.Models))
	for i, mm := range man.Models {
		modelSHA[i] = mm.SHA256
	}
	man.PlanSHA256, _ = planSHA(cfg, r.batches, setJSONL, modelSHA, r.opt.Embedder)
	if r.opt.Resume {
		if old, err := rundir.ReadManifest(r.out); err == nil && old.PlanSHA256 != "" && old.PlanSHA256 != man.PlanSHA256 {
			return fmt.Errorf("%s: the plan changed since the run started (plan sha256 %s, now %s: the templates, the embedder or this binary's prompt differ): cannot resume", r.out, old.PlanSHA256, man.PlanSHA256)
		}
	}
	if cfg.Shard != nil {
		return r.cutShard()
	}
	return nil
}

// cutShard keeps only the shard's contiguous range of the plan's batches
// and records it in the manifest.
func (r *runner) cutShard() error {
	cfg, man, batches := r.cfg, r.man, r.batches
	planItems := len(r.set.Instances) * len(cfg.Models)
	if cfg.Shard.Count > len(batches) {
		return fmt.Errorf("--shard %s: the plan has only %d batch(es) of --batch %d (%d items), so at most %d shards", cfg.Shard, len(batches), cfg.Params.NSeq, planItems, len(batches))
	}
	lo, hi := rundir.ShardBatches(*cfg.Shard, len(batches))
	host, _ := os.Hostname()
	man.Shard = &rundir.ShardInfo{Shard: *cfg.Shard, Source: r.opt.ShardSource, Host: host, FirstBatch: lo,
		Batches: hi - lo, PlanBatches: len(batches), PlanItems: planItems}
	batches = batches[lo:hi]
	for _, b := range batches {
		man.Shard.Items += len(b.Items)
	}
	r.batches = batches
	r.logf("shard %s: batches %d..%d of %d (%d of %d items), plan sha256 %s", cfg.Shard, lo+1, hi, man.Shard.PlanBatches, man.Shard.Items, planItems, man.PlanSHA256)
	return nil
}

// collectQuestions counts the items of the batches this process runs and
// lists their distinct questions in run order.
func (r *runner) collectQuestions() {
	seen := map[string]bool{}
	for _, b := range r.batches {
		r.total += len(b.Items)
		for _, it := range b.Items {
			if q := it.Inst.Question; !seen[q] {
				seen[q] = true
				r.qs = append(r.qs, q)
			}
		}
	}
}

// runModels loads each model that has items left to run, records what
// loading it told (metadata, backend, devices) in the manifest and runs its
// batches (runModel). A failed or interrupted model ends the run with the
// manifest saying so.
func (r *runner) runModels() error {
	cfg, man := r.cfg, r.man
	r.start = time.Now()
	for mi, path := range cfg.Models {
		var mine []PlanBatch
		todo := 0
		for _, b := range r.batches {
			if b.Model != mi {
				continue
			}
			mine = append(mine, b)
			for _, it := range b.Items {
				if !r.done.Has(it.ID) {
					todo++
				}
			}
		}
		if todo == 0 {
			continue
		}
		m, err := llm.Load(path, cfg.Params)
		if err != nil {
			return err
		}
		md := m.Metadata()
		if n := cfg.Params.Defaults().NCtx; md.NCtxTrain > 0 && n > md.NCtxTrain {
			r.logf("Warning: %s", CtxTrainWarning(filepath.Base(path), n, md.NCtxTrain))
		}
		man.Models[mi].Metadata = &md
		man.Models[mi].Backend = llm.BackendSummary(cfg.Params.GPULayers)
		man.Devices = llm.Devices()
		if err := rundir.WriteJSONAtomic(filepath.Join(r.out, rundir.FileManifest), man); err != nil {
			m.Close()
			return err
		}
		err = runModel(r.ctx, m, mi, mine, cfg, man, r.ddc, r.done, &r.split, func(n, tok int, sec float64) {
			r.finished += n
			r.genTok += tok
			r.genSec += sec
			if n > 0 {
				// A batch's items finish together: every token so far is theirs.
				r.doneTok = r.genTok
			}
			if r.opt.Progress != nil {
				r.opt.Progress(Event{Model: path, Done: r.finished, Total: r.total, Tokens: r.genTok, DoneTokens: r.doneTok, Seconds: time.Since(r.start).Seconds()})
			}
		})
		m.Close()
		if err != nil {
			return r.fail(err)
		}
	}
	return nil
}

// SplitLine says in one line where a run's time went (Manifest.TimeSplit):
// generation and its prompts, decoding and entropy passes, the answer
// scoring after each batch, the DDC classifier beside generation, and the
// wall time; "" for a manifest without a split.
func SplitLine(man *rundir.Manifest) string {
	ts := man.TimeSplit
	if ts == nil {
		return ""
	}
	where := "beside the next decode"
	if ts.EntropyInline {
		where = "between decodes"
	}
	return fmt.Sprintf("time: %.0f s of generation (prompts %.0f s, decoding %.0f s, entropy passes %.0f s %s), answer scoring %.0f s after it, DDC classifier %.0f s beside it (waited %.0f s); %.0f s wall",
		man.GenerationSeconds, ts.PrefillSeconds, ts.DecodeSeconds, ts.EntropySeconds, where, ts.AnswerScoreSeconds, man.EmbedSeconds, man.EmbedWaitSeconds, man.WallSeconds)
}

// addSplit returns t (a new one when nil) with o's seconds added.
func addSplit(t, o *rundir.TimeSplit) *rundir.TimeSplit {
	if t == nil {
		t = &rundir.TimeSplit{}
	}
	t.Add(o)
	return t
}

// fail records in the manifest that a model's run failed or was
// interrupted, with the time spent, and returns err.
func (r *runner) fail(err error) error {
	man := r.man
	man.Status = "failed"
	if errors.Is(err, llm.ErrAborted) || r.ctx.Err() != nil {
		man.Status = "interrupted"
	} else {
		man.FailReason = err.Error()
	}
	man.Finished = time.Now().UTC().Format(time.RFC3339)
	man.GenerationSeconds += r.genSec
	man.TimeSplit = addSplit(man.TimeSplit, &r.split)
	man.WallSeconds += time.Since(r.start).Seconds()
	if werr := rundir.WriteJSONAtomic(filepath.Join(r.out, rundir.FileManifest), man); werr != nil {
		return fmt.Errorf("%w (and the manifest could not record it: %v)", err, werr)
	}
	return err
}

// complete marks the manifest complete with the run's times and writes the
// summary; a shard whose part of the plan cannot be summarised alone gets
// only its trial counts.
func (r *runner) complete() (*summary.Summary, error) {
	man := r.man
	man.Status = "complete"
	man.Finished = time.Now().UTC().Format(time.RFC3339)
	man.EmbedSeconds, man.EmbedWaitSeconds = r.ddc.Seconds()
	if r.opt.Classifier != nil {
		r.logf("ddc: %d distinct prompts classified in %.1fs beside generation; the run waited %.1fs for them", len(r.qs), man.EmbedSeconds, man.EmbedWaitSeconds)
	}
	man.GenerationSeconds += r.genSec
	man.TimeSplit = addSplit(man.TimeSplit, &r.split)
	man.WallSeconds += time.Since(r.start).Seconds()
	r.logf("%s", SplitLine(man))
	if err := rundir.WriteJSONAtomic(filepath.Join(r.out, rundir.FileManifest), man); err != nil {
		return nil, err
	}
	rundir.CrashPoint("summary")
	sum, err := WriteSummary(r.out)
	if err != nil && r.cfg.Shard != nil {
		// A shard's own summary is a convenience (the run's statistics come
		// from the merged shards): a part of the plan that the statistics
		// cannot summarise on its own does not fail the shard.
		r.logf("shard %s: no summary of this shard alone (%v); fragility merge computes the run's", r.cfg.Shard, err)
		return &summary.Summary{Trials: len(r.done.Trials), Skipped: countSkipped(r.done.Trials)}, nil
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

func samplerName(cfg rundir.Config) string {
	if cfg.Temperature == 0 {
		return "greedy (argmax over the full vocabulary, lowest id among ties)"
	}
	return fmt.Sprintf("temperature %g over the full vocabulary, math/rand/v2 PCG(seed, sequence slot) with seed %d", cfg.Temperature, cfg.Seed)
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
func runModel(ctx context.Context, m *llm.Model, mi int, batches []PlanBatch, cfg rundir.Config, man *rundir.Manifest, ddc *DDCStore, st *rundir.Streams, split *rundir.TimeSplit, progress func(n, tokens int, sec float64)) error {
	r := &modelRun{ctx: ctx, m: m, md: m.Metadata(), mi: mi, cfg: cfg, man: man, ddc: ddc, st: st, split: split, progress: progress}
	for _, b := range batches {
		for _, it := range b.Items {
			if st.Has(it.ID) {
				continue
			}
			if err := r.prepare(it); err != nil {
				return err
			}
		}
		if err := r.flush(); err != nil {
			return err
		}
	}
	return nil
}

// modelRun is the state of runModel for one model: its arguments, the
// items of the current batch rendered and tokenized, and the kept prefixes.
type modelRun struct {
	ctx      context.Context
	m        *llm.Model
	md       llm.Metadata
	mi       int
	cfg      rundir.Config
	man      *rundir.Manifest
	ddc      *DDCStore
	st       *rundir.Streams
	progress func(n, tokens int, sec float64)
	split    *rundir.TimeSplit // where the generation time went (the runner's)
	queue    []preparedItem
	keeps    KeptPrefixes
}

// preparedItem is an item of a batch with its rendered prompt and tokens.
type preparedItem struct {
	it       PlannedItem
	rendered llm.Rendered
	tokens   []llm.Token
}

// batchOutput is what decoding a batch gave: the generations (nil on an
// error before any), the error, the wall seconds, the tokens already
// reported as progress, and the calculator of the batch.
type batchOutput struct {
	gens     []*llm.Generation
	err      error
	wall     float64
	reported int
	calc     *Calculator
	answers  []AnswerScores // the answer-scoring pass, by queue index (nil records: not scored)
}

// prepare renders and tokenizes one item and queues it for the batch; an
// item whose prompt does not fit the context is recorded as skipped at once.
func (r *modelRun) prepare(it PlannedItem) error {
	cfg, md := r.cfg, r.md
	rd, err := RenderCondition(r.m, cfg, ItemText(it.Inst), it.Cond, it.Inst.Variant == templates.VariantPlacebo)
	if err != nil {
		return fmt.Errorf("%s: %w", md.Path, err)
	}
	toks, err := r.m.Tokenize(rd.Text, true, true)
	if err != nil {
		return fmt.Errorf("%s: item %s: %w", md.Path, it.ID, err)
	}
	r.man.NoteRendering(r.mi, rd)
	if nctx := cfg.Params.Defaults().NCtx; len(toks)+1 >= nctx {
		tr, err := newTrial(it, md, cfg, r.ddc)
		if err != nil {
			return err
		}
		tr.PromptTokens = len(toks)
		tr.StopReason = "skipped"
		tr.SkipReason = (&llm.PromptTooLongError{Tokens: len(toks), NCtx: nctx}).Error()
		if err := r.st.Append([]results.Trial{tr}, []rundir.Trace{{ItemID: tr.ItemID, Prompt: rd.Text, PromptTokenIDs: toks, SkipReason: tr.SkipReason}}); err != nil {
			return err
		}
		r.progress(1, 0, 0)
		return nil
	}
	r.queue = append(r.queue, preparedItem{it: it, rendered: rd, tokens: toks})
	return nil
}

// flush decodes the queued items together and writes their trials and
// traces, then empties the queue.
func (r *modelRun) flush() error {
	if len(r.queue) == 0 {
		return nil
	}
	out, err := r.generate()
	if err != nil {
		return err
	}
	return r.record(out)
}

// generate decodes the queued items in one batch, reporting progress from
// the first token: the tokens of the batch in flight, at most every
// progressTick, without waiting for the batch to end.
func (r *modelRun) generate() (batchOutput, error) {
	cfg, queue := r.cfg, r.queue
	prompts := make([][]llm.Token, len(queue))
	for i, q := range queue {
		prompts[i] = q.tokens
	}
	var out batchOutput
	lastTick := time.Now()
	onStep := func(tokens int) {
		rundir.CrashPoint("decode")
		if now := time.Now(); now.Sub(lastTick) >= progressTick || out.reported == 0 {
			r.progress(0, tokens-out.reported, 0)
			out.reported, lastTick = tokens, now
		}
	}
	opt := llm.GenerateOptions{MaxTokens: cfg.MaxTokens, Stop: queue[0].rendered.Stop, Temperature: cfg.Temperature, Seed: uint64(cfg.Seed), OnStep: onStep, KeepFirstLogits: true}
	var err error
	if opt.KeepPrefix, err = r.keeps.Get(r.m, cfg, queue[0].it.Cond); err != nil {
		return out, fmt.Errorf("%s: %w", r.md.Path, err)
	}
	out.calc = NewCalculator(cfg, queue[0].it.Cond, len(queue))
	out.calc.SetOptions(&opt)
	t0 := time.Now()
	out.gens, out.err = r.m.GenerateBatch(r.ctx, prompts, opt)
	if out.err != nil && out.gens == nil {
		return out, fmt.Errorf("%s: %w", r.md.Path, out.err)
	}
	out.wall = time.Since(t0).Seconds()
	r.noteSplit(out.gens)
	if out.err == nil {
		ts := time.Now()
		if out.answers, err = r.scoreAnswers(out.gens); err != nil {
			return out, fmt.Errorf("%s: %w", r.md.Path, err)
		}
		r.split.AnswerScoreSeconds += time.Since(ts).Seconds()
	}
	return out, nil
}

// noteSplit adds a decoded batch's timers (llm.Generation's) to the run's
// time split.
func (r *modelRun) noteSplit(gens []*llm.Generation) {
	for _, g := range gens {
		r.split.PrefillSeconds += g.PrefillSec
		r.split.DecodeSeconds += g.DecodeSec
		r.split.EntropySeconds += g.EntropySec
	}
	r.split.EntropyInline = r.split.EntropyInline || r.m.EntropyPoolSize() == 0
}

// scoreAnswers runs the answer-scoring pass (AnswerScoreVersion) over the
// batch just generated: the numeric items, in the generation's KV state.
func (r *modelRun) scoreAnswers(gens []*llm.Generation) ([]AnswerScores, error) {
	var jobs []AnswerJob
	for i, q := range r.queue {
		if q.it.Inst.Accepted != nil {
			continue
		}
		jobs = append(jobs, AnswerJob{Seq: i, Expected: q.it.Inst.Answer, Ex: Extract(gens[i]), After: true, First: true})
	}
	preset, err := ParsePrompt(r.cfg.Prompt)
	if err != nil || len(jobs) == 0 {
		return make([]AnswerScores, len(r.queue)), err
	}
	trs, err := ScoreAnswers(r.ctx, r.m, gens, jobs, preset, "")
	if err != nil {
		return nil, err
	}
	out := make([]AnswerScores, len(r.queue))
	for j, job := range jobs {
		out[job.Seq] = trs[j]
	}
	return out, nil
}

// record writes the trials and traces of a decoded batch. An item finished
// before an earlier interruption keeps its recorded result (this decode of
// the whole batch repeats it); an item cut short by an interruption is left
// to run again on resume.
func (r *modelRun) record(out batchOutput) error {
	queue, genErr, wall := r.queue, out.err, out.wall
	var trials []results.Trial
	var traces []rundir.Trace
	ntok, held, n := 0, false, 0
	for i, q := range queue {
		g := out.gens[i]
		ntok += g.Generated()
		if h, ok := r.st.Held(q.it.ID); ok {
			// Finished before an earlier interruption: its recorded
			// result stands (this decode of the whole batch repeats it).
			held = true
			if genErr == nil {
				ht, htr := h.Trial, h.Trace
				if a := out.answers; a != nil && htr.AnswerScore == nil && htr.AnswerFirst == nil {
					// Recorded before the interruption, when the batch
					// could not be scored: this decode repeats it.
					fillAnswerScore(&ht, a[i].After)
					fillAnswerFirst(&ht, a[i].First)
					htr.AnswerScore, htr.AnswerFirst = a[i].After, a[i].First
				}
				trials, traces = append(trials, ht), append(traces, htr)
			}
			continue
		}
		if genErr != nil && !g.Done() {
			continue // cut short by the interruption: run again on resume
		}
		tr, err := newTrial(q.it, r.md, r.cfg, r.ddc)
		if err != nil {
			return err
		}
		tr.PromptTokens = len(q.tokens)
		calls := out.calc.finish(i, g)
		fillFromGeneration(&tr, g, wall/float64(len(queue)), q.it.Inst.Accepted, q.it.Cond, calls)
		classifyErrorOf(&tr, q.it.Inst) // with its clause's numbers (errors/3)
		trace := newTrace(tr.ItemID, q.rendered, q.tokens, g, len(queue))
		trace.CalcCalls = calls
		if out.answers != nil {
			fillAnswerScore(&tr, out.answers[i].After)
			fillAnswerFirst(&tr, out.answers[i].First)
			trace.AnswerScore, trace.AnswerFirst = out.answers[i].After, out.answers[i].First
		}
		trials = append(trials, tr)
		traces = append(traces, trace)
		n++
	}
	write := r.st.Append
	if held && genErr == nil {
		write = r.st.CompleteHeld
		n = len(queue)
	}
	if len(trials) > 0 {
		if err := write(trials, traces); err != nil {
			return err
		}
	}
	r.progress(n, ntok-out.reported, wall)
	r.queue = r.queue[:0]
	if genErr != nil {
		return fmt.Errorf("%s: %w", r.md.Path, genErr)
	}
	return nil
}

// newTrial fills the identity columns of a trial.
func newTrial(it PlannedItem, md llm.Metadata, cfg rundir.Config, ddc *DDCStore) (results.Trial, error) {
	in := it.Inst
	id := rundir.IdentifyModel(cfg.ModelName(it.Model, md.Path), md.Name, md.Quantization)
	t := results.Trial{
		ItemID:         it.ID,
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
		Condition:      results.ConditionName(it.Cond),
	}
	d, ok, err := ddc.Get(in.Question)
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
func fillFromGeneration(t *results.Trial, g *llm.Generation, seconds float64, accepted []string, cond string, calls []rundir.CalcCall) {
	t.Response = g.Text
	t.Tokens = g.Generated()
	t.StopReason = g.StopReason
	t.Seconds = seconds
	ex := Extract(g)
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
	return sum / float64(len(s)), stats.Quantile7(s, 0.95), math.Exp2(stats.Quantile7(s, 0.5))
}

// Extract is the answer extracted from g's text (extract/3: an answer
// the budget cut is read by answer.Truncated; extract/4: one the context
// filled too).
func Extract(g *llm.Generation) answer.Extraction {
	ex := answer.Extract(g.Text)
	if g.StopReason == llm.StopMaxTokens || g.StopReason == llm.StopContextFull {
		ex = answer.Truncated(ex)
	}
	return ex
}

func newTrace(id string, r llm.Rendered, toks []llm.Token, g *llm.Generation, batch int) rundir.Trace {
	tr := rundir.Trace{ItemID: id, Prompt: r.Text, PromptTokenIDs: toks, BatchSize: batch, StopReason: g.StopReason}
	for _, t := range g.Tokens {
		tr.Tokens = append(tr.Tokens, rundir.TraceToken{ID: t.ID, Piece: t.Piece, EntropyBits: t.EntropyBits, LogProb: t.LogProb, Injected: t.Injected})
	}
	return tr
}

// setBytes returns set.jsonl's content for set.
func setBytes(set *templates.Set) ([]byte, error) {
	var b bytes.Buffer
	if err := set.WriteJSONL(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
