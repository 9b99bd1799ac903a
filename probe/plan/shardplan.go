package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/internal/readlimit"
	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/bench"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
	gguf "github.com/gpustack/gguf-parser-go"
)

// Throughput is a measured generation rate, used to estimate wall time.
type Throughput struct {
	TokensPerSecond float64 `json:"tokens_per_second"` // generated tokens per second of generation time
	Source          string  `json:"source"`            // where it was measured
}

// ShardPlanOptions are the inputs of PlanShards besides the run's Config.
type ShardPlanOptions struct {
	Shards int // number of shards; 0 = 1
	// TokensPerItem is the expected number of generated tokens per item;
	// 0 uses Config.MaxTokens (an upper bound). TokensPerItemSource says
	// where it came from.
	TokensPerItem       float64
	TokensPerItemSource string
	// PromptTokensPerItem is the mean prompt length in tokens (0: unknown),
	// PromptTokensSource whose prompts they are ("the pilot's", "the
	// calibration's").
	PromptTokensPerItem float64
	PromptTokensSource  string
	Rate                Throughput // zero: no time estimates
	// Memory estimates each model's memory with gguf-parser-go (reads the
	// GGUF headers, not the weights).
	Memory bool
	// NoModel, when Config.Models is empty, says why no model file is at
	// hand: the items of one model are then sized, with no memory
	// estimate (ShardPlan.ModelNote).
	NoModel string
}

// ShardPlanModel is one model of a planned run.
type ShardPlanModel struct {
	Path        string `json:"path"`
	SizeBytes   int64  `json:"size_bytes"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"` // estimated RAM+VRAM to run it (weights, KV cache, compute buffers)
	// CtxTrain is the context length the model was trained with, in
	// tokens (the GGUF's context_length, llama.cpp's n_ctx_train; 0 when
	// the header has none).
	CtxTrain int `json:"n_ctx_train,omitempty"`
}

// ShardEstimate is the size and expected wall time of one shard.
type ShardEstimate struct {
	Shard        string  `json:"shard"` // "K/N"
	FirstBatch   int     `json:"first_batch"`
	Batches      int     `json:"batches"`
	Items        int     `json:"items"`
	Models       []int   `json:"models"`         // indices of the models it loads, one after the other
	GenTokensMax int64   `json:"gen_tokens_max"` // items × max tokens
	GenTokens    float64 `json:"gen_tokens"`     // expected generated tokens
	PromptTokens float64 `json:"prompt_tokens,omitempty"`
	Seconds      float64 `json:"seconds,omitempty"`      // expected generation wall time (0 without a rate)
	MemoryBytes  uint64  `json:"memory_bytes,omitempty"` // the largest estimate among its models
}

// ShardPlan is what `fragility plan` prints about a run's size and its
// shards before anything runs.
type ShardPlan struct {
	Models              []ShardPlanModel `json:"models"`
	ModelNote           string           `json:"model_note,omitempty"` // why Models is empty (ShardPlanOptions.NoModel)
	Instances           int              `json:"instances_per_model"`  // items of one model (the set)
	Excluded            int              `json:"excluded_draws"`       // entries of the set's exclusion list: RefusedDraws + LeftOut
	RefusedDraws        int              `json:"refused_draws"`        // draws refused by a condition or a no-op clause and drawn again
	LeftOut             int              `json:"left_out_instances"`   // variant instances not generated (variant not applicable, no clause fits)
	Conditions          int              `json:"conditions"`           // conditions each instance runs in (1: none alone; 2 with the calculator)
	Items               int              `json:"items"`                // all models and conditions
	Batch               int              `json:"batch"`
	Batches             int              `json:"batches"`
	MaxTokens           int              `json:"max_tokens"`
	TokensPerItem       float64          `json:"tokens_per_item"`
	TokensPerItemSource string           `json:"tokens_per_item_source"`
	GenTokensMax        int64            `json:"gen_tokens_max"`
	GenTokens           float64          `json:"gen_tokens"`
	PromptTokens        float64          `json:"prompt_tokens,omitempty"`
	PromptTokensSource  string           `json:"prompt_tokens_source,omitempty"` // whose prompts PromptTokens measured ("the pilot's", "the calibration's")
	Rate                *Throughput      `json:"rate,omitempty"`
	Seconds             float64          `json:"seconds,omitempty"` // the whole run on one machine
	MemorySource        string           `json:"memory_source,omitempty"`
	Shards              []ShardEstimate  `json:"shards"`
}

