package llm

/*
#include <stdlib.h>
#include "llama.h"
#include "helpers.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// Params are the load-time settings of a model and its context. Every field
// can change a logit and is recorded in manifests. The zero value is usable:
// Load fills in defaults (see Defaults).
type Params struct {
	GPULayers int `json:"gpu_layers"` // layers offloaded to a GPU; -1 = all; 0 = CPU only
	Threads   int `json:"threads"`    // CPU threads for llama_decode calls of one token (generation, one sequence at a time); 0 = DefaultThreads(), every core
	// ThreadsBatch is llama.cpp's n_threads_batch: the CPU threads for
	// llama_decode calls of more than one token (prompt processing, and the
	// generation steps of several sequences at once); 0 =
	// DefaultThreadsBatch(). Each output of a ggml CPU kernel is computed by
	// one thread, so the thread counts change speed, not logits (tested).
	ThreadsBatch int  `json:"threads_batch"`
	NCtx         int  `json:"n_ctx"`      // context length per sequence in tokens; 0 = 2048
	NBatch       int  `json:"n_batch"`    // logical batch size in tokens; 0 = 512
	NUBatch      int  `json:"n_ubatch"`   // physical batch size in tokens; 0 = n_batch
	NSeq         int  `json:"n_seq"`      // sequences decoded together in one llama_batch; 0 = 1
	FlashAttn    bool `json:"flash_attn"` // enable flash attention
	// Seed is the seed of the sampler when temperature sampling is used; it
	// does not affect greedy decoding.
	Seed uint64 `json:"seed"`
}

// DefaultThreads is the default number of llama.cpp threads for one-token
// decodes: every core. A one-token decode is where a batched run spends its
// tail (the last sequences of a batch still generating) and a run of one
// sequence all of its time, and on the 2-core development machine every
// core decoded 1.9× the tokens of one (Gemma 3 270M, `fragility bench`:
// 49.97 against 26.36 tokens/s). The same 32 items of the demo's design
// (8 per batch, 384-token budget, no DDC) took 150 s with 2 threads against
// 188 s with 1, and 168 s with the DDC embedder working beside generation;
// the tokens and entropies were identical. The entropy pass then runs
// between two decodes on the same threads (DefaultEntropyPool,
// useThreadPool); `fragility bench` measures what that costs.
//
// ThreadsEnv, when set to a positive integer, replaces every core: several
// processes sharing a machine (the test packages `make test` runs at once,
// a scheduler's job given fewer cores than the machine has) each take that
// many, since llama.cpp's threads spin and slow down by several times when
// more of them than cores are runnable. Any other value is ignored, and a
// value above MaxThreads capped (ThreadsEnvNote says so; the command line
// prints it).
func DefaultThreads() int { return threadsDefault() }

// ThreadsEnv is the environment variable that sets DefaultThreads and
// DefaultThreadsBatch.
const ThreadsEnv = "FRAGILITY_THREADS"

// threadsDefault is ThreadsEnv's value when it is a positive integer (at
// most MaxThreads), else every core.
func threadsDefault() int {
	if n, _ := threadsFromEnv(); n > 0 {
		return n
	}
	return max(1, runtime.NumCPU())
}

// ThreadsEnvNote is a one-line note on ThreadsEnv when it is set but not
// taken as given: not a positive integer (ignored) or above MaxThreads
// (capped); "" when it is unset or taken as given.
func ThreadsEnvNote() string {
	_, note := threadsFromEnv()
	return note
}

// threadsFromEnv parses ThreadsEnv: n > 0 when it is a positive integer
// (capped at MaxThreads), and a note when its value is not taken as given.
func threadsFromEnv() (n int, note string) {
	v := os.Getenv(ThreadsEnv)
	if v == "" {
		return 0, ""
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n <= 0:
		return 0, fmt.Sprintf("%s=%q is not a positive integer: ignored (every core: %d)", ThreadsEnv, v, max(1, runtime.NumCPU()))
	case n > MaxThreads:
		return MaxThreads, fmt.Sprintf("%s=%d is above %d, the most llama.cpp takes: %d threads", ThreadsEnv, n, MaxThreads, MaxThreads)
	}
	return n, ""
}

// MaxThreads is the most threads a Params field may ask for: ggml's
// GGML_MAX_N_THREADS. Load refuses more.
const MaxThreads = 512

// DefaultThreadsBatch is the default of Params.ThreadsBatch: every core.
// A decode of many tokens is compute-bound and long enough that the entropy
// pass of a few tokens beside it costs little; on the 2-core development
// machine two threads halve the time of a 500-token prompt (5.9 s → 3.1 s on
// the default LLM), as llama-cpp-python's default (n_threads_batch = all
// cores) does for the peer of make bench-peer. ThreadsEnv, when set to a
// positive integer, replaces every core here too (see DefaultThreads): a
// process given N cores decodes its prompts on N threads as well.
func DefaultThreadsBatch() int { return threadsDefault() }

// Defaults returns p with every zero field replaced by its default.
func (p Params) Defaults() Params {
	if p.Threads <= 0 {
		p.Threads = DefaultThreads()
	}
	if p.ThreadsBatch <= 0 {
		p.ThreadsBatch = DefaultThreadsBatch()
	}
	if p.NCtx <= 0 {
		p.NCtx = 2048
	}
	if p.NBatch <= 0 {
		p.NBatch = 512
	}
	if p.NUBatch <= 0 || p.NUBatch > p.NBatch {
		p.NUBatch = p.NBatch // llama.cpp uses min(n_ubatch, n_batch)
	}
	if p.NSeq <= 0 {
		p.NSeq = 1
	}
	return p
}

// Check reports what in p (after Defaults) llama.cpp would refuse or abort
// on: a thread count above MaxThreads, or a logical batch (NBatch) smaller
// than the sequences decoded together (NSeq), since every generation step
// decodes one token of each sequence in one llama_batch and llama_decode
// asserts that a batch holds at most n_batch tokens.
func (p Params) Check() error {
	p = p.Defaults()
	if p.Threads > MaxThreads || p.ThreadsBatch > MaxThreads {
		return fmt.Errorf("%d threads and %d batch threads asked for; ggml takes at most %d", p.Threads, p.ThreadsBatch, MaxThreads)
	}
	if p.NBatch < p.NSeq {
		return fmt.Errorf("n_batch %d is smaller than the %d sequences decoded together: each generation step decodes one token of every sequence in one batch, so n_batch must be at least %d", p.NBatch, p.NSeq, p.NSeq)
	}
	return nil
}

// Metadata is what fragility records about a model file.
type Metadata struct {
	Path           string `json:"path"`
	FileSize       int64  `json:"file_size_bytes"`
	SHA256         string `json:"sha256"`
	Description    string `json:"description"`  // llama_model_desc, e.g. "gemma3 270M Q4_K - Medium"
	Name           string `json:"name"`         // general.name ("" when absent)
	Architecture   string `json:"architecture"` // general.architecture, e.g. "gemma3"
	SizeLabel      string `json:"size_label"`   // general.size_label, e.g. "270M"
	Quantization   string `json:"quantization"` // llama.cpp file type name from general.file_type, e.g. "Q4_K_M"
	FileType       int    `json:"file_type"`    // general.file_type (enum llama_ftype); -1 when absent
	NVocab         int    `json:"n_vocab"`      // vocabulary size = length of a logits row
	NParams        uint64 `json:"n_params"`     // parameter count
	NLayer         int    `json:"n_layer"`
	NCtxTrain      int    `json:"n_ctx_train"`
	ChatTemplate   string `json:"chat_template"` // tokenizer.chat_template ("" when the model has none)
	AddBOS         bool   `json:"add_bos"`
	ModelSizeBytes uint64 `json:"tensor_bytes"` // total size of all tensors (llama_model_size)
	// RequantizedFrom is KeyRequantizedFrom of a file fragility quantize made
	// from an already quantized one ("Q4_K_M sha256:..."), "" otherwise.
	RequantizedFrom string `json:"requantized_from,omitempty"`
}

// Model is a loaded GGUF model together with one llama.cpp context. It owns C
// memory: call Close. Not safe for concurrent use.
type Model struct {
	model  *C.struct_llama_model
	ctx    *C.struct_llama_context
	vocab  *C.struct_llama_vocab
	batch  C.struct_llama_batch
	params Params
	// kept is the GenerateOptions.KeepPrefix whose KV cells sequence 0
	// holds from an earlier GenerateBatch (nil: none); clearMemory drops it.
	kept []Token
	// last is the result of the latest GenerateBatch that completed, whose
	// sequences' KV cells ForceAfter extends (nil: none, or the cells were
	// touched since).
	last []*Generation
	meta Metadata

	// Entropy passes that overlap the next llama_decode (see step).
	passes   sync.WaitGroup
	passJobs chan passJob // queue of the pass pool (nil: the pool is off); see EntropyPool
	poolSize int          // workers of the pass pool
	bufPool  sync.Pool
	// guard lets passes read the logits in place (C memory; nil when the
	// pool is off); see queuePass.
	guard *C.struct_fragility_pass_guard
	// tp is the context's own ggml thread pool (nil: llama.cpp starts
	// threads for each graph); see useThreadPool.
	tp *threadPool
}

// ErrNotGGUF is returned (wrapped) by Load for a file that is not a GGUF file.
var ErrNotGGUF = errors.New("not a GGUF file")

// AfterLoad, when not nil, is called with the model after each successful
// Load (the command line says once, there, whether the model runs on a GPU
// or the CPU: not before input was checked, so that bad input gets one
// line). It must be safe to call from several goroutines.
var AfterLoad func(*Model)

// Load opens the GGUF file at path with the given parameters and creates a
// context for it. The file is checked before llama.cpp reads it (exists,
// regular, non-empty, GGUF magic; see CheckGGUF) and hashed (sha256) for the
// metadata. Errors name the file and, when llama.cpp refused it, carry the
// last lines llama.cpp logged.
func Load(path string, p Params) (*Model, error) {
	p = p.Defaults()
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := CheckGGUF(path); err != nil {
		return nil, err
	}
	sum, size, err := hashModel(path)
	if err != nil {
		return nil, err
	}
	initBackend()
	takeLogTail()

	mp := C.llama_model_default_params()
	mp.n_gpu_layers = C.int32_t(p.GPULayers)
	if p.GPULayers < 0 {
		mp.n_gpu_layers = 999
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	model := C.llama_model_load_from_file(cpath, mp)
	if model == nil {
		return nil, fmt.Errorf("%s: llama.cpp could not load the model: %s", path, loadFailure(takeLogTail()))
	}
	m := &Model{model: model, vocab: C.llama_model_get_vocab(model), params: p}

	cp := C.llama_context_default_params()
	cp.n_ctx = C.uint32_t(p.NCtx * p.NSeq)
	cp.n_batch = C.uint32_t(p.NBatch)
	cp.n_ubatch = C.uint32_t(p.NUBatch)
	cp.n_seq_max = C.uint32_t(p.NSeq)
	cp.n_threads = C.int32_t(p.Threads)
	cp.n_threads_batch = C.int32_t(p.ThreadsBatch)
	cp.no_perf = true
	cp.kv_unified = false
	if p.FlashAttn {
		cp.flash_attn_type = C.LLAMA_FLASH_ATTN_TYPE_ENABLED
	} else {
		cp.flash_attn_type = C.LLAMA_FLASH_ATTN_TYPE_DISABLED
	}
	if m.poolWorkers() > 0 {
		m.guard = (*C.struct_fragility_pass_guard)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_fragility_pass_guard{}))))
		cp.cb_eval = C.ggml_backend_sched_eval_callback(C.fragility_pass_guard_cb)
		cp.cb_eval_user_data = unsafe.Pointer(m.guard)
	}
	m.ctx = C.llama_init_from_model(model, cp)
	if m.ctx == nil {
		C.free(unsafe.Pointer(m.guard))
		C.llama_model_free(model)
		return nil, fmt.Errorf("%s: llama.cpp could not create a context (n_ctx=%d, n_seq=%d): %s", path, p.NCtx, p.NSeq, orUnknown(takeLogTail()))
	}
	if m.useThreadPool() {
		if err := m.attachThreadPool(); err != nil {
			C.llama_free(m.ctx)
			C.free(unsafe.Pointer(m.guard))
			C.llama_model_free(model)
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	m.batch = C.llama_batch_init(C.int32_t(max(p.NBatch, p.NSeq)), 0, C.int32_t(p.NSeq))
	m.meta = m.readMetadata(path, sum, size)
	m.startPool()
	if AfterLoad != nil {
		AfterLoad(m)
	}
	return m, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason given (set FRAGILITY_LLAMA_LOG=1 to see llama.cpp's log)"
	}
	return s
}

// Close frees the context, the batch and the model. It is safe to call twice.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	if m.passJobs != nil {
		m.passes.Wait()
		close(m.passJobs)
		m.passJobs = nil
	}
	if m.ctx != nil {
		C.llama_batch_free(m.batch)
		C.llama_free(m.ctx)
		m.ctx = nil
	}
	m.tp.free()
	m.tp = nil
	if m.model != nil {
		C.llama_model_free(m.model)
		m.model = nil
	}
	C.free(unsafe.Pointer(m.guard))
	m.guard = nil
	return nil
}

// Params returns the parameters the model was loaded with, defaults filled in.
func (m *Model) Params() Params { return m.params }

// Metadata returns what was read from the model file at load time.
func (m *Model) Metadata() Metadata { return m.meta }

// NVocab returns the vocabulary size, the length of one row of logits.
func (m *Model) NVocab() int { return m.meta.NVocab }

func (m *Model) metaString(key string) (string, bool) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 256)
	for {
		n := C.llama_model_meta_val_str(m.model, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		if n < 0 {
			return "", false
		}
		if int(n) < len(buf) {
			return string(buf[:n]), true
		}
		buf = make([]byte, int(n)+1)
	}
}

func (m *Model) readMetadata(path, sum string, size int64) Metadata {
	md := Metadata{Path: path, FileSize: size, SHA256: sum, FileType: -1}
	buf := make([]byte, 512)
	n := C.llama_model_desc(m.model, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if n > 0 {
		md.Description = string(buf[:min(int(n), len(buf)-1)])
	}
	md.Name, _ = m.metaString("general.name")
	md.Architecture, _ = m.metaString("general.architecture")
	md.SizeLabel, _ = m.metaString("general.size_label")
	md.RequantizedFrom, _ = m.metaString(KeyRequantizedFrom)
	if ft, ok := m.metaString("general.file_type"); ok {
		if v, err := strconv.Atoi(ft); err == nil {
			md.FileType = v
			md.Quantization = FileTypeName(v)
		}
	}
	if md.Quantization == "" {
		md.Quantization = "unknown"
	}
	md.NVocab = int(C.llama_vocab_n_tokens(m.vocab))
	md.NParams = uint64(C.llama_model_n_params(m.model))
	md.NLayer = int(C.llama_model_n_layer(m.model))
	md.NCtxTrain = int(C.llama_model_n_ctx_train(m.model))
	md.ModelSizeBytes = uint64(C.llama_model_size(m.model))
	md.AddBOS = bool(C.llama_vocab_get_add_bos(m.vocab))
	if t := C.llama_model_chat_template(m.model, nil); t != nil {
		md.ChatTemplate = C.GoString(t)
	}
	return md
}

// fileTypeNames maps enum llama_ftype (llama.h) to llama.cpp's quantization
// type names, as llama-quantize prints them.
var fileTypeNames = map[int]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
	37: "TQ2_0", 38: "MXFP4_MOE",
}

// FileTypeName returns the quantization type name of a general.file_type
// value (enum llama_ftype), or "ftype(N)" for an unknown value.
func FileTypeName(ft int) string {
	if n, ok := fileTypeNames[ft]; ok {
		return n
	}
	return "ftype(" + strconv.Itoa(ft) + ")"
}

// FileTypeByName returns the enum llama_ftype value of a quantization type
// name such as "Q4_K_M" (case-sensitive, llama.cpp spelling).
func FileTypeByName(name string) (int, bool) {
	for k, v := range fileTypeNames {
		if v == name {
			return k, true
		}
	}
	return 0, false
}

// CheckGGUF checks, without llama.cpp, that path is a readable, non-empty
// regular file that starts with the GGUF magic, and that its header, metadata,
// tensor table and size are sound and fit in memory (see validateGGUF).
// Errors are one line that names the file and the problem.
func CheckGGUF(path string) error { return CheckGGUFContext(path, 0) }

// CheckGGUFContext is CheckGGUF with the memory check counting, besides the
// tensors, the f16 KV cache of a context of nCtx tokens (all sequences
// together; 0 counts none): see kvCacheBytes.
func CheckGGUFContext(path string, nCtx int) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file", path)
		}
		return fmt.Errorf("%s: cannot read: %w", path, pathErrCause(err))
	}
	if st.IsDir() {
		return fmt.Errorf("%s: is a directory, not a GGUF file", path)
	}
	if st.Size() == 0 {
		return fmt.Errorf("%s: empty file: %w", path, ErrNotGGUF)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%v), not a GGUF file", path, st.Mode().Type())
	}
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: cannot read: %w", path, pathErrCause(err))
	}
	defer fh.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(fh, magic); err != nil || !bytes.Equal(magic, []byte("GGUF")) {
		return fmt.Errorf("%s: %w (bad magic %q)", path, ErrNotGGUF, magic)
	}
	return validateGGUF(path, st.Size(), nCtx)
}
