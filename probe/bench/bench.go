package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/templates"
)

// BenchConfig defines `fragility bench`.
type BenchConfig struct {
	Model  string
	Params llm.Params // NSeq is ignored: (a) and (b) use 1, (c) uses Batch
	// FirstThreads, when > 0, is the Threads of the first series of (a)
	// and (b) instead of Params.Threads ((c) keeps Params): fragility
	// bench without --threads leaves a core free of one-token decodes and
	// of the entropy passes there, and times (c) as fragility run decodes
	// by default.
	FirstThreads int
	PP, TG       int // prompt tokens, and generated tokens of (a) and of (b) in each repeat
	Reps         int // repeats of (a) and (b) after one warm-up
	Batch        int // sequences per llama_batch in (c)
	Items        int // probe items of the demo matrix timed in (c)
	Shots        int // few-shot exemplars of the items in (c)
	MaxTokens    int // output budget of the items in (c)
	Seed         int64
	// EmbedderOpenSec is the time the caller took to open the classifier
	// passed to Bench (loading the embedder); it counts in the DDC share.
	EmbedderOpenSec float64
}

// Rate is a mean and sample standard deviation over repeats.
type Rate struct {
	Mean float64   `json:"mean"`
	SD   float64   `json:"sd"`
	Runs []float64 `json:"runs"`
}

func newRate(xs []float64) Rate {
	r := Rate{Runs: xs}
	for _, x := range xs {
		r.Mean += x
	}
	r.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - r.Mean) * (x - r.Mean)
		}
		r.SD = math.Sqrt(ss / float64(len(xs)-1))
	}
	return r
}

// BenchResult is what `fragility bench` prints. Rates are per second.
type BenchResult struct {
	Model      string     `json:"model"`
	Threads    int        `json:"threads"`
	BuildFlags string     `json:"build_flags"`
	SystemInfo string     `json:"llama_system_info"`
	NVocab     int        `json:"n_vocab"`
	PP         int        `json:"pp"`
	TG         int        `json:"tg"`
	Reps       int        `json:"reps"`
	BarePP     Rate       `json:"a_bare_prompt_tokens_per_s"`
	BareTG     Rate       `json:"a_bare_gen_tokens_per_s"`
	OursTG     Rate       `json:"b_ours_gen_tokens_per_s"`
	EntropyMs  float64    `json:"b_entropy_ms_per_token"`
	RatioBA    float64    `json:"ratio_b_over_a"`
	RatioBACI  [2]float64 `json:"ratio_b_over_a_ci95"` // 95% interval of RatioBA over the repeats (see ratioInterval); 0, 0 with one repeat
	Split      TokenSplit `json:"ms_per_token_split"`  // where a token's time goes in (a) and (b) (see BenchDecodeSeries.Split)
	// Pool and PassThreads are how (b) computed its entropy passes (see
	// BenchDecodeSeries).
	Pool        int     `json:"pool"`
	PassThreads int     `json:"pass_threads"`
	Items       int     `json:"c_items"`
	Batch       int     `json:"c_batch"`
	SingleIPS   float64 `json:"c_single_items_per_s"`
	BatchedIPS  float64 `json:"c_batched_items_per_s"`
	RatioCB     float64 `json:"ratio_c_over_b"`
	// The DDC share: the batched items of (c) run again with the DDC
	// classifier working beside generation, as in `fragility run`.
	BatchedDDCSec float64 `json:"ddc_batched_run_seconds,omitempty"`      // wall time of that run, including the wait for the last classification
	BatchedSec    float64 `json:"c_batched_seconds"`                      // wall time of the batched run without DDC
	EmbedOpenSec  float64 `json:"ddc_embedder_open_seconds,omitempty"`    // loading the embedder, before the run
	DDCWorkSec    float64 `json:"ddc_classifier_seconds,omitempty"`       // the classifier's own working time (beside generation)
	DDCWaitSec    float64 `json:"ddc_wait_seconds,omitempty"`             // time the run waited for classifications
	DDCShare      float64 `json:"ddc_share_of_run_wall_time,omitempty"`   // (open + with DDC − without) / (open + with DDC)
	DDCSerial     float64 `json:"ddc_serial_share_of_run_time,omitempty"` // classifier time / (classifier time + batched run), were it not overlapped
	// The answer-scoring pass (AnswerScoreVersion) after each batch of the
	// first batched run of (c): its wall time, the items it scored, and
	// its share of that run's generation time (AnswerScoreSec /
	// BatchedSec; BatchedSec does not include it).
	AnswerScoreSec   float64 `json:"c_answer_score_seconds"`
	AnswerScored     int     `json:"c_answer_scored_items"`
	AnswerScoreShare float64 `json:"c_answer_score_share_of_generation"`
	// AnswerScoreShareCI is the 95% interval of AnswerScoreShare with each
	// batch a cluster (ratioInterval over the batches' scoring and
	// generation seconds); 0, 0 with fewer than 2 batches.
	AnswerScoreShareCI [2]float64 `json:"c_answer_score_share_ci95"`
	// AnswerFirstSec is, of AnswerScoreSec, the llama_decode and pass
	// time of the answer-first forcings (step 4 of AnswerScoreVersion:
	// ForceAfter's share of each decode call they took part in), over the
	// AnswerFirst items it scored; AnswerFirstShare is AnswerFirstSec /
	// BatchedSec.
	AnswerFirstSec   float64 `json:"c_answer_first_seconds"`
	AnswerFirst      int     `json:"c_answer_first_items"`
	AnswerFirstShare float64 `json:"c_answer_first_share_of_generation"`
	// Busy is (a) and (b) again with every core decoding (Threads =
	// runtime.NumCPU()), run's default: the cost of exact entropy when no
	// core is spare.
	// Nil when Threads already is every core.
	Busy *BenchDecodeSeries `json:"busy,omitempty"`
}

