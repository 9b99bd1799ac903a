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
	"math/rand/v2"
	"time"
)

// DecodeTiming is the wall time of a bare decode loop.
type DecodeTiming struct {
	PromptTokens, GenTokens int
	PromptSec, GenSec       float64
}

// BenchDecode times llama.cpp alone, as llama-bench's test_prompt and
// test_gen do: a prompt of pp tokens (BOS, or a random token when the model
// has no BOS, then random tokens) decoded in n_batch chunks, then tg
// single-token llama_decode calls, the first fed BOS (or a random token) and
// each later one a random token, with no logits read, no entropy and no
// sampling. Random tokens are uniform over [0, n_vocab) from a PCG generator
// with a fixed seed (math/rand/v2), so every call decodes the same tokens;
// llama-bench uses std::rand. Feeding one fixed token over and over is not
// an equivalent baseline: on the default model it decoded about 3% faster
// than the token sequence of a real generation. It is the baseline that Generate's overhead is
// measured against. The KV state is cleared first.
func (m *Model) BenchDecode(ctx context.Context, pp, tg int) (DecodeTiming, error) {
	if m.ctx == nil {
		return DecodeTiming{}, errors.New("bench: model is closed")
	}
	if pp < 1 || tg < 0 || pp+tg >= m.params.NCtx {
		return DecodeTiming{}, fmt.Errorf("bench: pp=%d tg=%d do not fit n_ctx=%d", pp, tg, m.params.NCtx)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	prompt := m.benchPrompt(rng, pp)
	m.clearMemory()
	t0 := time.Now()
	if err := m.prefill(ctx, prompt, 0, 0, true); err != nil {
		return DecodeTiming{}, err
	}
	t1 := time.Now()
	tok := C.llama_token(m.benchPrompt(rng, 1)[0])
	for i := 0; i < tg; i++ {
		C.fragility_batch_set(&m.batch, 0, tok, C.llama_pos(pp+i), 0, 1)
		m.batch.n_tokens = 1
		if err := m.decode(ctx); err != nil {
			return DecodeTiming{}, err
		}
		tok = C.llama_token(rng.IntN(m.meta.NVocab))
	}
	t2 := time.Now()
	return DecodeTiming{PromptTokens: pp, GenTokens: tg, PromptSec: t1.Sub(t0).Seconds(), GenSec: t2.Sub(t1).Seconds()}, nil
}

// BenchBlock is the length, in tokens, of the alternating blocks of
// BenchInterleaved.
const BenchBlock = 16

// InterleavedTiming is the result of BenchInterleaved: the wall time of the
// bare decodes and of the generation steps, tg tokens each.
type InterleavedTiming struct {
	Tokens     int     // tokens of each kind (tg)
	BareSec    float64 // bare llama_decode blocks
	OursSec    float64 // generation blocks: llama_decode + entropy pass + record
	EntropySec float64 // summed entropy pass time of the generation blocks (beside the decodes)
	// Where the time of the generation blocks goes (OursSec is their sum,
	// up to the clock reads): OursDecodeSec is the llama_decode calls
	// (timed around each call, as BareDecodeSec is in the bare blocks),
	// OursStepSec the per-token work between two decodes on the generating
	// goroutine (logits read, argmax, the entropy pass when it runs inline
	// or queueing it for the pool, the record, the piece, the stop checks),
	// OursWaitSec the wait for the pool's last passes at each block's end.
	// OursDecodeSec − BareDecodeSec is what the per-token work costs the
	// decodes themselves (a core shared with the pool, caches, the
	// pass guard's wait).
	BareDecodeSec, OursDecodeSec, OursStepSec, OursWaitSec float64
}

// BenchInterleaved measures the cost of fragility's per-token work on top of
// llama_decode with the two in one sequence, so that both see the same
// machine: after a prompt of pp tokens (as BenchDecode's), blocks of
// BenchBlock tokens alternate between bare decodes (random tokens, no logits
// read, as llama-bench's test_gen) and generation steps (the token chosen from
// the previous logits, then the same per-token work as Generate: argmax, the
// full-vocabulary entropy pass beside the next decode, the record, the
// piece), in the order ABBA ABBA ..., which cancels a linear drift of the
// machine's speed and of the attention cost as the sequence grows. A
// generation block waits for its last entropy pass before its clock stops,
// so no pass spills into a bare block. tg must be a positive multiple of
// 2×BenchBlock, and pp + 2·tg + 1 must fit n_ctx.
func (m *Model) BenchInterleaved(ctx context.Context, pp, tg int) (InterleavedTiming, error) {
	if m.ctx == nil {
		return InterleavedTiming{}, errors.New("bench: model is closed")
	}
	if tg <= 0 || tg%(2*BenchBlock) != 0 {
		return InterleavedTiming{}, fmt.Errorf("bench: tg=%d is not a positive multiple of %d (blocks of %d tokens alternate ABBA)", tg, 2*BenchBlock, BenchBlock)
	}
	if pp < 1 || pp+2*tg+1 >= m.params.NCtx {
		return InterleavedTiming{}, fmt.Errorf("bench: pp=%d + 2×tg=%d do not fit n_ctx=%d", pp, tg, m.params.NCtx)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	prompt := m.benchPrompt(rng, pp)
	m.clearMemory()
	if err := m.prefill(ctx, prompt, 0, 0, true); err != nil {
		return InterleavedTiming{}, err
	}
	// Both slices have their final capacity: a pass in the pool writes into
	// its element of each, which must not move.
	g := &Generation{PromptTokens: pp, Tokens: make([]TokenRecord, 0, tg+1), entSec: make([]float64, 0, tg+1), pos: pp}
	opt := GenerateOptions{MaxTokens: tg + 2, IgnoreEOS: true}
	if err := m.step(g, -1, opt); err != nil {
		return InterleavedTiming{}, err
	}
	if err := m.waitPasses(); err != nil {
		return InterleavedTiming{}, err
	}
	res := InterleavedTiming{Tokens: tg}
	for b := 0; b < 2*tg/BenchBlock; b++ {
		t0 := time.Now()
		if b%4 == 0 || b%4 == 3 {
			for i := 0; i < BenchBlock; i++ {
				C.fragility_batch_set(&m.batch, 0, C.llama_token(rng.IntN(m.meta.NVocab)), C.llama_pos(g.pos), 0, 1)
				g.pos++
				m.batch.n_tokens = 1
				td := time.Now()
				if err := m.decode(ctx); err != nil {
					return InterleavedTiming{}, err
				}
				res.BareDecodeSec += time.Since(td).Seconds()
			}
			res.BareSec += time.Since(t0).Seconds()
			continue
		}
		for i := 0; i < BenchBlock; i++ {
			last := g.Tokens[len(g.Tokens)-1].ID
			C.fragility_batch_set(&m.batch, 0, C.llama_token(last), C.llama_pos(g.pos), 0, 1)
			g.pos++
			m.batch.n_tokens = 1
			td := time.Now()
			if err := m.decode(ctx); err != nil {
				return InterleavedTiming{}, err
			}
			ts := time.Now()
			if err := m.step(g, 0, opt); err != nil {
				return InterleavedTiming{}, err
			}
			te := time.Now()
			res.OursDecodeSec += ts.Sub(td).Seconds()
			res.OursStepSec += te.Sub(ts).Seconds()
		}
		tw := time.Now()
		if err := m.waitPasses(); err != nil {
			return InterleavedTiming{}, err
		}
		res.OursWaitSec += time.Since(tw).Seconds()
		res.OursSec += time.Since(t0).Seconds()
	}
	for _, s := range g.entSec[1:] {
		res.EntropySec += s
	}
	return res, nil
}

// benchPrompt returns n timing tokens drawn as llama-bench draws them: BOS
// first (a random token when the model has none), then tokens uniform over
// [0, n_vocab) from rng.
func (m *Model) benchPrompt(rng *rand.Rand, n int) []Token {
	toks := make([]Token, n)
	for i := range toks {
		if i == 0 {
			if t := C.llama_vocab_bos(m.vocab); t >= 0 {
				toks[i] = Token(t)
				continue
			}
		}
		toks[i] = Token(rng.IntN(m.meta.NVocab))
	}
	return toks
}
