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
	"unsafe"
)

// StepFunc receives the raw logits ([n_vocab]float32, valid only during the
// call: copy what you keep) of one step and their distribution summary. A
// non-nil error stops the scoring and is returned by Score.
type StepFunc func(step int, logits []float32, d Dist) error

// Score runs prompt in a fresh KV state and then walks a continuation one
// token at a time, calling fn with the full next-token logits at every step.
// With forced != nil the continuation is forced (teacher forcing): step i
// feeds forced[i] whatever the model prefers, and len(forced) steps are
// scored. With forced == nil it follows the greedy choice for steps steps.
// It is the primitive behind quantization comparisons (KL divergence between
// two models on the same tokens) and the entropy reference tests.
func (m *Model) Score(ctx context.Context, prompt, forced []Token, steps int, fn StepFunc) error {
	if m.ctx == nil {
		return errors.New("score: model is closed")
	}
	if forced != nil {
		steps = len(forced)
	}
	if len(prompt) == 0 {
		return errors.New("score: empty prompt")
	}
	if len(prompt)+steps > m.params.NCtx {
		return &PromptTooLongError{Tokens: len(prompt) + steps, NCtx: m.params.NCtx}
	}
	m.clearMemory()
	for start := 0; start < len(prompt); start += m.params.NBatch {
		end := min(start+m.params.NBatch, len(prompt))
		for i := start; i < end; i++ {
			last := C.int8_t(0)
			if i == len(prompt)-1 {
				last = 1
			}
			C.fragility_batch_set(&m.batch, C.int(i-start), C.llama_token(prompt[i]), C.llama_pos(i), 0, last)
		}
		m.batch.n_tokens = C.int32_t(end - start)
		if err := m.decode(ctx); err != nil {
			return fmt.Errorf("score: prefill: %w", err)
		}
	}
	pos := len(prompt)
	for step := 0; step < steps; step++ {
		ptr := C.llama_get_logits_ith(m.ctx, -1)
		if ptr == nil {
			return fmt.Errorf("score: no logits at step %d", step)
		}
		logits := unsafe.Slice((*float32)(unsafe.Pointer(ptr)), m.meta.NVocab)
		d, err := Entropy(logits)
		if err != nil {
			return fmt.Errorf("score: step %d: %w", step, err)
		}
		if err := fn(step, logits, d); err != nil {
			return err
		}
		next := d.ArgMax
		if forced != nil {
			next = forced[step]
			if next < 0 || int(next) >= m.meta.NVocab {
				return fmt.Errorf("score: forced token %d at step %d is outside the vocabulary [0,%d)", next, step, m.meta.NVocab)
			}
		}
		if step == steps-1 {
			break
		}
		C.fragility_batch_set(&m.batch, 0, C.llama_token(next), C.llama_pos(pos), 0, 1)
		m.batch.n_tokens = 1
		pos++
		if err := m.decode(ctx); err != nil {
			return fmt.Errorf("score: step %d: %w", step, err)
		}
	}
	return nil
}
