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
)

// DecodeTiming is the wall time of a bare decode loop.
type DecodeTiming struct {
	PromptTokens, GenTokens int
	PromptSec, GenSec       float64
}

// BenchDecode times llama.cpp alone, as llama-bench does: a prompt of pp
// copies of a fixed token decoded in n_batch chunks, then tg single-token
// llama_decode calls feeding the same fixed token, with no logits read, no
// entropy and no sampling. It is the baseline that Generate's overhead is
// measured against. The KV state is cleared first.
func (m *Model) BenchDecode(ctx context.Context, pp, tg int) (DecodeTiming, error) {
	if m.ctx == nil {
		return DecodeTiming{}, errors.New("bench: model is closed")
	}
	if pp < 1 || tg < 0 || pp+tg >= m.params.NCtx {
		return DecodeTiming{}, fmt.Errorf("bench: pp=%d tg=%d do not fit n_ctx=%d", pp, tg, m.params.NCtx)
	}
	tok := C.llama_token(m.benchToken())
	C.llama_memory_clear(C.llama_get_memory(m.ctx), true)
	t0 := time.Now()
	for start := 0; start < pp; start += m.params.NBatch {
		end := min(start+m.params.NBatch, pp)
		for i := start; i < end; i++ {
			last := C.int8_t(0)
			if i == pp-1 {
				last = 1
			}
			C.fragility_batch_set(&m.batch, C.int(i-start), tok, C.llama_pos(i), 0, last)
		}
		m.batch.n_tokens = C.int32_t(end - start)
		if err := m.decode(ctx); err != nil {
			return DecodeTiming{}, err
		}
	}
	t1 := time.Now()
	for i := 0; i < tg; i++ {
		C.fragility_batch_set(&m.batch, 0, tok, C.llama_pos(pp+i), 0, 1)
		m.batch.n_tokens = 1
		if err := m.decode(ctx); err != nil {
			return DecodeTiming{}, err
		}
	}
	t2 := time.Now()
	return DecodeTiming{PromptTokens: pp, GenTokens: tg, PromptSec: t1.Sub(t0).Seconds(), GenSec: t2.Sub(t1).Seconds()}, nil
}

// benchToken is a fixed ordinary token for timing runs: BOS when the model
// has one, else token 0.
func (m *Model) benchToken() Token {
	if t := C.llama_vocab_bos(m.vocab); t >= 0 {
		return Token(t)
	}
	return 0
}
