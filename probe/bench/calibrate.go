package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// DefaultCalibrationItems is the number of a plan's items a calibration
// generates per model (`fragility plan --calibrate`), rounded up to whole
// batches of the plan's --batch.
const DefaultCalibrationItems = 8

// DefaultCalibrationLimit is the time a calibration takes at most per
// model after loading it (`fragility plan --calibrate-seconds`): the items
// still generating then are stopped, and the mean tokens per item counts
// them at the budget (Calibration.TokensPerItem). A batch of the
// gsm-symbolic-paper preset (8 prompts of about 800 tokens, few of which
// share the kept prefix: a placebo item's instruction differs, and a batch
// with one reads every prompt whole) took 80 to 90 s on the 2-vCPU
// development machine with the default model, answers included.
const DefaultCalibrationLimit = 120 * time.Second

// calibrationCtx is the smallest context per sequence a calibration loads
// a model with when the plan's --n-ctx is larger: the items' prompts and
// answers, not the run's context, are what it decodes.
const calibrationCtx = 4096

// calibrationBatch is the most tokens a calibration decodes in one
// llama_decode call (n_batch) while it reads the prompts: the time limit
// is checked between calls.
const calibrationBatch = 128

// CalibrateConfig defines a calibration (Calibrate): a plan's first items
// generated on one model as `fragility run` generates them.
type CalibrateConfig struct {
	// Run is the planned run's configuration: its prompt, shots, chat
	// template, budget (MaxTokens), temperature, seed, decode procedure and
	// calculator calls render and decode the items as run does, and
	// Run.Params.NCtx is the context a prompt must fit in, as in run.
	Run rundir.Config
	// Model is the model file and Params its load parameters (threads, GPU
	// layers; NSeq the plan's --batch). The model is loaded with a context
	// of min(Run.Params.NCtx, max(4096, MaxTokens + 2048)) tokens per
	// sequence (enough for the items, less memory than a long --n-ctx) and
	// an n_batch of at most max(128, NSeq).
	Model  string
	Params llm.Params
	// Items are the items to generate, in run order, in batches of
	// Params.NSeq (probe.PlanBatches' first batches of the model).
	Items []probe.PlannedItem
	// Limit bounds the generation time (0: none); the batch running then is
	// stopped and later batches are not started.
	Limit time.Duration
}

// Calibration is what a calibration measured on one model: the generation
// rate of the plan's items at its --batch and threads, and their mean
// generated tokens, an estimate of the run's from a few of its items.
type Calibration struct {
	// Model is the model file, Batch the sequences decoded together (the
	// plan's --batch), Threads and ThreadsBatch llama.cpp's threads as the
	// model was loaded (defaults filled in).
	Model        string `json:"model"`
	Batch        int    `json:"batch"`
	Threads      int    `json:"threads"`
	ThreadsBatch int    `json:"threads_batch"`
	// Items counts the items generated (started), Finished those that
	// ended by themselves or at the budget before the time limit, Cut those
	// the budget (--max-tokens) ended, Skipped those whose prompt does not
	// fit --n-ctx (run skips them too; not generated).
	Items    int `json:"items"`
	Finished int `json:"finished"`
	Cut      int `json:"cut"`
	Skipped  int `json:"skipped,omitempty"`
	// Tokens are the generated tokens, PromptTokens the items' prompt
	// tokens, Seconds the generation time (each prompt's own tokens read
	// included, as in a run's generation_seconds), LoadSeconds the model's
	// loading. PrefixTokens and PrefixSeconds are the prompts' shared
	// prefix (instruction and worked examples) and the time it took to
	// read it once, before the timed batches: a run reads it once per
	// model and keeps it (probe.KeptPrefix), so it is not in Seconds.
	Tokens        int     `json:"tokens"`
	PromptTokens  int     `json:"prompt_tokens"`
	Seconds       float64 `json:"seconds"`
	LoadSeconds   float64 `json:"load_seconds"`
	PrefixTokens  int     `json:"prefix_tokens,omitempty"`
	PrefixSeconds float64 `json:"prefix_seconds,omitempty"`
	// TokensPerSecond is Tokens / Seconds.
	TokensPerSecond float64 `json:"tokens_per_second"`
	// TokensPerItem is the mean generated tokens per item, an item the
	// time limit stopped counted at the budget (so an upper bound when
	// Finished < Items); TokensPerItemLow counts it at the tokens it had
	// (a lower bound); both are the same when every item finished.
	TokensPerItem    float64 `json:"tokens_per_item"`
	TokensPerItemLow float64 `json:"tokens_per_item_low"`
	// PromptTokensPerItem is the mean prompt length of the items, tokens.
	PromptTokensPerItem float64 `json:"prompt_tokens_per_item"`
	// Limited is true when the time limit stopped the calibration.
	Limited bool `json:"stopped_by_limit,omitempty"`
}

