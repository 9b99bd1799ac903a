package llm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"
)

// EnvMemAvailable names the environment variable that, when set to a number
// of bytes, replaces the memory CheckGGUF believes is available (RAM plus free
// GPU memory). It lets a user keep fragility below a budget and lets tests
// simulate a small machine.
const EnvMemAvailable = "FRAGILITY_MEM_AVAILABLE"

// maxLayers and maxExperts are LLAMA_MAX_LAYERS and LLAMA_MAX_EXPERTS of the
// pinned llama.cpp (src/llama-hparams.h).
const (
	maxLayers  = 512
	maxExperts = 512
)

// validateGGUF parses the GGUF header, metadata and tensor infos with
// github.com/gpustack/gguf-parser-go (no tensor data is read) and refuses,
// with an error naming the file, what llama.cpp would fail on or, worse,
// abort the process for: a corrupt header or metadata, a GGUF version
// llama.cpp does not read, tensor data beyond the end of the file (a truncated
// file), an architecture llama.cpp does not know, layer and expert counts that
// trip llama.cpp's assertions, and a model whose tensors do not fit in the
// available memory (see EnvMemAvailable).
func validateGGUF(path string, fileSize int64, nCtx int) error {
	if err := scanGGUFHeader(path, fileSize); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := parseGGUF(path)
	if err != nil {
		var need, have uint64
		if _, serr := fmt.Sscanf(tensorDataSuffix(err.Error()), "tensor data needs %d bytes but only %d follow the header", &need, &have); serr == nil {
			return fmt.Errorf("%s: truncated GGUF (or a corrupt tensor table): its tensors need %d bytes after the header but only %d are there", path, need, have)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "remaining bytes") {
			return fmt.Errorf("%s: truncated GGUF (or a corrupt length in its header): %v", path, err)
		}
		return fmt.Errorf("%s: corrupt GGUF header or metadata: %v", path, err)
	}
	if v := f.Header.Version; v != gguf.GGUFVersionV2 && v != gguf.GGUFVersionV3 {
		return fmt.Errorf("%s: GGUF version %d is not supported (llama.cpp %s reads versions 2 and 3)", path, v, LlamaCommit)
	}
	if f.TensorDataStartOffset < 0 || f.TensorDataStartOffset > fileSize {
		return fmt.Errorf("%s: corrupt GGUF: tensor data starts at byte %d of a %d-byte file", path, f.TensorDataStartOffset, fileSize)
	}
	if len(f.TensorInfos) == 0 {
		return fmt.Errorf("%s: GGUF file holds no tensors (vocabulary-only or damaged file)", path)
	}
	align, ok, err := uintKey(f.Header.MetadataKV, "general.alignment")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		align = 32 // GGUF_DEFAULT_ALIGNMENT
	}
	if align == 0 || align&(align-1) != 0 {
		return fmt.Errorf("%s: corrupt GGUF metadata: general.alignment is %d, not a power of two", path, align)
	}
	// ggml lays tensors out back to back in table order, each at the next
	// multiple of the alignment, and refuses a file where they are not.
	var tensorBytes, next uint64
	for _, ti := range f.TensorInfos {
		n, err := tensorSize(ti)
		if err != nil {
			return fmt.Errorf("%s: corrupt GGUF tensor table: tensor %q: %v", path, ti.Name, err)
		}
		if ti.Offset != next {
			return fmt.Errorf("%s: corrupt GGUF tensor table: tensor %q is at data offset %d, expected %d", path, ti.Name, ti.Offset, next)
		}
		next = (ti.Offset + n + align - 1) / align * align
		end := uint64(f.TensorDataStartOffset) + ti.Offset + n
		if end < ti.Offset || end > uint64(fileSize) {
			return fmt.Errorf("%s: truncated GGUF: tensor %q ends at byte %d but the file has %d bytes", path, ti.Name, end, fileSize)
		}
		tensorBytes += n
	}
	if err := checkArchitecture(f.Header.MetadataKV); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	kv := kvCacheBytes(f.Header.MetadataKV, nCtx)
	return checkMemory(path, tensorBytes, kv)
}