// BenchDecodeSeries is one series of (a) and (b) at a thread count: the
// generation rates of both (tokens/s), the entropy pass per token (ms) and
// b/a over all repeats.
type BenchDecodeSeries struct {
	Threads int `json:"threads"`
	Pool    int `json:"pool"` // workers of the pass pool beside the decode (0: none)
	// PassThreads is the threads that computed each entropy pass between
	// two decodes (llm.Model.EntropyPassThreads; 0 with a pass pool).
	PassThreads int        `json:"pass_threads"`
	BareTG      Rate       `json:"a_bare_gen_tokens_per_s"`
	OursTG      Rate       `json:"b_ours_gen_tokens_per_s"`
	EntropyMs   float64    `json:"b_entropy_ms_per_token"`
	RatioBA     float64    `json:"ratio_b_over_a"`
	RatioBACI   [2]float64 `json:"ratio_b_over_a_ci95"` // see BenchResult.RatioBACI
	// Split is where the time of a token goes in (a) and in (b), in ms per
	// token over all repeats (llm.InterleavedTiming's parts): what (b)
	// costs beyond (a) is (BDecodeMs − ADecodeMs) + BStepMs + BWaitMs.
	Split TokenSplit `json:"ms_per_token_split"`
}

// TokenSplit is the time of one generated token in (a) and (b), in ms,
// split by where it is spent (see llm.InterleavedTiming).
type TokenSplit struct {
	ADecodeMs float64 `json:"a_decode"` // llama_decode in the bare blocks
	BDecodeMs float64 `json:"b_decode"` // llama_decode in the generation blocks
	BStepMs   float64 `json:"b_step"`   // the per-token work on the generating goroutine between two decodes
	BWaitMs   float64 `json:"b_wait"`   // waiting for the pass pool at a block's end
}

