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
	"slices"
	"sort"
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
	// Seconds is this forcing's time, in seconds: its share of each
	// llama_decode call its tokens took part in (a call's time split
	// evenly over its tokens) and its own entropy passes.
	Seconds float64
}

// ErrNoGeneration is returned (wrapped) by ForceAfter when the model's KV
// state no longer holds the batch it is asked to extend.
var ErrNoGeneration = errors.New("the KV state does not hold that generation")

// ForceAfter teacher-forces continuations of the sequences of the latest
// GenerateBatch, in its KV state: no prompt is decoded again. For each
// forcing, the sequence's KV cells from its last kept token on are dropped
// (llama_memory_seq_rm), and that token, so that its next-token logits are
// there to read, is decoded again at its own position together with the
// forced tokens (but the last, whose logits nothing reads); the logits that
// each scored forced token follows are read in full and turned into a
// log-probability by the entropy pass of kernel ("" is the default kernel,
// as in GenerateOptions.EntropyKernel). The forcings run in rounds: a
// round holds at most one forcing of each sequence, and all the tokens of a
// round are decoded in one llama_batch (each at its position in its
// sequence, laid out by sequence id, logits requested only for the
// positions whose logits are scored), in as few llama_decode calls as the
// batch allows (n_batch tokens a call). Several forcings of one sequence
// run in successive rounds, in the order of fs, each keeping at most as
// many tokens as the one before it (a forcing drops the cells after its
// kept tokens). Results are in the order of fs.
//
// llama.cpp's logits depend on how the tokens are split into calls (and,
// within a call, into ubatches): other kernels, other roundings, which the
// layers amplify, so that a token's log-probability forced here and the
// same token decoded one per call as generation decodes it differ by
// hundredths to tenths of a nat (up to 0.11 on Gemma 3 270M and 0.40 on
// Qwen2.5-Coder 0.5B in the probe's test runs). A forcing's
// log-probabilities are the same bits for the same generation and forcings
// (what verify replays); on the development machine they were also the
// same with the round's other forcings or alone, and with the round split
// into calls of 3 tokens (tested within 0.05 nats, the bits logged). With
// one sequence, a prompt decoded in one call and the generation's tokens
// decoded one per call, the logits are those of ScoreForced over the
// prompt, the kept tokens and the forced ones (tested bit for bit): the
// cells dropped and written again lie at the same positions and the same
// tokens are decoded in the same calls.
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
// kept token again (when it keeps one) and the forced tokens, every token
// of the round in one llama_decode call (decodeFeeds), scoring the logits
// each scored forced token follows into out. A forcing that keeps no token
// scores its first token from the prefill's logits
// (GenerateOptions.KeepFirstLogits).
func (m *Model) forceRound(ctx context.Context, gens []*Generation, fs []Forcing, idx []int, kernel string, out []Forced) error {
	mem := C.llama_get_memory(m.ctx)
	feeds := make([]feed, len(idx))
	for j, i := range idx {
		f, g := fs[i], gens[fs[i].Seq]
		out[i].TokenLogProbs = make([]float64, 0, f.To-f.From)
		fd := feed{seq: f.Seq, pos: g.PromptTokens + f.Keep - 1}
		if f.Keep > 0 {
			fd.toks = append([]Token{g.Tokens[f.Keep-1].ID}, f.Tokens[:f.To-1]...)
		} else {
			if g.first == nil {
				return fmt.Errorf("sequence %d: a forcing that keeps no token needs GenerateOptions.KeepFirstLogits", f.Seq)
			}
			fd.pos, fd.skip, fd.toks = fd.pos+1, 1, f.Tokens[:f.To-1]
			t0 := time.Now()
			if err := m.scoreLogits(&out[i], f, 0, g.first, kernel); err != nil {
				return fmt.Errorf("sequence %d: %w", f.Seq, err)
			}
			out[i].Seconds += time.Since(t0).Seconds()
		}
		fd.from = max(0, f.From-fd.skip)
		if !C.llama_memory_seq_rm(mem, C.llama_seq_id(f.Seq), C.llama_pos(fd.pos), -1) {
			return fmt.Errorf("sequence %d: the KV memory cannot drop part of a sequence", f.Seq)
		}
		feeds[j] = fd
	}
	secs, err := m.decodeFeeds(ctx, feeds, func(j, k int, logits []float32) error {
		i := idx[j]
		if err := m.scoreLogits(&out[i], fs[i], k+feeds[j].skip, logits, kernel); err != nil {
			return fmt.Errorf("sequence %d: %w", fs[i].Seq, err)
		}
		return nil
	})
	for j, i := range idx {
		out[i].Seconds += secs[j]
	}
	return err
}

// feed is what one sequence decodes in a round of forcings: toks at
// positions pos, pos+1, … of sequence seq, the logits read after toks[k]
// for every k ≥ from (those of forced token k+skip).
type feed struct {
	seq, pos   int
	toks       []Token
	from, skip int
}