// kvCacheBytes estimates llama.cpp's KV cache for a context of nCtx tokens
// with f16 keys and values (the default KV type): for every layer, nCtx ×
// (n_embd_k_gqa + n_embd_v_gqa) × 2 bytes, where n_embd_k_gqa = key_length
// × head_count_kv (key_length defaults to embedding_length / head_count,
// head_count_kv to head_count), as llama_hparams computes them. Per-layer
// head-count arrays count their largest value; sliding-window layers are
// counted at full size, so the estimate errs high. 0 when nCtx is 0 or a
// key is missing.
func kvCacheBytes(kvs gguf.GGUFMetadataKVs, nCtx int) uint64 {
	if nCtx <= 0 {
		return 0
	}
	arch := ""
	if kv, ok := kvs.Get("general.architecture"); ok && kv.ValueType == gguf.GGUFMetadataValueTypeString {
		arch = kv.ValueString()
	}
	num := func(key string) uint64 {
		kv, ok := kvs.Get(arch + "." + key)
		if !ok {
			return 0
		}
		if kv.ValueType == gguf.GGUFMetadataValueTypeArray {
			var m uint64
			for _, x := range kv.ValueArray().Array {
				switch v := x.(type) {
				case uint32:
					m = max(m, uint64(v))
				case int32:
					m = max(m, uint64(max(v, 0)))
				}
			}
			return m
		}
		v, _, err := uintKey(kvs, arch+"."+key)
		if err != nil {
			return 0
		}
		return v
	}
	layers, embd, heads := num("block_count"), num("embedding_length"), num("attention.head_count")
	if layers == 0 || embd == 0 || heads == 0 {
		return 0
	}
	headsKV := num("attention.head_count_kv")
	if headsKV == 0 {
		headsKV = heads
	}
	kLen, vLen := num("attention.key_length"), num("attention.value_length")
	if kLen == 0 {
		kLen = embd / heads
	}
	if vLen == 0 {
		vLen = embd / heads
	}
	return layers * uint64(nCtx) * (kLen + vLen) * headsKV * 2
}

// parseGGUF runs the parser on a memory map of the file (over ten times
// faster than reads and seeks through a 262,144-token vocabulary) and turns a
// panic into an error: the parser panics on some integer overflows in tensor
// sizes, and a file that shrinks while mapped faults.
func parseGGUF(path string) (f *gguf.GGUFFile, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return gguf.ParseGGUFFile(path, gguf.SkipLargeMetadata(), gguf.UseMMap())
}

// tensorSize is ti.Bytes() with the parser's overflow panic turned into an
// error.
func tensorSize(ti gguf.GGUFTensorInfo) (n uint64, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("%v", r)
		}
	}()
	return ti.Bytes(), nil
}

// tensorDataSuffix returns the part of a parser error from "tensor data
// needs" on, or "" when there is none.
func tensorDataSuffix(s string) string {
	if i := strings.Index(s, "tensor data needs "); i >= 0 {
		return s[i:]
	}
	return ""
}