// Bench measures, in one run and as llama-bench does (a warm-up, then Reps
// repeats, mean ± sd): (a) bare llama_decode calls with no logits read and no
// entropy (llm.BenchDecode for the prompt rate), (b) the per-token work of
// Generate (the full-vocabulary entropy pass and the record) on top of the
// same decodes, with (a) and (b) in alternating blocks of one sequence
// (llm.BenchInterleaved) so that machine drift cancels in b/a, and (c) the
// first Items items of the demo matrix (builtin templates × base/symbolic/noop
// × 2 instances, in the seeded order) decoded one at a time and Batch at a
// time. classify, when not nil, runs beside a second batched pass over the
// same items as in `fragility run` (a background goroutine, one question at a
// time); the DDC share is the wall time it adds, embedder loading included
// (cfg.EmbedderOpenSec), over the wall time of that run. When the
// parameters' Threads leave a core free, (a) and (b) run a second time
// with every core decoding (BenchResult.Busy). TG must be a multiple of
// 2×llm.BenchBlock.
func Bench(ctx context.Context, cfg BenchConfig, classify probe.Classifier, logf func(string, ...any)) (*BenchResult, error) {
	if cfg.PP < 1 || cfg.TG < 1 || cfg.Reps < 1 || cfg.Batch < 1 || cfg.Items < 1 {
		return nil, fmt.Errorf("bench: pp, tg, reps, batch and items must be ≥ 1")
	}
	if cfg.TG%(2*llm.BenchBlock) != 0 {
		return nil, fmt.Errorf("bench: --tg %d is not a multiple of %d: (a) and (b) alternate in blocks of %d tokens, ABBA", cfg.TG, 2*llm.BenchBlock, llm.BenchBlock)
	}
	p := cfg.Params
	p.NSeq = 1
	if cfg.FirstThreads > 0 {
		p.Threads = cfg.FirstThreads
	}
	// The demo items of (c), with few-shot exemplars, need up to 2048
	// tokens; (a) and (b) need pp + 2·tg.
	cfg.Params.NCtx = max(cfg.Params.NCtx, 2048)
	p.NCtx = max(p.NCtx, 2048, cfg.PP+2*cfg.TG+8)
	m, err := llm.Load(cfg.Model, p)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	md := m.Metadata()
	res := &BenchResult{Model: cfg.Model, Threads: m.Params().Threads, BuildFlags: llm.BuildFlags, SystemInfo: llm.SystemInfo(),
		NVocab: md.NVocab, PP: cfg.PP, TG: cfg.TG, Reps: cfg.Reps, Items: cfg.Items, Batch: cfg.Batch}
	s, err := benchDecode(ctx, m, cfg, res, logf)
	if err != nil {
		return nil, err
	}
	res.BareTG, res.OursTG, res.EntropyMs, res.RatioBA, res.RatioBACI, res.Split = s.BareTG, s.OursTG, s.EntropyMs, s.RatioBA, s.RatioBACI, s.Split
	res.Pool, res.PassThreads = s.Pool, s.PassThreads
	if res.Busy, err = benchBusy(ctx, cfg, p, res.Threads, logf); err != nil {
		return nil, err
	}
	items, err := benchItems(ctx, m, cfg, res, logf)
	if items != nil {
		defer func() { _ = items.close() }()
	}
	if err != nil || classify == nil {
		return res, err
	}
	return res, benchDDC(cfg, classify, items, res, logf)
}

// benchRun is the batched run of (c), kept for the DDC share: its items'
// questions, the function that runs it again (seconds of generation) and
// the close of its model.
type benchRun struct {
	questions []string
	batched   func() (float64, error)
	close     func() error
}

