package llm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	gguf "github.com/gpustack/gguf-parser-go"

	"github.com/fragility/fragility/models"
)

// gemmaFile returns the path of the cached Gemma 3 270M model, whose
// metadata (gemma3.* keys) these tests edit.
func gemmaFile(t *testing.T) string {
	t.Helper()
	p, err := models.PathOf(gemmaName)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ggufHeader returns the bytes of the Gemma model before its tensor data
// (header, metadata, tensor table, padding) and the model's file size.
func ggufHeader(t *testing.T) (header []byte, size int64) {
	t.Helper()
	src := gemmaFile(t)
	f, err := gguf.ParseGGUFFile(src, gguf.SkipLargeMetadata())
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	header = make([]byte, f.TensorDataStartOffset)
	if _, err := fh.ReadAt(header, 0); err != nil {
		t.Fatal(err)
	}
	return header, st.Size()
}

// writeSparse writes header to a new file in dir and extends it (sparsely,
// with zeros) to size bytes: a file of the right size and layout whose
// tensor data is never read by the checks under test.
func writeSparse(t *testing.T, dir, name string, header []byte, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, header, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p
}

// kvValueOffset returns the offset of the value type (uint32) of the
// metadata key in a GGUF header; the value itself follows it.
func kvValueOffset(t *testing.T, header []byte, key string) int {
	t.Helper()
	var k bytes.Buffer
	binary.Write(&k, binary.LittleEndian, uint64(len(key)))
	k.WriteString(key)
	i := bytes.Index(header, k.Bytes())
	if i < 0 {
		t.Fatalf("key %s not in the header", key)
	}
	return i + k.Len()
}

// wantErr fails unless err is one line that names path and contains want.
func wantErr(t *testing.T, what string, err error, path, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %q", what, want)
	case !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q, want one naming %s and %q", what, err, path, want)
	case strings.Contains(err.Error(), "\n"):
		t.Errorf("%s: error spans lines: %q", what, err)
	default:
		t.Logf("%s: %v", what, err)
	}
}

func TestCheckGGUFBadFiles(t *testing.T) {
	header, size := ggufHeader(t)
	dir := t.TempDir()
	src := gemmaFile(t)
	if err := CheckGGUF(src); err != nil {
		t.Fatalf("Gemma model refused: %v", err)
	}

	// Truncated: the whole header and the first MiB of tensor data.
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "truncated.gguf")
	os.WriteFile(trunc, data[:len(header)+1<<20], 0o644)
	cutEnd := filepath.Join(dir, "cut-end.gguf")
	os.WriteFile(cutEnd, data[:len(data)-100], 0o644)
	headerOnly := filepath.Join(dir, "header-cut.gguf")
	os.WriteFile(headerOnly, header[:len(header)/2], 0o644)
	data = nil

	archAt := kvValueOffset(t, header, "general.architecture")
	blocksAt := kvValueOffset(t, header, "gemma3.block_count")

	// Corrupt metadata, three ways: a value type no GGUF has, a key length
	// far beyond the file, and a layer count of 0 (which makes llama.cpp
	// abort the process in llama_hparams::n_head instead of returning).
	h := bytes.Clone(header)
	binary.LittleEndian.PutUint32(h[archAt:], 0x99)
	badType := writeSparse(t, dir, "bad-type.gguf", h, size)
	h = bytes.Clone(header)
	h[archAt+4+7] ^= 0x80 // high byte of the architecture string's length
	badLen := writeSparse(t, dir, "bad-length.gguf", h, size)
	h = bytes.Clone(header)
	binary.LittleEndian.PutUint32(h[blocksAt+4:], 0)
	zeroLayers := writeSparse(t, dir, "zero-layers.gguf", h, size)

	// An architecture llama.cpp does not know: same length as "gemma3".
	h = bytes.Clone(header)
	if got := string(h[archAt+12 : archAt+18]); got != "gemma3" {
		t.Fatalf("architecture bytes %q", got)
	}
	copy(h[archAt+12:], "qwerty")
	unknownArch := writeSparse(t, dir, "unknown-arch.gguf", h, size)

	// A tensor moved in the table (ggml would refuse it in C).
	h = bytes.Clone(header)
	name := []byte("output_norm.weight")
	i := bytes.Index(h, name)
	if i < 0 {
		t.Fatal("no output_norm.weight in the tensor table")
	}
	// name, n_dims (u32), one dim (u64), type (u32), offset (u64)
	off := i + len(name) + 4 + 8 + 4
	binary.LittleEndian.PutUint64(h[off:], binary.LittleEndian.Uint64(h[off:])+32)
	moved := writeSparse(t, dir, "moved-tensor.gguf", h, size)

	for _, c := range []struct{ name, path, want string }{
		{"truncated", trunc, "truncated GGUF"},
		{"cut at the end", cutEnd, "truncated GGUF"},
		{"cut in the header", headerOnly, "truncated GGUF"},
		{"bad value type", badType, `corrupt GGUF metadata: key "general.architecture" has value type 153, not a GGUF value type`},
		{"bad string length", badLen, `truncated GGUF (or a corrupt length in its header): key "general.architecture": string 0 has length`},
		{"zero layers", zeroLayers, "corrupt GGUF metadata: gemma3.block_count is 0"},
		{"unknown architecture", unknownArch, `unknown model architecture "qwerty"`},
		{"moved tensor", moved, `corrupt GGUF tensor table: tensor "output_norm.weight" is at data offset`},
	} {
		wantErr(t, c.name, CheckGGUF(c.path), c.path, c.want)
	}
}