// checkArchitecture checks general.architecture against the architectures
// the pinned llama.cpp knows, and the hyperparameters that llama.cpp's
// load_hparams asserts on (GGML_ASSERT aborts the process instead of
// returning an error).
func checkArchitecture(kvs gguf.GGUFMetadataKVs) error {
	kv, ok := kvs.Get("general.architecture")
	if !ok {
		return errors.New("corrupt GGUF metadata: no general.architecture key")
	}
	if kv.ValueType != gguf.GGUFMetadataValueTypeString {
		return fmt.Errorf("corrupt GGUF metadata: general.architecture holds a %v, not a string", kv.ValueType)
	}
	arch := kv.ValueString()
	if arch == "clip" {
		return errors.New(`general.architecture is "clip": a vision projector (mmproj) file, not a language model`)
	}
	if !KnownArchitecture(arch) {
		return fmt.Errorf("unknown model architecture %q (general.architecture): llama.cpp %s does not support it", arch, LlamaCommit)
	}
	layers, ok, err := uintKey(kvs, arch+".block_count")
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("corrupt GGUF metadata: no %s.block_count key", arch)
	}
	if layers < 1 || layers > maxLayers {
		return fmt.Errorf("corrupt GGUF metadata: %s.block_count is %d, llama.cpp accepts 1 to %d layers", arch, layers, maxLayers)
	}
	var counts [4]uint64
	for i, k := range []string{"expert_count", "expert_used_count", "expert_group_count", "expert_group_used_count"} {
		if counts[i], _, err = uintKey(kvs, arch+"."+k); err != nil {
			return err
		}
	}
	experts, used, groups, groupsUsed := counts[0], counts[1], counts[2], counts[3]
	bad := experts > maxExperts || used > experts
	if experts > 0 {
		bad = bad || used == 0 || groups >= experts ||
			(groups > 1 && (experts%groups != 0 || groupsUsed == 0 || groupsUsed >= groups))
	} else {
		bad = bad || used != 0 || groups != 0
	}
	if bad {
		return fmt.Errorf("corrupt GGUF metadata: inconsistent %s expert counts (expert_count %d, expert_used_count %d, expert_group_count %d, expert_group_used_count %d)",
			arch, experts, used, groups, groupsUsed)
	}
	if kv, ok := kvs.Get(arch + ".rope.scaling.type"); ok {
		s := ""
		if kv.ValueType == gguf.GGUFMetadataValueTypeString {
			s = kv.ValueString()
		}
		switch s {
		case "none", "linear", "yarn", "longrope":
		default:
			return fmt.Errorf("corrupt GGUF metadata: %s.rope.scaling.type is %q, llama.cpp knows none, linear, yarn and longrope", arch, s)
		}
	}
	return nil
}

// uintKey reads a non-negative integer metadata value; ok is false when the
// key is absent.
func uintKey(kvs gguf.GGUFMetadataKVs, key string) (v uint64, ok bool, err error) {
	kv, ok := kvs.Get(key)
	if !ok {
		return 0, false, nil
	}
	switch kv.ValueType {
	case gguf.GGUFMetadataValueTypeUint8, gguf.GGUFMetadataValueTypeUint16, gguf.GGUFMetadataValueTypeUint32, gguf.GGUFMetadataValueTypeUint64:
		return gguf.ValueNumeric[uint64](kv), true, nil
	case gguf.GGUFMetadataValueTypeInt8, gguf.GGUFMetadataValueTypeInt16, gguf.GGUFMetadataValueTypeInt32, gguf.GGUFMetadataValueTypeInt64:
		n := gguf.ValueNumeric[int64](kv)
		if n < 0 {
			return 0, true, fmt.Errorf("corrupt GGUF metadata: %s is %d, a negative count", key, n)
		}
		return uint64(n), true, nil
	}
	return 0, true, fmt.Errorf("corrupt GGUF metadata: %s holds a %v, not an integer", key, kv.ValueType)
}

// KnownArchitecture reports whether the pinned llama.cpp can build a language
// model of the given general.architecture.
func KnownArchitecture(arch string) bool {
	_, ok := knownArchitectures[arch]
	return ok
}

// knownArchitectures are the names in LLM_ARCH_NAMES of the pinned llama.cpp
// (src/llama-arch.cpp), less the "clip" placeholder and "(unknown)".
// TestKnownArchitecturesMatchPin checks this set against that file.
var knownArchitectures = setOf(strings.Fields(`
	llama llama4 deci falcon grok gpt2 gptj gptneox mpt baichuan starcoder refact bert nomic-bert
	nomic-bert-moe neo-bert jina-bert-v2 jina-bert-v3 bloom stablelm qwen qwen2 qwen2moe qwen2vl qwen3
	qwen3moe qwen3next qwen3vl qwen3vlmoe phi2 phi3 phimoe plamo plamo2 codeshell orion internlm2
	minicpm minicpm3 gemma gemma2 gemma3 gemma3n gemma-embedding starcoder2 mamba mamba2 jamba
	falcon-h1 xverse command-r cohere2 dbrx olmo olmo2 olmoe openelm arctic deepseek deepseek2
	chatglm glm4 glm4moe bitnet t5 t5encoder jais nemotron nemotron_h nemotron_h_moe exaone exaone4
	rwkv6 rwkv6qwen2 rwkv7 arwkv7 granite granitemoe granitehybrid chameleon solar wavtokenizer-dec
	plm bailingmoe bailingmoe2 dots1 arcee afmoe ernie4_5 ernie4_5-moe hunyuan-moe hunyuan-dense
	smollm3 gpt-oss lfm2 lfm2moe dream smallthinker llada llada-moe seed_oss grovemoe apertus
	minimax-m2 cogvlm rnd1 pangu-embedded mistral3`))