// benchBusy runs (a) and (b) once more on a model loaded with every core
// decoding (p with Threads = runtime.NumCPU()), when threads, the thread
// count of the first series, leaves a core free; nil otherwise.
func benchBusy(ctx context.Context, cfg BenchConfig, p llm.Params, threads int, logf func(string, ...any)) (*BenchDecodeSeries, error) {
	all := runtime.NumCPU()
	if threads >= all || p.GPULayers != 0 && len(llm.GPUs()) > 0 {
		return nil, nil
	}
	p.Threads = all
	m, err := llm.Load(cfg.Model, p)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	logf("bench: (a) and (b) again with every core decoding (%d threads)", all)
	return benchDecode(ctx, m, cfg, nil, logf)
}

// benchItems measures (c): the demo items one at a time on m, then cfg.Batch
// at a time on a model loaded for that many sequences, with the
// answer-scoring pass of each batch timed apart on the first batched run.
// It returns the batched run, whose model the caller closes, for the DDC
// share.
func benchItems(ctx context.Context, m *llm.Model, cfg BenchConfig, res *BenchResult, logf func(string, ...any)) (*benchRun, error) {
	prompts, questions, expected, stop, err := benchPrompts(m, &cfg, res)
	if err != nil {
		return nil, err
	}
	iopt := llm.GenerateOptions{MaxTokens: cfg.MaxTokens, Stop: stop, KeepFirstLogits: true}
	// As fragility run does (DecodeKeepPrefix): the instruction and worked
	// examples are decoded once per model and kept.
	if iopt.KeepPrefix, err = probe.KeptPrefix(m, rundir.Config{Shots: cfg.Shots}, results.ConditionNone); err != nil {
		return nil, err
	}
	if cfg.FirstThreads > 0 && cfg.FirstThreads != m.Params().Threads {
		// m decodes at the first series' threads: (c) runs at Params'.
		sp := cfg.Params
		sp.NSeq = 1
		sm, err := llm.Load(cfg.Model, sp)
		if err != nil {
			return nil, err
		}
		defer sm.Close()
		m = sm
	}
	logf("bench: (c) %d demo items one at a time", cfg.Items)
	t0 := time.Now()
	for _, pr := range prompts {
		if _, err := m.Generate(ctx, pr, iopt); err != nil {
			return nil, err
		}
	}
	res.SingleIPS = float64(cfg.Items) / time.Since(t0).Seconds()
	bp := cfg.Params
	bp.NSeq = cfg.Batch
	bm, err := llm.Load(cfg.Model, bp)
	if err != nil {
		return nil, err
	}
	score := true // the first batched run also times the answer-scoring pass
	var genSecs, scoreSecs []float64
	run := &benchRun{questions: questions, close: bm.Close}
	run.batched = func() (float64, error) {
		var sec float64
		for i := 0; i < len(prompts); i += cfg.Batch {
			t0 := time.Now()
			hi := min(i+cfg.Batch, len(prompts))
			gens, err := bm.GenerateBatch(ctx, prompts[i:hi], iopt)
			if err != nil {
				return 0, err
			}
			dt := time.Since(t0).Seconds()
			sec += dt
			if score {
				before := res.AnswerScoreSec
				if err := benchAnswerScore(ctx, bm, gens, expected[i:hi], res); err != nil {
					return 0, err
				}
				genSecs, scoreSecs = append(genSecs, dt), append(scoreSecs, res.AnswerScoreSec-before)
			}
		}
		return sec, nil
	}
	logf("bench: (c) %d demo items, %d per batch, then the answer-scoring pass of each batch", cfg.Items, cfg.Batch)
	if res.BatchedSec, err = run.batched(); err != nil {
		return run, err
	}
	score = false
	res.AnswerScoreShare = res.AnswerScoreSec / res.BatchedSec
	if _, lo, hi, ok := ratioInterval(scoreSecs, genSecs); ok {
		res.AnswerScoreShareCI = [2]float64{lo, hi}
	}
	res.AnswerFirstShare = res.AnswerFirstSec / res.BatchedSec
	res.BatchedIPS = float64(cfg.Items) / res.BatchedSec
	res.RatioCB = res.BatchedIPS / res.SingleIPS
	return run, nil
}