// TestLoadRefusesBeforeC checks that Load gives CheckGGUF's error (and does
// not reach llama.cpp, which aborts on a zero layer count).
func TestLoadRefusesBeforeC(t *testing.T) {
	header, size := ggufHeader(t)
	h := bytes.Clone(header)
	binary.LittleEndian.PutUint32(h[kvValueOffset(t, header, "gemma3.block_count")+4:], 0)
	p := writeSparse(t, t.TempDir(), "zero-layers.gguf", h, size)
	_, err := Load(p, Params{Threads: 1, NCtx: 64})
	wantErr(t, "Load", err, p, "block_count is 0")
}

// TestLoadLlamaRefusal checks a file that passes every check here but that
// llama.cpp refuses (a required tensor renamed): one line with llama.cpp's
// reason, no crash.
func TestLoadLlamaRefusal(t *testing.T) {
	header, size := ggufHeader(t)
	h := bytes.Clone(header)
	name := []byte("output_norm.weight")
	i := bytes.Index(h, name)
	if i < 0 {
		t.Fatal("no output_norm.weight")
	}
	copy(h[i:], "output_norm.weighx")
	p := writeSparse(t, t.TempDir(), "renamed-tensor.gguf", h, size)
	if err := CheckGGUF(p); err != nil {
		t.Fatalf("CheckGGUF: %v", err)
	}
	_, err := Load(p, Params{Threads: 1, NCtx: 64})
	wantErr(t, "Load", err, p, "llama.cpp could not load the model: missing tensor 'output_norm.weight'")
}

// TestCheckGGUFFlipSweep flips one random bit at a time in the metadata
// (outside the large tokenizer arrays) and the tensor table: the check must
// never panic, and every error must be one line naming the file.
func TestCheckGGUFFlipSweep(t *testing.T) {
	header, size := ggufHeader(t)
	p := writeSparse(t, t.TempDir(), "flip.gguf", header, size)
	fh, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tokens := kvValueOffset(t, header, "tokenizer.ggml.tokens")
	bos := kvValueOffset(t, header, "tokenizer.ggml.bos_token_id") - 40
	regions := [][2]int{{24, tokens}, {bos, len(header)}}
	rng := rand.New(rand.NewPCG(7, 7))
	n := 150
	if testing.Short() {
		n = 30
	}
	refused := 0
	for range n {
		r := regions[rng.IntN(len(regions))]
		at := r[0] + rng.IntN(r[1]-r[0])
		b := header[at] ^ byte(1<<rng.IntN(8))
		fh.WriteAt([]byte{b}, int64(at))
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("flip at byte %d: panic %v", at, v)
				}
			}()
			if err := CheckGGUF(p); err != nil {
				refused++
				if !strings.HasPrefix(err.Error(), p+": ") || strings.Contains(err.Error(), "\n") {
					t.Errorf("flip at byte %d: error %q", at, err)
				}
			}
		}()
		fh.WriteAt(header[at:at+1], int64(at))
	}
	if refused == 0 {
		t.Errorf("no flip out of %d was refused", n)
	}
	t.Logf("%d of %d flips refused", refused, n)
}

func TestCheckGGUFTooLarge(t *testing.T) {
	src := gemmaFile(t)
	t.Setenv(EnvMemAvailable, "100000000")
	wantErr(t, "100 MB available", CheckGGUF(src), src,
		"too large for this machine: its tensors need 235.2 MiB but only 95.4 MiB of memory is available (FRAGILITY_MEM_AVAILABLE)")
	_, err := Load(src, Params{Threads: 1})
	wantErr(t, "Load", err, src, "too large for this machine")
	t.Setenv(EnvMemAvailable, "lots")
	if err := CheckGGUF(src); err == nil || !strings.Contains(err.Error(), "FRAGILITY_MEM_AVAILABLE") {
		t.Errorf("bad %s: error %v", EnvMemAvailable, err)
	}
	t.Setenv(EnvMemAvailable, "1000000000")
	if err := CheckGGUF(src); err != nil {
		t.Errorf("1 GB available: %v", err)
	}
}