func setOf(names []string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}

// checkMemory refuses a model whose tensors (need) and KV cache (kv) need
// more memory than is available: MemAvailable of /proc/meminfo plus the free memory of every GPU
// ggml knows, or the value of EnvMemAvailable when set. Where neither can be
// read (not Linux), the check is skipped.
func checkMemory(path string, need, kv uint64) error {
	avail, what, err := availableMemory()
	if err != nil {
		return err
	}
	if what == "" || need+kv <= avail {
		return nil
	}
	if kv > 0 && need <= avail {
		return fmt.Errorf("%s: too large for this machine with this context: its tensors need %s and the KV cache about %s but only %s of memory is available (%s); lower --n-ctx, free memory or use a smaller quantization",
			path, humanBytes(need), humanBytes(kv), humanBytes(avail), what)
	}
	return fmt.Errorf("%s: too large for this machine: its tensors need %s but only %s of memory is available (%s); free memory or use a smaller quantization",
		path, humanBytes(need), humanBytes(avail), what)
}

// availableMemory returns the bytes a model may use and where the figure
// comes from ("" when unknown).
func availableMemory() (uint64, string, error) {
	if s, ok := os.LookupEnv(EnvMemAvailable); ok && s != "" {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("%s=%q: want a number of bytes", EnvMemAvailable, s)
		}
		return n, EnvMemAvailable, nil
	}
	ram, ok := memAvailable("/proc/meminfo")
	if !ok {
		return 0, "", nil
	}
	what := "MemAvailable in /proc/meminfo"
	var gpu uint64
	for _, d := range GPUs() {
		gpu += d.MemoryFree
	}
	if gpu > 0 {
		what += " plus free GPU memory"
	}
	return ram + gpu, what, nil
}

// memAvailable reads MemAvailable (kB) from a meminfo file, in bytes.
func memAvailable(meminfo string) (uint64, bool) {
	data, err := os.ReadFile(meminfo)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// humanBytes formats a byte count in binary units, e.g. "241.3 MiB".
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// loadFailure shortens what llama.cpp logged when it refused a model to the
// reason it gave ("error loading model: X" → "X"); other logs are returned
// as they are.
// When that reason only says the loader failed, the lines logged before it
// (ggml's own reason) are returned instead.
func loadFailure(tail string) string {
	const marker = "error loading model: "
	lines := splitLogTail(tail)
	for i, l := range lines {
		_, reason, ok := strings.Cut(l, marker)
		if !ok {
			continue
		}
		if strings.HasPrefix(reason, "llama_model_loader: failed to load model") && i > 0 {
			return strings.Join(lines[:i], "; ")
		}
		return strings.TrimSpace(reason)
	}
	return orUnknown(tail)
}

// logLineStart matches where takeLogTail joined two log lines: "; " and the
// name of the function that logged the next one.
var logLineStart = regexp.MustCompile(`; [A-Za-z_][A-Za-z0-9_]*: `)

// splitLogTail splits what takeLogTail joined back into log lines; a "; "
// inside a line (e.g. "wrong shape; expected ...") stays in its line.
func splitLogTail(tail string) []string {
	var lines []string
	start := 0
	for _, m := range logLineStart.FindAllStringIndex(tail, -1) {
		lines = append(lines, tail[start:m[0]])
		start = m[0] + 2
	}
	return append(lines, tail[start:])
}

// pathErrCause returns the cause of an *os.PathError ("permission denied"),
// so that an error line names the file once.
func pathErrCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