// benchAnswerScore times the answer-scoring pass over a batch just
// generated (the fragility preset, as fragility run scores it).
func benchAnswerScore(ctx context.Context, m *llm.Model, gens []*llm.Generation, expected []string, res *BenchResult) error {
	jobs := make([]probe.AnswerJob, len(gens))
	for i, g := range gens {
		jobs[i] = probe.AnswerJob{Seq: i, Expected: expected[i], Ex: probe.Extract(g), After: true, First: true}
	}
	t0 := time.Now()
	trs, err := probe.ScoreAnswers(ctx, m, gens, jobs, probe.PromptFragility, "")
	if err != nil {
		return err
	}
	res.AnswerScoreSec += time.Since(t0).Seconds()
	for _, tr := range trs {
		if tr.After != nil {
			res.AnswerScored++
		}
		if tr.First != nil {
			res.AnswerFirst++
			res.AnswerFirstSec += tr.FirstSecs
		}
	}
	return nil
}

// benchDecode measures (a) bare decoding and (b) decoding with this
// project's per-token work on m, after a warm-up: the generation rates of
// both, cfg.Reps times, (a) and (b) in alternating blocks, and, when res is
// not nil, the prompt rate of (a) into res.BarePP.
func benchDecode(ctx context.Context, m *llm.Model, cfg BenchConfig, res *BenchResult, logf func(string, ...any)) (*BenchDecodeSeries, error) {
	logf("bench: warm-up")
	if _, err := m.BenchDecode(ctx, cfg.PP, 0); err != nil {
		return nil, err
	}
	if _, err := m.BenchInterleaved(ctx, cfg.PP, cfg.TG); err != nil {
		return nil, err
	}
	var bpp, btg, otg, bare, ours []float64
	var entSec float64
	var split TokenSplit
	for r := 0; r < cfg.Reps; r++ {
		logf("bench: repeat %d/%d: (a) prompt, then (a) and (b) in alternating blocks of %d tokens", r+1, cfg.Reps, llm.BenchBlock)
		t, err := m.BenchDecode(ctx, cfg.PP, 0)
		if err != nil {
			return nil, err
		}
		bpp = append(bpp, float64(t.PromptTokens)/t.PromptSec)
		it, err := m.BenchInterleaved(ctx, cfg.PP, cfg.TG)
		if err != nil {
			return nil, err
		}
		btg = append(btg, float64(it.Tokens)/it.BareSec)
		otg = append(otg, float64(it.Tokens)/it.OursSec)
		bare = append(bare, it.BareSec)
		ours = append(ours, it.OursSec)
		entSec += it.EntropySec
		split.ADecodeMs += it.BareDecodeSec
		split.BDecodeMs += it.OursDecodeSec
		split.BStepMs += it.OursStepSec
		split.BWaitMs += it.OursWaitSec
	}
	if res != nil {
		res.BarePP = newRate(bpp)
	}
	s := &BenchDecodeSeries{Threads: m.Params().Threads, Pool: m.EntropyPoolSize(), PassThreads: m.EntropyPassThreads(), BareTG: newRate(btg), OursTG: newRate(otg),
		EntropyMs: 1000 * entSec / float64(cfg.Reps*cfg.TG)}
	perTok := 1000 / float64(cfg.Reps*cfg.TG)
	s.Split = TokenSplit{ADecodeMs: split.ADecodeMs * perTok, BDecodeMs: split.BDecodeMs * perTok, BStepMs: split.BStepMs * perTok, BWaitMs: split.BWaitMs * perTok}
	s.RatioBA, s.RatioBACI[0], s.RatioBACI[1], _ = ratioInterval(bare, ours)
	return s, nil
}

