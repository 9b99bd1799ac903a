package llm

/*
#include <stdlib.h>
#include <string.h>
#include "ggml.h"
#include "gguf.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"github.com/fragility/fragility/internal/jsonerr"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// TinyOptions shape the small random-weight model WriteTinyModel writes. The
// zero value of every numeric field means its default (see Defaults); the
// Tokenizer must be set.
type TinyOptions struct {
	// Tokenizer is a Hugging Face tokenizer.json whose model is WordPiece
	// (BERT style), e.g. the default sentence embedder's; its vocabulary
	// becomes the model's, with tokenizer.ggml.model "bert".
	Tokenizer string
	Seed      uint64 // seed of the weights; the same seed and tokenizer give the same bytes
	Layers    int    // transformer blocks; 0 = 2
	Embd      int    // embedding width; 0 = 64
	Heads     int    // attention heads; 0 = 2 (head width Embd/Heads)
	KVHeads   int    // key/value heads (grouped-query attention); 0 = 1
	FF        int    // feed-forward width; 0 = 256
	CtxTrain  int    // llama.context_length; 0 = 2048
	// NaNWeights makes every weight NaN: a model that loads and whose
	// logits are all NaN, for tests of how a failing model is handled.
	NaNWeights bool
}

// Defaults returns o with every zero numeric field replaced by its default.
func (o TinyOptions) Defaults() TinyOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Layers, 2)
	def(&o.Embd, 64)
	def(&o.Heads, 2)
	def(&o.KVHeads, 1)
	def(&o.FF, 256)
	def(&o.CtxTrain, 2048)
	return o
}

// CheckShape refuses a shape WriteTinyModel cannot write, with an error
// naming the field (as tiny-model's flag) and its range: an embedding width
// of 32 to 4096 in multiples of 32 (the Q8_0 block), 1 to 64 layers, a
// feed-forward width of 1 to 16384, at least one head and one key/value
// head, the width a multiple of the heads and the heads a multiple of the
// key/value heads (grouped-query attention). A tiny model is a few MiB. Call
// it on Defaults' result: a zero field is "the default" before that.
func (o TinyOptions) CheckShape() error {
	switch {
	case o.Embd < 32 || o.Embd > 4096 || o.Embd%32 != 0:
		return fmt.Errorf("tiny model: the embedding width (--embd) must be a multiple of 32 (the Q8_0 block) from 32 to 4096, got %d", o.Embd)
	case o.Layers < 1 || o.Layers > 64:
		return fmt.Errorf("tiny model: the layers (--layers) must be 1 to 64, got %d", o.Layers)
	case o.FF < 1 || o.FF > 16384:
		return fmt.Errorf("tiny model: the feed-forward width (--ff) must be 1 to 16384, got %d", o.FF)
	case o.Heads < 1 || o.Embd%o.Heads != 0:
		return fmt.Errorf("tiny model: the attention heads (--heads) must divide the embedding width %d, got %d", o.Embd, o.Heads)
	case o.KVHeads < 1 || o.Heads%o.KVHeads != 0:
		return fmt.Errorf("tiny model: the key/value heads (--kv-heads) must divide the attention heads (%d), got %d", o.Heads, o.KVHeads)
	}
	return nil
}

// TinyInfo describes a model written by WriteTinyModel.
type TinyInfo struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	NVocab  int    `json:"n_vocab"`
	NParams int64  `json:"n_params"`
	SHA256  string `json:"sha256"`
}

// wordPiece is the part of a tokenizer.json that WriteTinyModel reads.
type wordPiece struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Model struct {
		Type   string         `json:"type"`
		Vocab  map[string]int `json:"vocab"`
		Unk    string         `json:"unk_token"`
		Prefix string         `json:"continuing_subword_prefix"`
	} `json:"model"`
}

// GGUF token types (llama_token_type in llama.h).
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokUnused  = 5
)

// tinyVocab reads a WordPiece vocabulary and converts it to the form
// llama.cpp's WPM tokenizer expects: a word-initial piece carries the
// sentencepiece word-start mark U+2581, a continuation piece loses its "##"
// prefix, and bracketed entries ("[CLS]", "[unused7]") stay as they are.
// It returns the pieces by id, their GGUF token types and the ids of the
// special tokens [CLS], [SEP], [UNK], [PAD], [MASK].
func tinyVocab(path string) (pieces []string, types []int32, special map[string]int, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	var tj wordPiece
	if err := json.Unmarshal(raw, &tj); err != nil {
		msg, line := jsonerr.Describe(raw, err)
		return nil, nil, nil, fmt.Errorf("%s:%d: not a tokenizer.json: %s", path, line, msg)
	}
	if tj.Model.Type != "WordPiece" {
		return nil, nil, nil, fmt.Errorf("%s: tokenizer model is %q, want WordPiece", path, tj.Model.Type)
	}
	n := len(tj.Model.Vocab)
	if n == 0 {
		return nil, nil, nil, fmt.Errorf("%s: empty vocabulary", path)
	}
	prefix := tj.Model.Prefix
	if prefix == "" {
		prefix = "##"
	}
	pieces = make([]string, n)
	types = make([]int32, n)
	seen := make([]bool, n)
	for tok, id := range tj.Model.Vocab {
		if id < 0 || id >= n || seen[id] {
			return nil, nil, nil, fmt.Errorf("%s: vocabulary ids are not 0..%d without gaps (id %d of %q)", path, n-1, id, tok)
		}
		seen[id] = true
		switch {
		case len(tok) > 2 && strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]"):
			pieces[id], types[id] = tok, tokUnused
		case strings.HasPrefix(tok, prefix) && len(tok) > len(prefix):
			pieces[id], types[id] = tok[len(prefix):], tokNormal
		default:
			pieces[id], types[id] = "\u2581"+tok, tokNormal
		}
	}
	special = map[string]int{}
	for _, a := range tj.AddedTokens {
		if a.ID < 0 || a.ID >= n || !a.Special {
			continue
		}
		pieces[a.ID], types[a.ID] = a.Content, tokControl
		special[a.Content] = a.ID
	}
	if id, ok := tj.Model.Vocab[tj.Model.Unk]; ok {
		types[id] = tokUnknown
	}
	for _, s := range []string{"[CLS]", "[SEP]", "[UNK]", "[PAD]"} {
		if _, ok := special[s]; !ok {
			return nil, nil, nil, fmt.Errorf("%s: special token %s missing (not a BERT WordPiece tokenizer?)", path, s)
		}
	}
	return pieces, types, special, nil
}

// WriteTinyModel writes a small llama-architecture GGUF model to path: the
// vocabulary of a WordPiece tokenizer.json (see TinyOptions.Tokenizer) and
// random weights drawn from a seeded PCG generator (uniform; each layer matrix
// has standard deviation 1/sqrt(fan-in) so activations stay O(1)). Layer
// matrices are F16, norm vectors F32 (all ones), and the token embedding and
// the untied output matrix Q8_0, so a run exercises float and quantized
// matrix products. The model has no end-of-generation token: a generation
// always runs to its token budget. It is a fixture for tests and device
// checks, not a language model: its text is gibberish, but its tokenizer is
// real and llama.cpp runs the code paths of a dense transformer. The bytes
// depend only on the options and the tokenizer file. The file is written next
// to path and renamed into place.
func WriteTinyModel(path string, o TinyOptions) (*TinyInfo, error) {
	o = o.Defaults()
	if o.Tokenizer == "" {
		return nil, fmt.Errorf("tiny model: no tokenizer.json given")
	}
	if err := o.CheckShape(); err != nil {
		return nil, err
	}
	pieces, types, special, err := tinyVocab(o.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("tiny model: %w", err)
	}
	tokSum, _, err := hashFile(o.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("tiny model: %w", err)
	}
	initBackend()
	nVocab := len(pieces)
	headDim := o.Embd / o.Heads
	kvWidth := headDim * o.KVHeads

	type spec struct {
		name  string
		ne0   int // row length (input width)
		ne1   int // rows (1 for a vector)
		scale float64
		typ   C.enum_ggml_type
	}
	const f32, f16, q8 = C.GGML_TYPE_F32, C.GGML_TYPE_F16, C.GGML_TYPE_Q8_0
	specs := []spec{{"token_embd.weight", o.Embd, nVocab, 1, q8}}
	for l := 0; l < o.Layers; l++ {
		b := fmt.Sprintf("blk.%d.", l)
		inv := func(fanIn int) float64 { return 1 / math.Sqrt(float64(fanIn)) }
		specs = append(specs,
			spec{b + "attn_norm.weight", o.Embd, 1, 0, f32},
			spec{b + "attn_q.weight", o.Embd, o.Embd, inv(o.Embd), f16},
			spec{b + "attn_k.weight", o.Embd, kvWidth, inv(o.Embd), f16},
			spec{b + "attn_v.weight", o.Embd, kvWidth, inv(o.Embd), f16},
			spec{b + "attn_output.weight", o.Embd, o.Embd, inv(o.Embd), f16},
			spec{b + "ffn_norm.weight", o.Embd, 1, 0, f32},
			spec{b + "ffn_gate.weight", o.Embd, o.FF, inv(o.Embd), f16},
			spec{b + "ffn_up.weight", o.Embd, o.FF, inv(o.Embd), f16},
			spec{b + "ffn_down.weight", o.FF, o.Embd, inv(o.FF), f16},
		)
	}
	// An untied output matrix: with tied embeddings a random model mostly
	// predicts the token it just read, with near-zero entropy. A standard
	// deviation of 3/sqrt(width) over a unit-RMS hidden state gives logits
	// with a spread of about 3, i.e. entropies of several bits.
	specs = append(specs,
		spec{"output_norm.weight", o.Embd, 1, 0, f32},
		spec{"output.weight", o.Embd, nVocab, 3 / math.Sqrt(float64(o.Embd)), q8})

	var dataBytes, nParams int64
	for _, s := range specs {
		n := int64(s.ne0) * int64(s.ne1)
		nParams += n
		dataBytes += int64(C.ggml_row_size(s.typ, C.int64_t(s.ne0)))*int64(s.ne1) + 64
	}
	gc := C.ggml_init(C.struct_ggml_init_params{
		mem_size:   C.size_t(dataBytes + int64(len(specs)+1)*int64(C.ggml_tensor_overhead())),
		mem_buffer: nil,
		no_alloc:   false,
	})
	if gc == nil {
		return nil, fmt.Errorf("tiny model: ggml_init failed for %d bytes", dataBytes)
	}
	defer C.ggml_free(gc)
	gg := C.gguf_init_empty()
	if gg == nil {
		return nil, fmt.Errorf("tiny model: gguf_init_empty failed")
	}
	defer C.gguf_free(gg)

	kv := ggufKV{gg}
	kv.str("general.architecture", "llama")
	kv.str("general.name", "fragility tiny llama")
	kv.str("general.size_label", fmt.Sprintf("%.1fM", float64(nParams)/1e6))
	kv.str("general.description", "random seeded weights for tests; not a language model")
	kv.u32("general.file_type", 1) // LLAMA_FTYPE_MOSTLY_F16
	kv.u32("llama.context_length", o.CtxTrain)
	kv.u32("llama.embedding_length", o.Embd)
	kv.u32("llama.block_count", o.Layers)
	kv.u32("llama.feed_forward_length", o.FF)
	kv.u32("llama.attention.head_count", o.Heads)
	kv.u32("llama.attention.head_count_kv", o.KVHeads)
	kv.u32("llama.rope.dimension_count", headDim)
	kv.u32("llama.vocab_size", nVocab)
	kv.f32("llama.rope.freq_base", 10000)
	kv.f32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	kv.str("tokenizer.ggml.model", "bert")
	kv.strs("tokenizer.ggml.tokens", pieces)
	kv.i32s("tokenizer.ggml.token_type", types)
	kv.u32("tokenizer.ggml.bos_token_id", special["[CLS]"])
	kv.u32("tokenizer.ggml.seperator_token_id", special["[SEP]"])
	kv.u32("tokenizer.ggml.unknown_token_id", special["[UNK]"])
	kv.u32("tokenizer.ggml.padding_token_id", special["[PAD]"])
	if id, ok := special["[MASK]"]; ok {
		kv.u32("tokenizer.ggml.mask_token_id", id)
	}
	kv.boolean("tokenizer.ggml.add_bos_token", true)
	kv.boolean("tokenizer.ggml.add_eos_token", false)
	kv.u64("fragility.tiny.seed", o.Seed)
	kv.str("fragility.tiny.tokenizer_sha256", tokSum)

	for i, s := range specs {
		var t *C.struct_ggml_tensor
		if s.ne1 == 1 {
			t = C.ggml_new_tensor_1d(gc, s.typ, C.int64_t(s.ne0))
		} else {
			t = C.ggml_new_tensor_2d(gc, s.typ, C.int64_t(s.ne0), C.int64_t(s.ne1))
		}
		if t == nil {
			return nil, fmt.Errorf("tiny model: could not allocate tensor %s", s.name)
		}
		cname := C.CString(s.name)
		C.ggml_set_name(t, cname)
		C.free(unsafe.Pointer(cname))
		vals := tinyWeights(o.Seed, uint64(i), s.ne0*s.ne1, s.scale)
		if o.NaNWeights {
			for j := range vals {
				vals[j] = float32(math.NaN())
			}
		}
		src := (*C.float)(unsafe.Pointer(&vals[0]))
		switch s.typ {
		case f16:
			C.ggml_fp32_to_fp16_row(src, (*C.ggml_fp16_t)(t.data), C.int64_t(len(vals)))
		case q8:
			C.ggml_quantize_chunk(s.typ, src, t.data, 0, C.int64_t(s.ne1), C.int64_t(s.ne0), nil)
		default:
			C.memcpy(t.data, unsafe.Pointer(src), C.size_t(4*len(vals)))
		}
		C.gguf_add_tensor(gg, t)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), ".tiny-*.gguf")
	if err != nil {
		return nil, fmt.Errorf("tiny model: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	ctmp := C.CString(tmpName)
	defer C.free(unsafe.Pointer(ctmp))
	if !C.gguf_write_to_file(gg, ctmp, false) {
		return nil, fmt.Errorf("tiny model: could not write %s: %s", tmpName, orUnknown(takeLogTail()))
	}
	if err := os.Chmod(tmpName, 0o644); err != nil {
		return nil, fmt.Errorf("tiny model: %w", err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return nil, fmt.Errorf("tiny model: %w", err)
	}
	sum, size, err := hashFile(path)
	if err != nil {
		return nil, err
	}
	return &TinyInfo{Path: path, Bytes: size, NVocab: nVocab, NParams: nParams, SHA256: sum}, nil
}

// tinyWeights returns n values for tensor number stream of a tiny model:
// scale 0 gives all ones (norm weights); otherwise values uniform in
// [-a, a] with a = sqrt(3)*scale, i.e. standard deviation scale. Only integer
// operations and exact conversions are used, so the values are the same on
// every platform.
func tinyWeights(seed, stream uint64, n int, scale float64) []float32 {
	out := make([]float32, n)
	if scale == 0 {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, stream))
	a := math.Sqrt(3) * scale
	for i := range out {
		u := float64(r.Uint64()>>11) / (1 << 53) // [0, 1), exact
		out[i] = float32((2*u - 1) * a)
	}
	return out
}

// ggufKV sets metadata on a gguf_context; keys and values are copied by gguf.
type ggufKV struct{ ctx *C.struct_gguf_context }

func (k ggufKV) key(name string, f func(*C.char)) {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	f(c)
}

func (k ggufKV) str(name, v string) {
	k.key(name, func(c *C.char) {
		cv := C.CString(v)
		defer C.free(unsafe.Pointer(cv))
		C.gguf_set_val_str(k.ctx, c, cv)
	})
}

func (k ggufKV) u32(name string, v int) {
	k.key(name, func(c *C.char) { C.gguf_set_val_u32(k.ctx, c, C.uint32_t(v)) })
}

func (k ggufKV) u64(name string, v uint64) {
	k.key(name, func(c *C.char) { C.gguf_set_val_u64(k.ctx, c, C.uint64_t(v)) })
}

func (k ggufKV) f32(name string, v float32) {
	k.key(name, func(c *C.char) { C.gguf_set_val_f32(k.ctx, c, C.float(v)) })
}

func (k ggufKV) boolean(name string, v bool) {
	k.key(name, func(c *C.char) { C.gguf_set_val_bool(k.ctx, c, C.bool(v)) })
}

func (k ggufKV) i32s(name string, v []int32) {
	k.key(name, func(c *C.char) {
		C.gguf_set_arr_data(k.ctx, c, C.GGUF_TYPE_INT32, unsafe.Pointer(&v[0]), C.size_t(len(v)))
	})
}

func (k ggufKV) strs(name string, v []string) {
	k.key(name, func(c *C.char) {
		arr := (*[1 << 30]*C.char)(C.malloc(C.size_t(len(v)) * C.size_t(unsafe.Sizeof(uintptr(0)))))[:len(v):len(v)]
		for i, s := range v {
			arr[i] = C.CString(s)
		}
		C.gguf_set_arr_str(k.ctx, c, &arr[0], C.size_t(len(v)))
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	})
}