// Calibrate loads c.Model and generates c.Items as `fragility run` does
// (probe.RenderCondition, the kept prompt prefix, the calculator, the
// run's budget, temperature and seed), in batches of c.Params.NSeq, for at
// most c.Limit (reading the shared prefix included; the limit is checked
// between llama_decode calls, so the call running then ends first), and
// returns what it measured. No run
// directory is written and no answer is scored. Errors: the model does
// not load, a prompt does not render, no item could be generated before
// the limit (all skipped, or the first batch's prompts not read in time),
// or ctx was cancelled (wrapping llm.ErrAborted).
func Calibrate(ctx context.Context, c CalibrateConfig) (*Calibration, error) {
	cfg := c.Run
	if cfg.MaxTokens < 1 || len(c.Items) == 0 {
		return nil, fmt.Errorf("calibrate: need a budget and items")
	}
	if cfg.Decode == "" {
		cfg.Decode = probe.DecodeKeepPrefix // run's default (probe.Validate)
	}
	nctx := cfg.Params.Defaults().NCtx // the context a prompt must fit, as in run
	p := calibrationParams(c.Params, nctx, cfg.MaxTokens)
	t0 := time.Now()
	m, err := llm.Load(c.Model, p)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	lp := m.Params()
	cal := &Calibration{Model: c.Model, Batch: lp.NSeq, Threads: lp.Threads, ThreadsBatch: lp.ThreadsBatch, LoadSeconds: time.Since(t0).Seconds()}
	gctx := ctx
	if c.Limit > 0 {
		var cancel context.CancelFunc
		gctx, cancel = context.WithTimeout(ctx, c.Limit)
		defer cancel()
	}
	var low float64
	var keeps probe.KeptPrefixes
	for lo := 0; lo < len(c.Items) && !cal.Limited; lo += p.NSeq {
		batch := c.Items[lo:min(lo+p.NSeq, len(c.Items))]
		prompts, stop, skipped, err := calibrationPrompts(m, cfg, batch, min(nctx, p.NCtx))
		cal.Skipped += skipped
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Model, err)
		}
		if len(prompts) == 0 {
			continue
		}
		opt := llm.GenerateOptions{MaxTokens: cfg.MaxTokens, Stop: stop, Temperature: cfg.Temperature, Seed: uint64(cfg.Seed)}
		if opt.KeepPrefix, err = keeps.Get(m, cfg, batch[0].Cond); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Model, err)
		}
		if len(opt.KeepPrefix) > 0 && cal.PrefixTokens == 0 {
			if err := cal.readPrefix(ctx, gctx, m, prompts[0], opt); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Model, err)
			}
			if cal.Limited {
				break
			}
		}
		probe.NewCalculator(cfg, batch[0].Cond, len(prompts)).SetOptions(&opt)
		t1 := time.Now()
		gens, err := m.GenerateBatch(gctx, prompts, opt)
		sec := time.Since(t1).Seconds()
		if err != nil {
			if ctx.Err() != nil || !errors.Is(err, llm.ErrAborted) {
				return nil, fmt.Errorf("%s: %w", c.Model, err)
			}
			cal.Limited = true // the time limit: count what it had
			if gens == nil {
				break // stopped while reading the prompts
			}
		}
		cal.Seconds += sec
		low += cal.count(gens, prompts, cfg.MaxTokens)
	}
	if cal.Items == 0 || cal.Seconds <= 0 {
		why := fmt.Sprintf("the %d items' prompts do not fit --n-ctx %d", cal.Skipped, nctx)
		if cal.Limited {
			why = fmt.Sprintf("the time limit (%s) passed before the first batch's prompts were read (a busy machine? give --calibrate-seconds more)", c.Limit)
		}
		return nil, fmt.Errorf("%s: no item generated to calibrate on: %s", c.Model, why)
	}
	n := float64(cal.Items)
	cal.TokensPerSecond, cal.TokensPerItem = float64(cal.Tokens)/cal.Seconds, cal.TokensPerItem/n
	cal.TokensPerItemLow, cal.PromptTokensPerItem = low/n, float64(cal.PromptTokens)/n
	return cal, nil
}

