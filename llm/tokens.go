package llm

/*
#include <stdlib.h>
#include "llama.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Token is a llama.cpp token id, an index into the vocabulary [0, NVocab).
type Token = int32

// Tokenize converts text to token ids with the model's tokenizer. addSpecial
// adds BOS/EOS where the model's configuration asks for them; parseSpecial
// lets control tokens written in the text (e.g. "<start_of_turn>") be parsed as
// such, as rendered chat prompts need.
func (m *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]Token, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	n := len(text) + 8
	for {
		buf := make([]C.llama_token, n)
		got := C.llama_tokenize(m.vocab, ctext, C.int32_t(len(text)), &buf[0], C.int32_t(n), C.bool(addSpecial), C.bool(parseSpecial))
		if got == C.INT32_MIN {
			return nil, fmt.Errorf("tokenize: text of %d bytes overflows the token count", len(text))
		}
		if got < 0 {
			n = int(-got)
			continue
		}
		out := make([]Token, got)
		for i := range out {
			out[i] = Token(buf[i])
		}
		return out, nil
	}
}

// Piece returns the text of one token (llama_token_to_piece; special tokens
// rendered). A piece may be a partial UTF-8 sequence.
func (m *Model) Piece(t Token) string {
	buf := make([]byte, 64)
	for {
		n := C.llama_token_to_piece(m.vocab, C.llama_token(t), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, true)
		if n < 0 {
			buf = make([]byte, -n)
			continue
		}
		return string(buf[:n])
	}
}

// Detokenize converts token ids back to text (llama_detokenize). removeSpecial
// drops BOS/EOS added by the tokenizer; special tokens inside are rendered
// only when unparseSpecial is true.
func (m *Model) Detokenize(tokens []Token, removeSpecial, unparseSpecial bool) (string, error) {
	if len(tokens) == 0 {
		return "", nil
	}
	ct := (*C.llama_token)(C.malloc(C.size_t(len(tokens)) * C.size_t(unsafe.Sizeof(C.llama_token(0)))))
	defer C.free(unsafe.Pointer(ct))
	cs := unsafe.Slice(ct, len(tokens))
	for i, t := range tokens {
		if t < 0 || int(t) >= m.meta.NVocab {
			return "", fmt.Errorf("detokenize: token %d at position %d is outside the vocabulary [0,%d)", t, i, m.meta.NVocab)
		}
		cs[i] = C.llama_token(t)
	}
	n := len(tokens)*8 + 16
	for {
		buf := make([]byte, n)
		got := C.llama_detokenize(m.vocab, ct, C.int32_t(len(tokens)), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(n), C.bool(removeSpecial), C.bool(unparseSpecial))
		if got < 0 {
			n = int(-got) + 1
			continue
		}
		return string(buf[:got]), nil
	}
}

// IsEndOfGeneration reports whether t ends generation (EOS, EOT, ...).
func (m *Model) IsEndOfGeneration(t Token) bool {
	return bool(C.llama_vocab_is_eog(m.vocab, C.llama_token(t)))
}