// PlanShards sizes the run cfg defines and its split into o.Shards shards
// (as `run --shard K/N` would run them, see rundir.ShardBatches), without loading a
// model: the item set is generated from the templates as `run` does. Per
// shard: batches, items, models, generated tokens (at most items × max
// tokens; expected items × o.TokensPerItem) and, given o.Rate, the expected
// generation wall time = expected tokens / tokens per second. Model loading,
// the prompt and the DDC classifier are not counted (a rate measured on a
// previous run includes the prompt's prefill). With no model and
// o.NoModel, the items of one model are sized and no memory is estimated.
// Errors: templates that do not load, a model file that cannot be read, or
// (probe.OptionError) more shards than batches. PlanRun calls it with the power
// analysis of the same run.
func PlanShards(cfg rundir.Config, o ShardPlanOptions) (*ShardPlan, error) {
	set, _, err := countedSet(cfg)
	if err != nil {
		return nil, err
	}
	return planShards(cfg, set, o)
}

// planShards is PlanShards on the generated set.
func planShards(cfg rundir.Config, set *templates.Set, o ShardPlanOptions) (*ShardPlan, error) {
	if o.Shards == 0 {
		o.Shards = 1
	}
	if o.Shards < 1 {
		return nil, probe.OptionErrorf("--shards must be at least 1, got %d", o.Shards)
	}
	if cfg.Instances < 1 || cfg.MaxTokens < 1 || (len(cfg.Models) == 0 && o.NoModel == "") {
		return nil, probe.OptionError{Msg: "plan: need at least one model, one instance and one token"}
	}
	cfg.Params.NSeq = max(cfg.Params.NSeq, 1)
	paths := cfg.Models
	if len(paths) == 0 {
		cfg.Models = []string{""} // one model to size, with no file
	}
	batches := probe.PlanBatches(cfg, set)
	if o.Shards > len(batches) {
		return nil, probe.OptionErrorf("--shards %d: the plan has only %d batch(es) of --batch %d, so at most %d shards", o.Shards, len(batches), cfg.Params.NSeq, len(batches))
	}
	items := 0
	for _, b := range batches {
		items += len(b.Items)
	}
	refused, leftOut := set.ExclusionCounts()
	p := &ShardPlan{Instances: len(set.Instances), Excluded: len(set.Excluded), RefusedDraws: refused, LeftOut: leftOut, Conditions: max(len(cfg.Conditions), 1), Items: items,
		Batch: cfg.Params.NSeq, Batches: len(batches), MaxTokens: cfg.MaxTokens,
		TokensPerItem: o.TokensPerItem, TokensPerItemSource: o.TokensPerItemSource, PromptTokensSource: o.PromptTokensSource}
	if len(paths) == 0 {
		p.ModelNote = o.NoModel
	}
	if p.TokensPerItem <= 0 {
		p.TokensPerItem = float64(cfg.MaxTokens)
		p.TokensPerItemSource = "--max-tokens, an upper bound: --from a pilot, or --model for a calibration, estimates it"
	}
	if o.Rate.TokensPerSecond > 0 {
		r := o.Rate
		p.Rate = &r
	}
	if err := sizeModels(p, paths, cfg, o.Memory); err != nil {
		return nil, err
	}
	est := func(items int) (int64, float64, float64, float64) {
		gen := float64(items) * p.TokensPerItem
		sec := 0.0
		if p.Rate != nil {
			sec = gen / p.Rate.TokensPerSecond
		}
		return int64(items) * int64(cfg.MaxTokens), gen, float64(items) * o.PromptTokensPerItem, sec
	}
	p.GenTokensMax, p.GenTokens, p.PromptTokens, p.Seconds = est(p.Items)
	for k := 1; k <= o.Shards; k++ {
		s := rundir.Shard{Index: k, Count: o.Shards}
		lo, hi := rundir.ShardBatches(s, len(batches))
		se := ShardEstimate{Shard: s.String(), FirstBatch: lo, Batches: hi - lo}
		for _, b := range batches[lo:hi] {
			se.Items += len(b.Items)
			if len(paths) == 0 {
				continue
			}
			if len(se.Models) == 0 || se.Models[len(se.Models)-1] != b.Model {
				se.Models = append(se.Models, b.Model)
				se.MemoryBytes = max(se.MemoryBytes, p.Models[b.Model].MemoryBytes)
			}
		}
		se.GenTokensMax, se.GenTokens, se.PromptTokens, se.Seconds = est(se.Items)
		p.Shards = append(p.Shards, se)
	}
	return p, nil
}