// decodeFeeds decodes every token of feeds, laid out in one llama_batch by
// sequence id and then position (sequences in increasing, consecutive ids
// is how llama.cpp's split of a batch over per-sequence KV streams puts the
// most of them in one ubatch), in as few llama_decode calls as the batch
// holds (n_batch tokens a call), with logits only where they are read: read
// gets them for each feed j and token k ≥ feeds[j].from, in token order. It
// returns each feed's seconds: its share of each call's llama_decode time
// (split by tokens) and of read's.
func (m *Model) decodeFeeds(ctx context.Context, feeds []feed, read func(j, k int, logits []float32) error) ([]float64, error) {
	order := make([]int, len(feeds))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return feeds[order[a]].seq < feeds[order[b]].seq })
	secs := make([]float64, len(feeds))
	type entry struct{ j, k int }
	chunk := make([]entry, 0, m.params.NBatch)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		defer func() { chunk = chunk[:0] }()
		for n, e := range chunk {
			fd := feeds[e.j]
			out := C.int8_t(0)
			if e.k >= fd.from {
				out = 1
			}
			C.fragility_batch_set(&m.batch, C.int(n), C.llama_token(fd.toks[e.k]), C.llama_pos(fd.pos+e.k), C.llama_seq_id(fd.seq), out)
		}
		m.batch.n_tokens = C.int32_t(len(chunk))
		t0 := time.Now()
		if err := m.decode(ctx); err != nil {
			return err
		}
		dt := time.Since(t0).Seconds() / float64(len(chunk))
		for n, e := range chunk {
			secs[e.j] += dt
			if e.k < feeds[e.j].from {
				continue
			}
			t1 := time.Now()
			ptr := C.llama_get_logits_ith(m.ctx, C.int32_t(n))
			if ptr == nil {
				return fmt.Errorf("sequence %d: llama.cpp returned no logits for batch slot %d", feeds[e.j].seq, n)
			}
			if err := read(e.j, e.k, unsafe.Slice((*float32)(unsafe.Pointer(ptr)), m.meta.NVocab)); err != nil {
				return err
			}
			secs[e.j] += time.Since(t1).Seconds()
		}
		return nil
	}
	for _, j := range order {
		for k := range feeds[j].toks {
			if chunk = append(chunk, entry{j, k}); len(chunk) == m.params.NBatch {
				if err := flush(); err != nil {
					return secs, err
				}
			}
		}
	}
	return secs, flush()
}

// scoreLogits adds to r the log-probability of forced token k of f under
// logits, the next-token logits that token follows, when k is scored.
func (m *Model) scoreLogits(r *Forced, f Forcing, k int, logits []float32, kernel string) error {
	if k < f.From {
		return nil
	}
	d, err := m.entropyInline(kernel, logits)
	if err != nil {
		return fmt.Errorf("forced token %d: %w", k, err)
	}
	lp := d.LogProb(logits[f.Tokens[k]])
	r.TokenLogProbs = append(r.TokenLogProbs, lp)
	r.LogProb += lp
	r.Tokens++
	return nil
}

// ScoreForced is the pass whose logits ForceAfter reads for a forcing of a
// generation of one sequence, in a fresh KV state: it decodes prompt (in
// calls of at most n_batch tokens, as a prefill), then walked but its last
// token one token per llama_decode call (as generation decodes its
// tokens), then walked's last token (when walked is not empty) and forced
// but its last token together in one llama_batch (as ForceAfter decodes a
// forcing that keeps walked), with logits requested only for the steps fn
// is called for. fn gets, for each step from from to len(forced)−1 in
// order, the next-token logits forced[step] follows (for step 0 with walked
// empty: the prompt's) and their distribution (the default entropy kernel,
// as Score). Errors: an empty prompt or forced, from outside
// [0, len(forced)), a token outside the vocabulary, a pass longer than the
// context (*PromptTooLongError), a failed llama_decode, NaN logits, fn's
// error.
func (m *Model) ScoreForced(ctx context.Context, prompt, walked, forced []Token, from int, fn StepFunc) error {
	switch {
	case m.ctx == nil:
		return errors.New("score: model is closed")
	case len(prompt) == 0 || len(forced) == 0:
		return errors.New("score: empty prompt or forced tokens")
	case from < 0 || from >= len(forced):
		return fmt.Errorf("score: first scored step %d outside [0,%d)", from, len(forced))
	case len(prompt)+len(walked)+len(forced) > m.params.NCtx:
		return &PromptTooLongError{Tokens: len(prompt) + len(walked) + len(forced), NCtx: m.params.NCtx}
	}
	for _, t := range append(slices.Clone(walked), forced...) {
		if t < 0 || int(t) >= m.meta.NVocab {
			return fmt.Errorf("score: token %d outside the vocabulary [0,%d)", t, m.meta.NVocab)
		}
	}
	m.clearMemory()
	if err := m.prefill(ctx, prompt, 0, 0, true); err != nil {
		return fmt.Errorf("score: prefill: %w", err)
	}
	fd := feed{pos: len(prompt) + len(walked) - 1, from: from}
	if len(walked) > 0 {
		for i, t := range walked[:len(walked)-1] {
			C.fragility_batch_set(&m.batch, 0, C.llama_token(t), C.llama_pos(len(prompt)+i), 0, 1)
			m.batch.n_tokens = 1
			if err := m.decode(ctx); err != nil {
				return fmt.Errorf("score: walked token %d: %w", i, err)
			}
		}
		fd.toks = append([]Token{walked[len(walked)-1]}, forced[:len(forced)-1]...)
	} else {
		fd.pos, fd.skip, fd.from, fd.toks = fd.pos+1, 1, max(0, from-1), forced[:len(forced)-1]
		if from == 0 {
			ptr := C.llama_get_logits_ith(m.ctx, -1)
			if ptr == nil {
				return errors.New("score: no logits after the prompt")
			}
			if err := scoreStep(unsafe.Slice((*float32)(unsafe.Pointer(ptr)), m.meta.NVocab), 0, fn); err != nil {
				return err
			}
		}
	}
	_, err := m.decodeFeeds(ctx, []feed{fd}, func(_, k int, logits []float32) error {
		return scoreStep(logits, k+fd.skip, fn)
	})
	return err
}

// scoreStep calls fn with step's logits and their distribution.
func scoreStep(logits []float32, step int, fn StepFunc) error {
	d, err := Entropy(logits)
	if err != nil {
		return fmt.Errorf("score: step %d: %w", step, err)
	}
	return fn(step, logits, d)
}