// readPrefix reads the shared prefix opt.KeepPrefix once and keeps it, as
// a run keeps it, with one token of prompt generated (not timed), and
// records its tokens and seconds in cal. The time limit (gctx) passing sets
// cal.Limited; any other error, or ctx cancelled, is returned.
func (cal *Calibration) readPrefix(ctx, gctx context.Context, m *llm.Model, prompt []llm.Token, opt llm.GenerateOptions) error {
	t1 := time.Now()
	opt.MaxTokens = 1
	if _, err := m.GenerateBatch(gctx, [][]llm.Token{prompt}, opt); err != nil {
		if ctx.Err() != nil || !errors.Is(err, llm.ErrAborted) {
			return err
		}
		cal.Limited = true
		return nil
	}
	cal.PrefixTokens, cal.PrefixSeconds = len(opt.KeepPrefix), time.Since(t1).Seconds()
	return nil
}

// calibrationParams is the model parameters of a calibration from the
// run's p: at least one sequence, a context of at most nctx that holds
// maxTokens with room for a prompt, and prompts read in llama_decode calls
// of at most calibrationBatch tokens (the time limit is checked between
// calls: smaller calls stop sooner on a busy machine; a problem's own
// tokens, what is timed, are fewer).
func calibrationParams(p llm.Params, nctx, maxTokens int) llm.Params {
	p.NSeq = max(p.NSeq, 1)
	p.NCtx = min(nctx, max(calibrationCtx, maxTokens+2048))
	p.NBatch = min(p.Defaults().NBatch, max(calibrationBatch, p.NSeq))
	p.NUBatch = 0
	return p
}

// calibrationPrompts renders and tokenizes batch's prompts as run does;
// a prompt of maxPrompt tokens or more is left out and counted in skipped,
// as run skips a prompt of --n-ctx tokens or more. stop is the rendering's
// stop strings. Errors name the item.
func calibrationPrompts(m *llm.Model, cfg rundir.Config, batch []probe.PlannedItem, maxPrompt int) (prompts [][]llm.Token, stop []string, skipped int, err error) {
	for _, it := range batch {
		rd, err := probe.RenderCondition(m, cfg, probe.ItemText(it.Inst), it.Cond, it.Inst.Variant == templates.VariantPlacebo)
		if err != nil {
			return nil, nil, skipped, err
		}
		toks, err := m.Tokenize(rd.Text, true, true)
		if err != nil {
			return nil, nil, skipped, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if len(toks)+1 >= maxPrompt {
			skipped++
			continue
		}
		prompts, stop = append(prompts, toks), rd.Stop
	}
	return prompts, stop, skipped, nil
}

// count adds one timed batch's generations to cal (items, tokens, prompt
// tokens, finished and cut answers; an unfinished answer counts maxTokens
// toward TokensPerItem) and returns the tokens they generated, the sum
// behind TokensPerItemLow.
func (cal *Calibration) count(gens []*llm.Generation, prompts [][]llm.Token, maxTokens int) (generated float64) {
	for i, g := range gens {
		n := g.Generated()
		cal.Items++
		cal.Tokens += n
		cal.PromptTokens += len(prompts[i])
		generated += float64(n)
		switch {
		case !g.Done():
			cal.TokensPerItem += float64(maxTokens)
		default:
			cal.Finished++
			cal.TokensPerItem += float64(n)
			if g.StopReason == llm.StopMaxTokens {
				cal.Cut++
			}
		}
	}
	return generated
}