// sizeModels adds each model file's size to p and, when memory, the memory
// llama.cpp needs to run it (EstimateMemory).
func sizeModels(p *ShardPlan, paths []string, cfg rundir.Config, memory bool) error {
	for _, path := range paths {
		pm := ShardPlanModel{Path: path}
		if st, err := os.Stat(path); err == nil {
			pm.SizeBytes = st.Size()
		} else {
			return fmt.Errorf("model %s: %w", path, err)
		}
		f, err := gguf.ParseGGUFFile(path, gguf.SkipLargeMetadata())
		if err != nil {
			return fmt.Errorf("%s: corrupt or truncated GGUF: %v", path, err)
		}
		pm.CtxTrain = int(min(f.Architecture().MaximumContextLength, math.MaxInt32))
		if memory {
			pm.MemoryBytes = estimateMemoryOf(f, cfg.Params.NCtx, cfg.Params.NSeq, cfg.Params.NBatch, cfg.Params.GPULayers != 0)
			p.MemorySource = "gguf-parser-go EstimateLLaMACppRun: weights + KV cache (f16) + compute buffers, summed over devices"
		}
		p.Models = append(p.Models, pm)
	}
	return nil
}

// EstimateMemory estimates the memory (bytes, RAM and VRAM together) llama.cpp
// needs to run the GGUF model at path as `fragility run` loads it: a context
// of nctx tokens per sequence × nseq sequences, logical batch nbatch (0 =
// 512), every layer offloaded when gpu. It is gguf-parser-go's
// EstimateLLaMACppRun (github.com/gpustack/gguf-parser-go), summing over its
// devices the footprint, weights, KV cache and compute buffers. It reads the
// file's header only.
func EstimateMemory(path string, nctx, nseq, nbatch int, gpu bool) (uint64, error) {
	f, err := gguf.ParseGGUFFile(path, gguf.SkipLargeMetadata())
	if err != nil {
		return 0, fmt.Errorf("%s: corrupt or truncated GGUF: %v", path, err)
	}
	return estimateMemoryOf(f, nctx, nseq, nbatch, gpu), nil
}

// estimateMemoryOf is EstimateMemory on a parsed GGUF header.
func estimateMemoryOf(f *gguf.GGUFFile, nctx, nseq, nbatch int, gpu bool) uint64 {
	if nctx <= 0 {
		nctx = 2048
	}
	if nbatch <= 0 {
		nbatch = 512
	}
	opts := []gguf.GGUFRunEstimateOption{
		gguf.WithLLaMACppContextSize(int32(nctx * max(nseq, 1))),
		gguf.WithParallelSize(int32(max(nseq, 1))),
		gguf.WithLLaMACppLogicalBatchSize(int32(nbatch)),
		// llama.cpp uses n_ubatch = min(n_ubatch, n_batch); the parser
		// panics when the physical size exceeds the logical one.
		gguf.WithLLaMACppPhysicalBatchSize(int32(min(nbatch, 512))),
	}
	if !gpu {
		opts = append(opts, gguf.WithLLaMACppOffloadLayers(0))
	}
	e := f.EstimateLLaMACppRun(opts...)
	var total uint64
	for _, d := range e.Devices {
		total += uint64(d.Footprint) + uint64(d.Weight.Sum()) + uint64(d.KVCache.Sum()) + uint64(d.Computation.Sum())
	}
	return total
}

