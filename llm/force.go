package llm

/*
#include "llama.h"
#include "helpers.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// Forcing is one teacher-forced continuation of a sequence of the latest
// GenerateBatch call, scored in that call's KV state (ForceAfter).
type Forcing struct {
	// Seq is the sequence's index in the batch (its prompt's index).
	Seq int
	// Keep is how many of the generation's Tokens (generated and
	// injected, in order) stay in context before the forced tokens, in
	// [0, len(Tokens)]; the cells after them are dropped.
	Keep int
	// Tokens are the forced tokens, fed after the kept ones whatever the
	// model prefers (at least one).
	Tokens []Token
	// From and To bound the scored tokens: Tokens[From:To], with
	// 0 ≤ From < To ≤ len(Tokens).
	From, To int
}

// Forced is the score of one Forcing.
type Forced struct {
	// LogProb is Σ log p(Tokens[i] | everything before it) over the scored
	// tokens, in nats: each term is Dist.LogProb of the token's raw logit
	// in the float64 full-vocabulary distribution of the entropy pass,
	// summed in token order.
	LogProb float64
	// Tokens is the number of scored tokens (To − From).
	Tokens int
	// TokenLogProbs are the terms of LogProb, in order.
	TokenLogProbs []float64
	// Seconds is this forcing's share of the llama_decode and pass time.
	Seconds float64
}

// ErrNoGeneration is returned (wrapped) by ForceAfter when the model's KV
// state no longer holds the batch it is asked to extend.
var ErrNoGeneration = errors.New("the KV state does not hold that generation")

// ForceAfter teacher-forces continuations of the sequences of the latest
// GenerateBatch, in its KV state: no prompt is decoded again. For each
// forcing, the sequence's KV cells from its last kept token on are dropped
// (llama_memory_seq_rm), that token is decoded again at its own position,
// so that its next-token logits are there to read, and then the forced
// tokens are decoded one per llama_decode call, as generation does; the
// logits that each forced token follows are read in full and turned into a
// log-probability by the entropy pass of kernel ("" is the default kernel,
// as in GenerateOptions.EntropyKernel). Forcings of different sequences
// share llama_decode calls (one token per sequence per call); several
// forcings of one sequence run one after the other, in the order of fs, each
// keeping at most as many tokens as the one before it (a forcing drops the
// cells after its kept tokens). Results are in the order of fs.
//
// With one sequence, a prompt decoded in one call and the generation's
// tokens decoded one per call, the logits are those of Score over the prompt
// followed by the kept and forced tokens (tested bit for bit): the cells
// dropped and written again lie at the same positions.
//
// gens must be what the latest GenerateBatch returned, with no other call of
// the model since but ForceAfter (ErrNoGeneration otherwise); afterwards the
// model's next GenerateBatch starts as usual (a kept prefix stays kept).
// Errors: a forcing out of range, one that keeps more tokens than an
// earlier forcing of its sequence, a forcing that would fill the context, a
// memory that cannot drop part of a sequence (recurrent models), a failed
// llama_decode, NaN logits, a cancelled ctx (ErrAborted).
func (m *Model) ForceAfter(ctx context.Context, gens []*Generation, fs []Forcing, kernel string) ([]Forced, error) {
	if m.ctx == nil {
		return nil, errors.New("force: model is closed")
	}
	if len(gens) == 0 || len(m.last) != len(gens) || &m.last[0] != &gens[0] {
		return nil, fmt.Errorf("force: %w", ErrNoGeneration)
	}
	if err := CheckEntropyKernel(kernel); err != nil {
		return nil, fmt.Errorf("force: %w", err)
	}
	rounds := make([][]int, 0, 2) // rounds[r]: indices into fs of each sequence's r-th forcing
	nth := make(map[int]int)
	kept := make(map[int]int) // the tokens the sequence's latest forcing kept
	for i, f := range fs {
		if err := m.checkForcing(gens, f); err != nil {
			return nil, fmt.Errorf("force: forcing %d: %w", i, err)
		}
		if k, ok := kept[f.Seq]; ok && f.Keep > k {
			return nil, fmt.Errorf("force: forcing %d keeps %d tokens of sequence %d, but an earlier forcing of it kept %d and dropped the cells after them", i, f.Keep, f.Seq, k)
		}
		kept[f.Seq] = f.Keep
		r := nth[f.Seq]
		nth[f.Seq]++
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], i)
	}
	out := make([]Forced, len(fs))
	for _, idx := range rounds {
		if err := m.forceRound(ctx, gens, fs, idx, kernel, out); err != nil {
			m.last = nil
			return nil, fmt.Errorf("force: %w", err)
		}
	}
	return out, nil
}

// checkForcing checks one forcing against the batch gens.
func (m *Model) checkForcing(gens []*Generation, f Forcing) error {
	switch {
	case f.Seq < 0 || f.Seq >= len(gens):
		return fmt.Errorf("sequence %d outside the batch of %d", f.Seq, len(gens))
	case f.Keep < 0 || f.Keep > len(gens[f.Seq].Tokens):
		return fmt.Errorf("keep %d outside [0,%d]", f.Keep, len(gens[f.Seq].Tokens))
	case len(f.Tokens) == 0:
		return errors.New("no forced token")
	case f.From < 0 || f.From >= f.To || f.To > len(f.Tokens):
		return fmt.Errorf("scored range [%d,%d) outside [0,%d]", f.From, f.To, len(f.Tokens))
	case gens[f.Seq].PromptTokens+f.Keep+len(f.Tokens) >= m.params.NCtx:
		return &PromptTooLongError{Tokens: gens[f.Seq].PromptTokens + f.Keep + len(f.Tokens), NCtx: m.params.NCtx}
	}
	for _, t := range f.Tokens {
		if t < 0 || int(t) >= m.meta.NVocab {
			return fmt.Errorf("token %d outside the vocabulary [0,%d)", t, m.meta.NVocab)
		}
	}
	return nil
}

// forceRound runs the forcings fs[idx] (at most one per sequence) together:
// drop each sequence's cells after its kept tokens, then decode its last
// kept token again (when it keeps one) and the forced tokens, one token per
// sequence per call, scoring the logits each forced token follows into out.
// A forcing that keeps no token scores its first token from the prefill's
// logits (GenerateOptions.KeepFirstLogits).
func (m *Model) forceRound(ctx context.Context, gens []*Generation, fs []Forcing, idx []int, kernel string, out []Forced) error {
	mem := C.llama_get_memory(m.ctx)
	feeds := make([][]Token, len(idx)) // the tokens decoded for each forcing
	start := make([]int, len(idx))     // position of feeds[j][0]
	skip := make([]int, len(idx))      // forced tokens scored before the first decode
	for j, i := range idx {
		f, g := fs[i], gens[fs[i].Seq]
		out[i].TokenLogProbs = make([]float64, 0, f.To-f.From)
		start[j] = g.PromptTokens + f.Keep - 1
		if f.Keep > 0 {
			feeds[j] = append([]Token{g.Tokens[f.Keep-1].ID}, f.Tokens[:f.To-1]...)
		} else {
			if g.first == nil {
				return fmt.Errorf("sequence %d: a forcing that keeps no token needs GenerateOptions.KeepFirstLogits", f.Seq)
			}
			start[j]++
			skip[j] = 1
			feeds[j] = f.Tokens[:f.To-1]
			if err := m.scoreLogits(&out[i], f, 0, g.first, kernel); err != nil {
				return fmt.Errorf("sequence %d: %w", f.Seq, err)
			}
		}
		if !C.llama_memory_seq_rm(mem, C.llama_seq_id(f.Seq), C.llama_pos(start[j]), -1) {
			return fmt.Errorf("sequence %d: the KV memory cannot drop part of a sequence", f.Seq)
		}
	}
	slot := make([]int, len(idx))
	for step := 0; ; step++ {
		n := 0
		for j, i := range idx {
			slot[j] = -1
			if step < len(feeds[j]) {
				C.fragility_batch_set(&m.batch, C.int(n), C.llama_token(feeds[j][step]), C.llama_pos(start[j]+step), C.llama_seq_id(fs[i].Seq), 1)
				slot[j] = n
				n++
			}
		}
		if n == 0 {
			return nil
		}
		m.batch.n_tokens = C.int32_t(n)
		t0 := time.Now()
		if err := m.decode(ctx); err != nil {
			return err
		}
		dt := time.Since(t0).Seconds() / float64(n)
		for j, i := range idx {
			if slot[j] < 0 {
				continue
			}
			t1 := time.Now()
			ptr := C.llama_get_logits_ith(m.ctx, C.int32_t(slot[j]))
			if ptr == nil {
				return fmt.Errorf("sequence %d: llama.cpp returned no logits for batch slot %d", fs[i].Seq, slot[j])
			}
			logits := unsafe.Slice((*float32)(unsafe.Pointer(ptr)), m.meta.NVocab)
			if err := m.scoreLogits(&out[i], fs[i], step+skip[j], logits, kernel); err != nil {
				return fmt.Errorf("sequence %d: %w", fs[i].Seq, err)
			}
			out[i].Seconds += dt + time.Since(t1).Seconds()
		}
	}
}

// scoreLogits adds to r the log-probability of forced token k of f under
// logits, the next-token logits that token follows, when k is scored.
func (m *Model) scoreLogits(r *Forced, f Forcing, k int, logits []float32, kernel string) error {
	if k < f.From {
		return nil
	}
	d, err := entropyWith(kernel, logits)
	if err != nil {
		return fmt.Errorf("forced token %d: %w", k, err)
	}
	lp := d.LogProb(logits[f.Tokens[k]])
	r.TokenLogProbs = append(r.TokenLogProbs, lp)
	r.LogProb += lp
	r.Tokens++
	return nil
}