func TestMemAvailable(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meminfo")
	os.WriteFile(p, []byte("MemTotal:       32000000 kB\nMemFree:         1000 kB\nMemAvailable:    2048 kB\n"), 0o644)
	if n, ok := memAvailable(p); !ok || n != 2048<<10 {
		t.Errorf("memAvailable = %d, %v, want %d", n, ok, 2048<<10)
	}
	os.WriteFile(p, []byte("MemTotal: 1 kB\n"), 0o644)
	if _, ok := memAvailable(p); ok {
		t.Error("no MemAvailable line: ok")
	}
	if _, ok := memAvailable(filepath.Join(dir, "none")); ok {
		t.Error("missing file: ok")
	}
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 246587904: "235.2 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheckGGUFUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, who reads a mode-000 file; cmd/fragility's TestBadModelFiles runs this case as another user")
	}
	p := filepath.Join(t.TempDir(), "locked.gguf")
	os.WriteFile(p, []byte("GGUF"), 0o000)
	wantErr(t, "unreadable", CheckGGUF(p), p, "cannot read: permission denied")
}

func TestLoadFailure(t *testing.T) {
	for _, c := range []struct{ tail, want string }{
		{"load: special_eos_id is not in special_eog_ids - the tokenizer config may be incorrect; llama_model_load: error loading model: missing tensor 'blk.18.attn_norm.weight'; llama_model_load_from_file_impl: failed to load model",
			"missing tensor 'blk.18.attn_norm.weight'"},
		{"llama_model_load: error loading model: check_tensor_dims: tensor 'a' has wrong shape; expected   640, got   641; llama_model_load_from_file_impl: failed to load model",
			"check_tensor_dims: tensor 'a' has wrong shape; expected   640, got   641"},
		{"gguf_init_from_file_impl: tensor 'b' has offset 1, expected 2; gguf_init_from_file_impl: failed to read tensor data; llama_model_load: error loading model: llama_model_loader: failed to load model from x.gguf; llama_model_load_from_file_impl: failed to load model",
			"gguf_init_from_file_impl: tensor 'b' has offset 1, expected 2; gguf_init_from_file_impl: failed to read tensor data"},
		{"something odd", "something odd"},
		{"", orUnknown("")},
	} {
		if got := loadFailure(c.tail); got != c.want {
			t.Errorf("loadFailure(%q) = %q, want %q", c.tail, got, c.want)
		}
	}
}

// TestKnownArchitecturesMatchPin compares knownArchitectures with
// LLM_ARCH_NAMES in the pinned llama.cpp sources in the Go module cache.
func TestKnownArchitecturesMatchPin(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ollama/ollama").Output()
	if err != nil {
		t.Skipf("cannot locate the ollama module: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "llama", "llama.cpp", "src", "llama-arch.cpp"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("pinned llama.cpp sources not in the module cache: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)LLM_ARCH_NAMES = \{(.*?)\n\};`).FindSubmatch(src)
	if block == nil {
		t.Fatal("LLM_ARCH_NAMES not found in llama-arch.cpp")
	}
	var pinned []string
	for _, m := range regexp.MustCompile(`\{\s*LLM_ARCH_\w+,\s*"([^"]+)"\s*\}`).FindAllSubmatch(block[1], -1) {
		if n := string(m[1]); n != "clip" && n != "(unknown)" {
			pinned = append(pinned, n)
		}
	}
	var ours []string
	for n := range knownArchitectures {
		ours = append(ours, n)
	}
	sort.Strings(pinned)
	sort.Strings(ours)
	if strings.Join(pinned, " ") != strings.Join(ours, " ") {
		t.Errorf("knownArchitectures differs from the pinned llama.cpp:\n ours:   %v\n pinned: %v", ours, pinned)
	}
	if KnownArchitecture("clip") || KnownArchitecture("qwerty") || !KnownArchitecture("gemma3") {
		t.Error("KnownArchitecture")
	}
}

// TestCheckGGUFKVCache: the memory check counts the KV cache of the run's
// context. Gemma 3 270M (18 layers, 1 KV head of 256 key and 256 value
// dimensions): 18 × n_ctx × 512 × 2 bytes, 36 KiB per token of context.
func TestCheckGGUFKVCache(t *testing.T) {
	src := gemmaFile(t)
	f, err := parseGGUF(src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kvCacheBytes(f.Header.MetadataKV, 2048), uint64(18*2048*512*2); got != want {
		t.Errorf("KV cache at 2048 tokens: %d bytes, want %d", got, want)
	}
	t.Setenv(EnvMemAvailable, "300000000") // tensors (235.2 MiB) fit
	if err := CheckGGUFContext(src, 2048); err != nil {
		t.Errorf("n_ctx 2048 in 300 MB: %v", err)
	}
	wantErr(t, "n_ctx 32768 in 300 MB", CheckGGUFContext(src, 32768), src,
		"too large for this machine with this context: its tensors need 235.2 MiB and the KV cache about 576.0 MiB")
}