// CheckVocabularies reads the GGUF headers of the files (gguf-parser-go,
// the tokenizer's token count) and refuses, naming both files, when two
// vocabularies differ in size: their logits cannot be compared entry by
// entry. `fragility compare` calls it before generating anything.
func CheckVocabularies(paths []string) error {
	first, n0 := "", uint64(0)
	for _, p := range paths {
		f, err := gguf.ParseGGUFFile(p, gguf.SkipLargeMetadata())
		if err != nil {
			return fmt.Errorf("%s: corrupt or truncated GGUF: %v", p, err)
		}
		n := f.Tokenizer().TokensLength
		if first == "" {
			first, n0 = p, n
			continue
		}
		if n != n0 {
			return fmt.Errorf("%s: vocabulary of %d tokens, %s has %d: not comparable token by token", p, n, first, n0)
		}
	}
	return nil
}

// maxBenchJSON bounds the file BenchThroughput reads, in bytes: the JSON
// of fragility bench --json is a few KiB, so a model file or a device given
// as --bench is refused at once.
const maxBenchJSON = 16 << 20

// BenchThroughput reads the JSON of `fragility bench --json` and returns a
// generation rate for a run that decodes batch items together: (b), the
// harness's single-sequence generation rate in tokens/s, scaled by the
// measured batching speed-up (c) batched items/s ÷ one-at-a-time items/s
// when the bench batched as many items as the run will; without that, (b)
// alone, which understates a batched run's rate (the time is then an upper
// bound).
func BenchThroughput(path string, batch int) (Throughput, error) {
	data, err := readlimit.ReadFile(path, maxBenchJSON)
	if err != nil {
		return Throughput{}, err
	}
	var b bench.BenchResult
	if err := json.Unmarshal(data, &b); err != nil {
		msg, line := jsonerr.Describe(data, err)
		return Throughput{}, fmt.Errorf("%s:%d: not the JSON of fragility bench --json: %s", path, line, msg)
	}
	if b.OursTG.Mean <= 0 {
		return Throughput{}, fmt.Errorf("%s: no generation rate (b_ours_gen_tokens_per_s)", path)
	}
	t, _ := benchRate(&b, batch, path)
	return t, nil
}

// RunThroughput measures a finished run directory: generated tokens ÷ the
// manifest's generation_seconds (prefill included), and the mean generated
// and prompt tokens per item that was run (skipped items aside). With a
// budget > 0 (the planned --max-tokens) each item's generated tokens in
// the mean are capped at it, as that budget would cut them, and an answer
// the run's own, smaller budget cut counts as budget tokens (how far it
// would run is unknown: the mean is then an upper bound); the rate is the
// run's, uncapped.
func RunThroughput(dir string, budget int) (rate Throughput, tokensPerItem, promptPerItem float64, err error) {
	man, trials, err := probe.ReadRun(dir)
	if err != nil {
		return Throughput{}, 0, 0, err
	}
	return throughputOf(dir, man, trials, budget)
}

// throughputOf is RunThroughput on the run in dir already read.
func throughputOf(dir string, man *rundir.Manifest, trials []results.Trial, budget int) (rate Throughput, tokensPerItem, promptPerItem float64, err error) {
	var tok, capped, prompt, n int
	for i := range trials {
		t := &trials[i]
		if t.Skipped() {
			continue
		}
		tok += t.Tokens
		prompt += t.PromptTokens
		n++
		switch {
		case budget <= 0:
			capped += t.Tokens
		case t.StopReason == llm.StopMaxTokens && budget > man.Config.MaxTokens:
			capped += budget
		default:
			capped += min(t.Tokens, budget)
		}
	}
	if n == 0 || man.GenerationSeconds <= 0 {
		return Throughput{}, 0, 0, fmt.Errorf("%s: no generation to measure (%d items run, %.1f s)", dir, n, man.GenerationSeconds)
	}
	rate = Throughput{TokensPerSecond: float64(tok) / man.GenerationSeconds,
		Source: fmt.Sprintf("%s: %d tokens in %.1f s of generation at --batch %d", dir, tok, man.GenerationSeconds, man.Config.Params.NSeq)}
	return rate, float64(capped) / float64(n), float64(prompt) / float64(n), nil
}