// ratioInterval returns b/a over all repeats, Σ bare / Σ ours (the times of
// (a) and (b) in each repeat: (tokens / time of (b)) / (tokens / time of
// (a))), and its 95% interval, ratio ± t_{0.975, n−1}·SE with the
// linearised standard error of a ratio estimator over the n repeats,
//
//	SE² = n/(n−1) · Σ_r (bare_r − R·ours_r)² / (Σ_r ours_r)²
//
// (Cochran 1977, Sampling Techniques, 3rd ed., §6.4; stats.Ratio with each
// repeat one cluster, Influence.CR1, stats.ClusterT). A repeat's (a) and
// (b) share its sequence and its stretch of the machine's drift, so the
// pair is the unit. The answer-scoring share is the same estimator with
// each batch the unit (Σ scoring seconds / Σ generation seconds). ok is
// false (and the interval 0, 0) with fewer than 2 repeats.
func ratioInterval(bare, ours []float64) (r, lo, hi float64, ok bool) {
	x := stats.NewRatio(len(bare))
	copy(x.Num, bare)
	copy(x.Den, ours)
	r, _ = x.Value()
	inf, ok := x.Influence()
	if !ok {
		return r, 0, 0, false
	}
	se, g, ok := inf.CR1()
	if !ok {
		return r, 0, 0, false
	}
	lo, hi, ok = stats.ClusterT(r, se, g, 0.95)
	if !ok {
		return r, 0, 0, false
	}
	return r, lo, hi, true
}

// benchPrompts generates the demo items of (c) from the built-in templates
// (cfg.Items of them in run order, fewer if the set is smaller: then
// cfg.Items and res.Items are lowered) and returns their prompt tokens,
// questions, expected answers and the chat template's stop strings.
func benchPrompts(m *llm.Model, cfg *BenchConfig, res *BenchResult) (prompts [][]llm.Token, questions, expected, stop []string, err error) {
	ts, err := templates.Builtin()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	vs := []templates.Variant{templates.VariantBase, templates.VariantSymbolic, templates.VariantNoop}
	set, err := templates.Generate(ts, templates.Options{Variants: vs, Instances: 2, Seed: cfg.Seed})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	order := probe.Order(len(set.Instances), cfg.Seed)
	if cfg.Items > len(order) {
		cfg.Items = len(order)
		res.Items = cfg.Items
	}
	for _, k := range order[:cfg.Items] {
		msgs, err := probe.Messages(set.Instances[k].Question, cfg.Shots)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		r, err := m.RenderChat(msgs)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		stop = r.Stop
		toks, err := m.Tokenize(r.Text, true, true)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		prompts = append(prompts, toks)
		questions = append(questions, set.Instances[k].Question)
		expected = append(expected, set.Instances[k].Answer)
	}
	return prompts, questions, expected, stop, nil
}

// benchDDC times the batched demo items again with the DDC classifier
// reading their questions beside generation, and records its share.
func benchDDC(cfg BenchConfig, classify probe.Classifier, run *benchRun, res *BenchResult, logf func(string, ...any)) error {
	questions := run.questions
	// The class vectors are read (or, the first time, computed) by
	// the first classification: done here, outside the timing.
	if _, err := classify(questions[:1]); err != nil {
		return err
	}
	logf("bench: (c) %d demo items, %d per batch, with the DDC classifier beside generation", cfg.Items, cfg.Batch)
	t0 := time.Now()
	ddc := probe.NewDDCStore(classify, questions)
	if _, err := run.batched(); err != nil {
		return err
	}
	for _, q := range questions {
		if _, _, err := ddc.Get(q); err != nil {
			return err
		}
	}
	res.BatchedDDCSec = time.Since(t0).Seconds()
	res.EmbedOpenSec = cfg.EmbedderOpenSec
	res.DDCWorkSec, res.DDCWaitSec = ddc.Seconds()
	res.DDCShare = (res.EmbedOpenSec + res.BatchedDDCSec - res.BatchedSec) / (res.EmbedOpenSec + res.BatchedDDCSec)
	res.DDCSerial = res.DDCWorkSec / (res.DDCWorkSec + res.BatchedSec)
	return nil
}
