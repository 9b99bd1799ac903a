package llm

/*
#include <stdlib.h>
#include "llama.h"
#include "helpers.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Stop reasons of a Generation.
const (
	StopEOS         = "eos"          // the model emitted an end-of-generation token
	StopString      = "stop"         // a stop string appeared in the text
	StopMaxTokens   = "max_tokens"   // the output budget was reached
	StopContextFull = "context_full" // the sequence filled its context
	// StopInjectBudget: an injected text would have passed
	// GenerateOptions.MaxInjected.
	StopInjectBudget = "inject_budget"
)

// GenerateOptions are the decoding settings of one generation. They are
// recorded in manifests.
type GenerateOptions struct {
	MaxTokens int      `json:"max_tokens"` // output budget in tokens; must be > 0
	Stop      []string `json:"stop"`       // generation ends when the text contains one; the text is cut before it
	// Temperature 0 is greedy decoding (argmax, lowest token id among ties).
	// Above 0, tokens are drawn from softmax(logits / Temperature) over the
	// full vocabulary with a PCG generator seeded from Seed and the sequence
	// index (math/rand/v2), so a draw is reproducible.
	Temperature float64 `json:"temperature"`
	Seed        uint64  `json:"seed"`
	// IgnoreEOS keeps generating past end-of-generation tokens, for timing
	// runs that need exactly MaxTokens tokens (fragility bench).
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
	// Inject, when set, is called after every generated token that did not
	// end the sequence, with the sequence's index in the batch and its text
	// so far. A non-empty return is tokenized (no special tokens added or
	// parsed) and fed to the sequence as if the model had written it: its
	// tokens are appended to Generation.Tokens with Injected set and no
	// entropy, their pieces to the text, and decoding continues after
	// them. It is how a tool's result (a calculator's) enters a generation.
	// Injected tokens do not count against MaxTokens; at most MaxInjected
	// of them enter a sequence, and a result that would pass that bound or
	// the context ends the sequence (StopInjectBudget, StopContextFull).
	// Inject runs on the generating goroutine and must not call the Model.
	Inject func(seq int, text string) string `json:"-"`
	// MaxInjected bounds the injected tokens of one sequence; 0 means
	// DefaultMaxInjected when Inject is set.
	MaxInjected int `json:"max_injected_tokens,omitempty"`
	// OnStep, when set, is called after every decoding step of GenerateBatch
	// (the first one right after the prompts' prefill) with the number of
	// tokens generated so far by all sequences of the batch together. It runs
	// on the generating goroutine between two llama_decode calls, so it must
	// return quickly (a progress display). It changes no result.
	OnStep func(tokens int) `json:"-"`
	// KeepPrefix, when set, is a prefix of every prompt (the instruction and
	// worked examples a run puts before every problem) that the model
	// decodes once and keeps: its KV cells stay in sequence 0 after the
	// call, and a later call with the same KeepPrefix reuses them instead of
	// decoding it again; they are copied to the batch's other sequences, and
	// each prompt decodes only what follows the prefix. The logits are the
	// same, bit for bit, whether the prefix was decoded in this call or kept
	// from an earlier one (tested): the kept cells are what that decode
	// wrote, and the cells after them are freed and masked out. It is
	// ignored for a call (which then starts from a cleared KV state, as
	// without it) when it is shorter than MinSharedPrefix or some prompt does
	// not start with it or is not longer than it. How a prompt is split into
	// decode calls can change its logits (llama.cpp is not invariant to it),
	// so a run records whether it keeps a prefix.
	KeepPrefix []Token `json:"-"`
	// EntropyKernel selects the kernel of the entropy passes: "" (the
	// default) is EntropyKernel, the newest; a run recorded with an older
	// one is replayed with it (fragility verify). It changes the last bits
	// of the entropy fields, never a token. Unknown names are an error.
	EntropyKernel string `json:"entropy_kernel,omitempty"`
	// KeepFirstLogits keeps a copy of each sequence's first next-token
	// logits (those its prompt's prefill gave), so that ForceAfter can
	// score a forcing that keeps none of the generated tokens exactly as
	// a plain forward pass does. It costs 4·n_vocab bytes per sequence and
	// changes no result.
	KeepFirstLogits bool `json:"-"`
}

// DefaultMaxInjected is the injected-token bound of a sequence when
// GenerateOptions.MaxInjected is 0.
const DefaultMaxInjected = 256

// TokenRecord is what is recorded for each generated token. Entropy is of the
// full-vocabulary distribution the token was chosen from.
type TokenRecord struct {
	ID          Token   `json:"id"`
	Piece       string  `json:"piece"`
	EntropyBits float64 `json:"entropy_bits"` // H of softmax(raw logits) in bits
	LogProb     float64 `json:"logprob"`      // natural log-probability of the chosen token
	Prob        float64 `json:"prob"`         // probability of the chosen token
	TopProb     float64 `json:"top_prob"`     // probability of the most likely token
	// Injected marks a token fed by GenerateOptions.Inject, not chosen by
	// the model: its entropy fields are zero and belong to no statistic.
	Injected bool `json:"injected,omitempty"`
}

// Generation is the result of one prompt.
type Generation struct {
	PromptTokens int           `json:"prompt_tokens"`
	SharedPrefix int           `json:"shared_prefix_tokens"` // prompt tokens decoded once for the whole batch, or kept from an earlier call (0: none)
	Tokens       []TokenRecord `json:"tokens"`               // generated and injected tokens in sequence order (Injected marks the latter)
	Text         string        `json:"text"`                 // concatenated pieces, end-of-generation token excluded, cut at a stop string
	StopReason   string        `json:"stop_reason"`
	StopString   string        `json:"stop_string,omitempty"` // the stop string that ended generation (StopReason StopString)
	PrefillSec   float64       `json:"prefill_seconds"`
	DecodeSec    float64       `json:"decode_seconds"` // llama_decode time of the generated tokens
	EntropySec   float64       `json:"entropy_seconds"`
	// GenWallSec is the wall time from the end of this batch's last prefill
	// to the end of generation: every decode after the prompts and every
	// per-token pass (entropy, record, stop check) of all sequences.
	GenWallSec    float64   `json:"gen_wall_seconds"`
	entSec        []float64 // per-token entropy pass time
	stopped       bool
	pos           int
	rng           *rand.Rand
	lastBatchSlot int
	seq           int // index in the batch
	fed           int // tokens of Tokens already decoded into the sequence
	generated     int // tokens of Tokens chosen by the model
	lastPrompt    Token
	first         []float32 // the prefill's next-token logits (GenerateOptions.KeepFirstLogits)
}

// Generated returns the number of tokens the model chose (Tokens less the
// injected ones).
func (g *Generation) Generated() int {
	n := 0
	for i := range g.Tokens {
		if !g.Tokens[i].Injected {
			n++
		}
	}
	return n
}

// PromptTooLongError is returned when a prompt does not fit in the context.
type PromptTooLongError struct {
	Tokens, NCtx int
}

func (e *PromptTooLongError) Error() string {
	return fmt.Sprintf("prompt of %d tokens does not fit in the context of %d tokens (raise --n-ctx)", e.Tokens, e.NCtx)
}

// ErrAborted is returned (wrapped) when the context was cancelled.
var ErrAborted = errors.New("generation aborted")

// Done reports whether the generation finished (StopReason is set). After an
// interrupted GenerateBatch, the finished generations are complete and equal
// to those of an uninterrupted call; the others are partial.
func (g *Generation) Done() bool { return g.stopped }

// Generate runs one prompt (token ids, e.g. from Tokenize of a RenderChat
// result) in a fresh KV state and returns the generated tokens with their
// per-token records. Errors: an empty prompt, a prompt longer than n_ctx
// (*PromptTooLongError), a failed llama_decode, a cancelled ctx (ErrAborted).
func (m *Model) Generate(ctx context.Context, prompt []Token, opt GenerateOptions) (*Generation, error) {
	gs, err := m.GenerateBatch(ctx, [][]Token{prompt}, opt)
	if err != nil {
		return nil, err
	}
	return gs[0], nil
}

// GenerateBatch runs up to Params().NSeq prompts together: each prompt is its
// own sequence (seq_id = its index) in a KV state cleared before the call
// (but for a kept prefix, GenerateOptions.KeepPrefix), its prompt is
// prefilled on its own after the prefix its batch shares, and then one
// llama_batch holds the next
// token of every unfinished sequence at each step. No sequence attends to
// another. Results are in prompt order. llama.cpp is not batch-invariant: the
// same prompt can give different logits alone and in a batch, so the batch
// composition is part of what a manifest must record.
//
// When ctx is cancelled during generation (after every prefill), the error
// wraps ErrAborted and the results are returned with it: the generations for
// which Done is true finished before the interruption and are exactly what an
// uninterrupted call gives (a sequence's steps do not depend on when the
// others stop); the others are cut short. Any other error returns nil results.
func (m *Model) GenerateBatch(ctx context.Context, prompts [][]Token, opt GenerateOptions) (_ []*Generation, err error) {
	m.last = nil
	defer func() {
		if err != nil {
			m.kept = nil // the KV state after a failed or aborted decode is not relied on
		}
	}()
	if err := m.checkBatch(prompts, opt); err != nil {
		return nil, err
	}
	gens, err := m.prefillBatch(ctx, prompts, opt)
	if err != nil {
		return nil, err
	}
	generated := len(prompts) // each prompt's first token, chosen after its prefill
	if opt.OnStep != nil {
		opt.OnStep(generated)
	}
	tGen := time.Now()
	defer func() {
		m.passes.Wait() // never leave a pass writing into a result
		w := time.Since(tGen).Seconds()
		for _, g := range gens {
			g.GenWallSec = w
			g.EntropySec = 0
			for _, x := range g.entSec {
				g.EntropySec += x
			}
		}
	}()
	for {
		n := m.fillBatch(gens)
		if n == 0 {
			break
		}
		m.batch.n_tokens = C.int32_t(n)
		t0 := time.Now()
		if err := m.decode(ctx); err != nil {
			err = fmt.Errorf("generate: %w", err)
			if errors.Is(err, ErrAborted) {
				m.passes.Wait()
				return gens, err
			}
			return nil, err
		}
		dt := time.Since(t0).Seconds() / float64(n)
		for _, g := range gens {
			if g.stopped {
				continue
			}
			g.DecodeSec += dt
			if g.fed < len(g.Tokens) {
				continue // an injected text is still being fed: nothing to choose yet
			}
			if err := m.step(g, g.lastBatchSlot, opt); err != nil {
				return nil, err
			}
			generated++
		}
		if opt.OnStep != nil {
			opt.OnStep(generated)
		}
	}
	m.last = gens
	return gens, nil
}

// checkBatch refuses, with an error naming the prompt and token, a batch
// GenerateBatch cannot run: a closed model, no prompts or more than the
// context's sequences, a non-positive token budget, an unknown entropy
// kernel, an empty prompt, one that fills the context, or a token outside
// the vocabulary.
func (m *Model) checkBatch(prompts [][]Token, opt GenerateOptions) error {
	if m.ctx == nil {
		return errors.New("generate: model is closed")
	}
	if len(prompts) == 0 || len(prompts) > m.params.NSeq {
		return fmt.Errorf("generate: %d prompts for a context of %d sequences", len(prompts), m.params.NSeq)
	}
	if opt.MaxTokens <= 0 {
		return fmt.Errorf("generate: max tokens must be > 0, got %d", opt.MaxTokens)
	}
	if err := CheckEntropyKernel(opt.EntropyKernel); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	for i, p := range prompts {
		if len(p) == 0 {
			return fmt.Errorf("generate: prompt %d is empty", i)
		}
		if len(p) >= m.params.NCtx {
			return &PromptTooLongError{Tokens: len(p), NCtx: m.params.NCtx}
		}
		for j, t := range p {
			if t < 0 || int(t) >= m.meta.NVocab {
				return fmt.Errorf("generate: prompt %d token %d is %d, outside the vocabulary [0,%d)", i, j, t, m.meta.NVocab)
			}
		}
	}
	return nil
}

// prefillBatch readies the KV state (startBatch), prefills every prompt as
// its own sequence and chooses each one's first token from the logits of
// its last prompt token, read before the next prompt's prefill overwrites
// them. It returns one Generation per prompt, in prompt order.
func (m *Model) prefillBatch(ctx context.Context, prompts [][]Token, opt GenerateOptions) ([]*Generation, error) {
	shared, sharedSec, err := m.startBatch(ctx, prompts, opt.KeepPrefix)
	if err != nil {
		return nil, err
	}
	gens := make([]*Generation, len(prompts))
	for s, p := range prompts {
		g := &Generation{PromptTokens: len(p), SharedPrefix: shared, Tokens: make([]TokenRecord, 0, opt.MaxTokens+maxInjected(opt)), entSec: make([]float64, 0, opt.MaxTokens), seq: s}
		if opt.Temperature > 0 {
			g.rng = rand.New(rand.NewPCG(opt.Seed, uint64(s)))
		}
		g.lastPrompt = p[len(p)-1]
		gens[s] = g
		t0 := time.Now()
		if err := m.prefill(ctx, p[shared:], shared, s, true); err != nil {
			m.passes.Wait() // the earlier prompts' first passes
			return nil, fmt.Errorf("generate: prefill of prompt %d: %w", s, err)
		}
		g.PrefillSec = time.Since(t0).Seconds() + sharedSec
		g.pos = len(p)
		if err := m.step(g, -1, opt); err != nil {
			m.passes.Wait()
			return nil, err
		}
	}
	return gens, nil
}

// fillBatch puts the next token of every unfinished generation into
// m.batch (the last chosen one, or the next of an injected text, fed one
// per step) and returns how many it put; 0 when every generation stopped.
func (m *Model) fillBatch(gens []*Generation) int {
	n := 0
	for s, g := range gens {
		if g.stopped {
			continue
		}
		next := g.Tokens[g.fed].ID
		g.fed++
		C.fragility_batch_set(&m.batch, C.int(n), C.llama_token(next), C.llama_pos(g.pos), C.llama_seq_id(s), 1)
		g.lastBatchSlot = n
		g.pos++
		n++
	}
	return n
}

// MinSharedPrefix is the shortest common prefix, in tokens, that
// GenerateBatch decodes once for all sequences of a batch.
const MinSharedPrefix = 16

// startBatch readies the KV state for a batch of prompts and returns how
// many leading tokens of every prompt are already decoded into its sequence
// and the seconds that took per prompt. With a usable keep (see
// GenerateOptions.KeepPrefix) that is len(keep): kept cells are reused, else
// the prefix is decoded from a cleared state and kept. Without one the state
// is cleared, and a prefix common to a batch of several prompts (at least
// MinSharedPrefix tokens) is decoded once. The shared cells are copied from
// sequence 0 to the others (llama_memory_seq_cp).
func (m *Model) startBatch(ctx context.Context, prompts [][]Token, keep []Token) (int, float64, error) {
	t0 := time.Now()
	mem := C.llama_get_memory(m.ctx)
	shared := 0
	switch {
	case keepUsable(keep, prompts) && slices.Equal(m.kept, keep) && m.dropAfter(len(keep)):
		shared = len(keep)
	case keepUsable(keep, prompts):
		m.clearMemory()
		if err := m.prefill(ctx, keep, 0, 0, false); err != nil {
			return 0, 0, fmt.Errorf("generate: prefill of the kept prefix: %w", err)
		}
		m.kept = slices.Clone(keep)
		shared = len(keep)
	default:
		m.clearMemory()
		if len(prompts) > 1 {
			if shared = commonPrefix(prompts); shared < MinSharedPrefix {
				shared = 0
			}
		}
		if shared > 0 {
			if err := m.prefill(ctx, prompts[0][:shared], 0, 0, false); err != nil {
				return 0, 0, fmt.Errorf("generate: prefill of the shared prefix: %w", err)
			}
		}
	}
	if shared > 0 {
		for s := 1; s < len(prompts); s++ {
			C.llama_memory_seq_cp(mem, 0, C.llama_seq_id(s), -1, -1)
		}
	}
	return shared, time.Since(t0).Seconds() / float64(len(prompts)), nil
}

// keepUsable reports whether keep can be kept for this batch: at least
// MinSharedPrefix tokens, and a proper prefix of every prompt.
func keepUsable(keep []Token, prompts [][]Token) bool {
	if len(keep) < MinSharedPrefix {
		return false
	}
	for _, p := range prompts {
		if len(p) <= len(keep) || !slices.Equal(p[:len(keep)], keep) {
			return false
		}
	}
	return true
}

// dropAfter frees every KV cell but the first n positions of sequence 0
// (the kept prefix), and every cell of the other sequences. It returns false
// when the memory cannot drop part of a sequence (recurrent models); the
// caller then decodes the prefix again from a cleared state.
func (m *Model) dropAfter(n int) bool {
	mem := C.llama_get_memory(m.ctx)
	if !C.llama_memory_seq_rm(mem, 0, C.llama_pos(n), -1) {
		return false
	}
	for s := 1; s < m.params.NSeq; s++ {
		C.llama_memory_seq_rm(mem, C.llama_seq_id(s), -1, -1)
	}
	return true
}

// clearMemory clears the KV state (cells and data) and forgets a kept
// prefix.
func (m *Model) clearMemory() {
	C.llama_memory_clear(C.llama_get_memory(m.ctx), true)
	m.kept, m.last = nil, nil
}

// commonPrefix returns the length of the longest prefix shared by every
// prompt, leaving at least one token of each prompt to decode on its own.
func commonPrefix(prompts [][]Token) int {
	n := len(prompts[0]) - 1
	for _, p := range prompts[1:] {
		n = min(n, len(p)-1)
		for i := 0; i < n; i++ {
			if p[i] != prompts[0][i] {
				n = i
				break
			}
		}
	}
	return max(n, 0)
}

// prefill decodes tokens at positions start.. into sequence seq, in chunks of
// n_batch; with logits it asks for the last token's logits.
func (m *Model) prefill(ctx context.Context, tokens []Token, start, seq int, logits bool) error {
	for lo := 0; lo < len(tokens); lo += m.params.NBatch {
		hi := min(lo+m.params.NBatch, len(tokens))
		for i := lo; i < hi; i++ {
			out := C.int8_t(0)
			if logits && i == len(tokens)-1 {
				out = 1
			}
			C.fragility_batch_set(&m.batch, C.int(i-lo), C.llama_token(tokens[i]), C.llama_pos(start+i), C.llama_seq_id(seq), out)
		}
		m.batch.n_tokens = C.int32_t(hi - lo)
		if err := m.decode(ctx); err != nil {
			return err
		}
	}
	return nil
}

// step reads the logits at batch slot i (-1: the last output), chooses the
// token and decides whether g stops. For greedy decoding only the argmax is
// needed before the next llama_decode, so the entropy pass is queued for the
// model's pass pool (see EntropyPool, queuePass), which computes it while
// the next decode runs; m.passes collects it. Temperature
// sampling needs the distribution first, and with the pool off (the default
// on the CPU) the pass runs here too, on the context's thread pool when it
// has one (entropyInline). Either way the numbers are the same: a pass is
// deterministic and each one writes only its own record.
func (m *Model) step(g *Generation, i int, opt GenerateOptions) error {
	ptr := C.llama_get_logits_ith(m.ctx, C.int32_t(i))
	if ptr == nil {
		return fmt.Errorf("generate: llama.cpp returned no logits for batch slot %d", i)
	}
	logits := unsafe.Slice((*float32)(unsafe.Pointer(ptr)), m.meta.NVocab)
	k := len(g.Tokens)
	if k == 0 && opt.KeepFirstLogits {
		g.first = slices.Clone(logits)
	}
	var rec TokenRecord
	switch {
	case opt.Temperature > 0 || m.passJobs == nil:
		t0 := time.Now()
		d, err := m.entropyInline(opt.EntropyKernel, logits)
		if err != nil {
			return fmt.Errorf("generate: token %d: %w", k, err)
		}
		g.entSec = append(g.entSec, time.Since(t0).Seconds())
		if opt.Temperature > 0 {
			rec.ID = sample(logits, d.Max, opt.Temperature, g.rng)
		} else {
			rec.ID = d.ArgMax
		}
		fillRecord(&rec, d, logits[rec.ID])
	default:
		j, err := m.queuePass(logits, opt.EntropyKernel)
		if err != nil {
			return fmt.Errorf("generate: token %d: %w", k, err)
		}
		rec.ID = j.id
		g.entSec = append(g.entSec, 0)
		j.rec, j.sec = &g.Tokens[:k+1][k], &g.entSec[len(g.entSec)-1]
		m.passes.Add(1)
		if j.inPlace {
			C.fragility_pass_guard_add(m.guard, 1)
		}
		m.passJobs <- j
	}
	eog := m.IsEndOfGeneration(rec.ID) && !opt.IgnoreEOS
	if !eog {
		rec.Piece = m.Piece(rec.ID)
	}
	g.Tokens = g.Tokens[:k+1]
	g.generated++
	// Only ID and Piece are written here; the pass goroutine writes the
	// entropy fields of the same element, which does not move: g.Tokens has
	// capacity MaxTokens from the start.
	g.Tokens[k].ID, g.Tokens[k].Piece = rec.ID, rec.Piece
	if opt.Temperature > 0 || m.passJobs == nil {
		g.Tokens[k] = rec
	}
	switch {
	case eog:
		g.stopped, g.StopReason = true, StopEOS
		return nil
	}
	g.Text += rec.Piece
	for _, s := range opt.Stop {
		if s == "" {
			continue
		}
		if k := strings.Index(g.Text, s); k >= 0 {
			g.Text = g.Text[:k]
			g.stopped, g.StopReason, g.StopString = true, StopString, s
			return nil
		}
	}
	switch {
	case g.generated >= opt.MaxTokens:
		g.stopped, g.StopReason = true, StopMaxTokens
	case g.pos+1 >= m.params.NCtx:
		g.stopped, g.StopReason = true, StopContextFull
	}
	if !g.stopped && opt.Inject != nil {
		return m.inject(g, opt)
	}
	return nil
}

// maxInjected is the injected-token bound of opt (0 without Inject).
func maxInjected(opt GenerateOptions) int {
	switch {
	case opt.Inject == nil:
		return 0
	case opt.MaxInjected > 0:
		return opt.MaxInjected
	}
	return DefaultMaxInjected
}

// inject asks opt.Inject for a text to feed after g's last chosen token and
// appends its tokens. They stay within the capacity g.Tokens was made with
// (the entropy pass of the chosen token writes into that array while this
// runs, so it must not move).
func (m *Model) inject(g *Generation, opt GenerateOptions) error {
	text := opt.Inject(g.seq, g.Text)
	if text == "" {
		return nil
	}
	toks, err := m.Tokenize(text, false, false)
	if err != nil {
		return fmt.Errorf("generate: injected text %q: %w", text, err)
	}
	switch {
	case len(toks) == 0:
		return nil
	case len(g.Tokens)+len(toks) > cap(g.Tokens):
		g.stopped, g.StopReason = true, StopInjectBudget
		return nil
	case g.pos+len(toks)+1 >= m.params.NCtx:
		g.stopped, g.StopReason = true, StopContextFull
		return nil
	}
	for _, t := range toks {
		p := m.Piece(t)
		g.Tokens = append(g.Tokens, TokenRecord{ID: t, Piece: p, Injected: true})
		g.Text += p
	}
	return nil
}

// fillRecord sets the entropy fields of rec from the distribution d and the
// raw logit of the chosen token.
func fillRecord(rec *TokenRecord, d Dist, chosen float32) {
	lp := d.LogProb(chosen)
	rec.EntropyBits, rec.LogProb, rec.Prob, rec.TopProb = d.EntropyBits, lp, math.Exp(lp), d.TopProb()
}

// passJob is one entropy pass for the pass pool: the row of logits (in
// place or a copy, see queuePass), their largest value and the chosen token
// (its lowest index), the kernel, the record to fill and where to put the
// pass's duration.
type passJob struct {
	buf     []float32
	inPlace bool // buf is the row in llama.cpp's output buffer, not a copy
	max     float32
	id      Token
	kernel  string
	rec     *TokenRecord
	sec     *float64
}

// EntropyPool is the number of goroutines of a model's pass pool, which
// computes the entropy passes of greedy generation while the next
// llama_decode runs; Load reads it. 0 (the default) means
// DefaultEntropyPool(params); a negative value turns the pool off, and every
// pass then runs on the generating goroutine before the next decode (the
// reference the pool is tested against). The recorded numbers do not depend
// on it.
//
// The pool is bounded: the passes read the rows of the latest logits in
// place, and the next llama_decode waits before it writes new logits until
// every one of them is done (the pass guard, see queuePass), so the decode
// waits only when the pool has not finished a step's passes by the end of
// the next decode; GenerateBatch waits for every pass before it returns.
// (Where the guard is not in place, the passes read copies of the logits,
// 4·n_vocab bytes each; step then queues at most 2·NSeq+2 of them beyond
// those being computed, and blocks when the pool falls that far behind.)
var EntropyPool = 0

// DefaultEntropyPool returns the pool size for a model loaded with p: with
// layers offloaded to a GPU, the cores the GPU leaves free (every core but
// the generating goroutine's), at most NSeq (a step queues one pass per
// sequence); −1 (no pool) on the CPU, where each pass runs between two
// decodes on the threads the context decodes with (its ggml thread pool,
// see useThreadPool, when they are two or more). On the CPU a worker beside
// the decode slows the decode by more than the pass it hides, even on a
// core that llama.cpp leaves free: measured on the 2-core development
// machine (Gemma 3 270M, `fragility bench --threads 1 --threads-batch 1`,
// 10 repeats, 2026-12-06), b/a was 0.960 and 0.978 with one worker on the
// free core, 0.984 and 0.985 with the passes on the generating goroutine,
// and 0.990 and 0.994 with each pass on two threads of a ggml thread pool
// (which needs a worker that sleeps through a one-thread decode, and under
// `make test` waited for a core: a pass now takes as many threads as a
// one-token decode, see useThreadPool); with every core decoding a worker
// cost more still (b/a 0.83–0.85 against 0.96 with none, in an earlier
// sitting).
func DefaultEntropyPool(p Params) int {
	p = p.Defaults()
	if p.GPULayers == 0 {
		return -1
	}
	free := runtime.NumCPU() - 1
	if free < 1 {
		return -1
	}
	return min(free, p.NSeq)
}

// startPool starts the pass pool of EntropyPool workers (none when it is
// negative).
func (m *Model) startPool() {
	w := m.poolWorkers()
	if w <= 0 {
		return
	}
	m.poolSize = w
	m.passJobs = make(chan passJob, 2*m.params.NSeq+2)
	for range w {
		go m.passWorker()
	}
}

// poolWorkers returns the number of pass-pool workers Load starts for the
// model's parameters (EntropyPool, or DefaultEntropyPool when it is 0); 0
// or less: none.
func (m *Model) poolWorkers() int {
	if EntropyPool != 0 {
		return EntropyPool
	}
	return DefaultEntropyPool(m.params)
}

// EntropyPoolSize returns the number of workers of the model's pass pool (0:
// the pool is off and passes run inline).
func (m *Model) EntropyPoolSize() int { return m.poolSize }

// EntropyPassThreads returns the threads that compute each entropy pass of
// greedy generation between two decodes: Threads of the context's ggml
// thread pool (see useThreadPool) when it has one, else 1 (the generating
// goroutine); 0 when the pass pool computes the passes beside the next
// decode.
func (m *Model) EntropyPassThreads() int {
	switch {
	case m.poolSize > 0:
		return 0
	case m.tp != nil:
		return min(m.params.Threads, m.tp.n)
	}
	return 1
}

// passWorker runs queued entropy passes, one at a time, until m.passJobs
// is closed (Close). Long-lived goroutines, not one per token: starting a
// goroutine per token woke an idle thread each time, which cost about 1% of
// generation speed on the 2-core development machine.
func (m *Model) passWorker() {
	for j := range m.passJobs {
		if testPassDelay > 0 {
			time.Sleep(testPassDelay)
		}
		t0 := time.Now()
		d := entropyAt(j.kernel, j.buf, j.max, int(j.id))
		*j.sec = time.Since(t0).Seconds()
		fillRecord(j.rec, d, j.buf[j.id])
		if j.inPlace {
			C.fragility_pass_guard_add(m.guard, -1)
		} else {
			m.bufPool.Put(&j.buf)
		}
		m.passes.Done()
	}
}

// queuePass prepares the pass job of one row of logits in llama.cpp's
// output buffer: the argmax (its id) and largest logit, and the row the pass
// will read. When the model's pass guard has met the graph's logits node
// (see fragility_pass_guard_cb in helpers.c), the pass reads the row in
// place: the next llama_decode waits, before it writes new logits, until no
// pass is pending, so the decode never overwrites a row being read and the
// generating goroutine reads the row once (the argmax) instead of also
// writing a copy of it; measured on the 2-core development machine, Gemma 3
// 270M (262,144 logits), the copy cost about 0.15 ms of a 0.22 ms step.
// Otherwise the row is copied into a buffer of the model's pool. An error
// when the logits hold NaN or their maximum is infinite.
func (m *Model) queuePass(logits []float32, kernel string) (passJob, error) {
	j := passJob{buf: logits, kernel: kernel}
	var arg int
	var nan bool
	j.inPlace = m.passesInPlace()
	if j.inPlace {
		j.max, arg, nan = maxLogit(logits)
	} else {
		j.buf = m.logitBuf()
		j.max, arg, nan = maxLogitCopy(j.buf, logits)
	}
	if nan || math.IsInf(float64(j.max), 0) {
		if !j.inPlace {
			m.bufPool.Put(&j.buf)
		}
		return passJob{}, errors.New("logits contain NaN or an infinite maximum")
	}
	j.id = Token(arg)
	return j, nil
}

// testPassDelay, set by tests only, delays every pass of the pool (to show
// that the pass guard holds the next decode's logits back).
var testPassDelay time.Duration

// passesInPlace reports whether the model's passes read the logits in place
// (see queuePass).
func (m *Model) passesInPlace() bool {
	return m.guard != nil && C.fragility_pass_guard_seen(m.guard) != 0
}

// logitBuf returns a [n_vocab] buffer from the model's pool.
func (m *Model) logitBuf() []float32 {
	if b, ok := m.bufPool.Get().(*[]float32); ok {
		return *b
	}
	return make([]float32, m.meta.NVocab)
}

// waitPasses waits for every entropy pass in flight. A pass cannot fail
// (step checked its logits), so the error is always nil.
func (m *Model) waitPasses() error {
	m.passes.Wait()
	return nil
}

// sample draws a token from softmax(logits / temp) by inverse transform over
// the vocabulary in index order, with float64 accumulation.
func sample(logits []float32, max float32, temp float64, rng *rand.Rand) Token {
	var z float64
	for _, l := range logits {
		z += math.Exp((float64(l) - float64(max)) / temp)
	}
	u := rng.Float64() * z
	var c float64
	for i, l := range logits {
		c += math.Exp((float64(l) - float64(max)) / temp)
		if c > u {
			return Token(i)
		}
	}
	return Token(len(logits) - 1)
}

// decode runs llama_decode on m.batch and turns its return code into an error.
func (m *Model) decode(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrAborted, err)
	}
	if int(m.batch.n_tokens) > m.params.NSeq {
		// A batch of more outputs than sequences can make llama.cpp
		// reallocate its output buffer, which passes in place read.
		m.passes.Wait()
	}
	rc := C.llama_decode(m.ctx, m.batch)
	switch {
	case rc == 0:
		return nil
	case rc == 1:
		return fmt.Errorf("llama_decode: no KV cache slot for a batch of %d tokens (context full)", int(m.batch.n_tokens))
	case rc == 2:
		return fmt.Errorf("%w: llama_decode was aborted", ErrAborted)
	default:
		return fmt.Errorf("llama_decode failed (code %d): %s", int(rc), orUnknown(takeLogTail()))
	}
}
