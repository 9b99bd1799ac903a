package llm

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fragility/fragility/models"
)

var (
	tinyOnce sync.Once
	tinyPath string
	tinyErr  error
)

// embedderTokenizer returns the default embedder's tokenizer.json from the
// cache, the vocabulary source of the tiny model.
func embedderTokenizer(t testing.TB) string {
	t.Helper()
	man, err := models.Load()
	if err != nil {
		t.Fatal(err)
	}
	md, err := man.Default("embedder")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := md.Path()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tiny model: %v (run `make models`)", err)
	}
	return p
}

// tinyModelPath writes the tiny model (seed 1, default shape) once per test
// binary and returns its path. Tests that need a model but not the default
// LLM's behaviour can load it: it is fast on any CPU.
func tinyModelPath(t testing.TB) string {
	t.Helper()
	tok := embedderTokenizer(t)
	tinyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fragility-tiny-")
		if err != nil {
			tinyErr = err
			return
		}
		tinyPath = filepath.Join(dir, "tiny.gguf")
		_, tinyErr = WriteTinyModel(tinyPath, TinyOptions{Tokenizer: tok, Seed: 1})
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyPath
}

func TestWriteTinyModelDeterministic(t *testing.T) {
	tok := embedderTokenizer(t)
	dir := t.TempDir()
	write := func(name string, seed uint64) *TinyInfo {
		info, err := WriteTinyModel(filepath.Join(dir, name), TinyOptions{Tokenizer: tok, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	a, b, c := write("a.gguf", 1), write("b.gguf", 1), write("c.gguf", 2)
	if a.SHA256 != b.SHA256 || a.Bytes != b.Bytes {
		t.Errorf("same seed, different files: %s (%d bytes) vs %s (%d bytes)", a.SHA256, a.Bytes, b.SHA256, b.Bytes)
	}
	if a.SHA256 == c.SHA256 {
		t.Errorf("seeds 1 and 2 wrote identical files")
	}
	if a.NVocab != 30522 {
		t.Errorf("n_vocab = %d, want 30522 (the embedder's WordPiece vocabulary)", a.NVocab)
	}
	if a.Bytes > 8<<20 {
		t.Errorf("tiny model is %d bytes, want at most 8 MiB", a.Bytes)
	}
	if err := CheckGGUF(a.Path); err != nil {
		t.Errorf("CheckGGUF: %v", err)
	}
}

func TestWriteTinyModelErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(bad, []byte(`{"model":{"type":"BPE","vocab":{"a":0}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.gguf")
	for name, o := range map[string]TinyOptions{
		"no tokenizer":  {},
		"missing file":  {Tokenizer: filepath.Join(dir, "nope.json")},
		"not wordpiece": {Tokenizer: bad},
		"odd width":     {Tokenizer: bad, Embd: 48},
	} {
		if _, err := WriteTinyModel(out, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed write left %s behind", out)
	}
}

func TestTinyModelTokenizeGenerate(t *testing.T) {
	path := tinyModelPath(t)
	load := func() *Model {
		m, err := Load(path, Params{Threads: 2, NCtx: 256, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	m := load()
	md := m.Metadata()
	if md.Architecture != "llama" || md.NVocab != 30522 || md.NLayer != 2 || md.Quantization != "F16" {
		t.Errorf("metadata: architecture %q, n_vocab %d, layers %d, quantization %q", md.Architecture, md.NVocab, md.NLayer, md.Quantization)
	}
	toks, err := m.Tokenize("Natalia sold 48 clips in April.", true, false)
	if err != nil {
		t.Fatal(err)
	}
	// BERT WordPiece: [CLS] natalia sold 48 clips in april . (lower-cased;
	// "natalia" may be split into word pieces).
	if len(toks) < 8 || toks[0] != 101 {
		t.Fatalf("tokens %v: want [CLS]=101 first and at least 8 tokens", toks)
	}
	text, err := m.Detokenize(toks, true, false)
	if err != nil {
		t.Fatal(err)
	}
	// WPM pieces carry a word-start space, which llama.cpp keeps on the
	// first word.
	if strings.TrimSpace(text) != "natalia sold 48 clips in april." {
		t.Errorf("detokenized %q", text)
	}

	opt := GenerateOptions{MaxTokens: 24}
	gen := func(m *Model) *Generation {
		g, err := m.Generate(context.Background(), toks, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Tokens) != opt.MaxTokens || g.StopReason != StopMaxTokens {
			t.Fatalf("generated %d tokens (%s), want %d (the tiny model has no end token)", len(g.Tokens), g.StopReason, opt.MaxTokens)
		}
		return g
	}
	first, again, other := gen(m), gen(m), gen(load())
	maxH := math.Log2(float64(md.NVocab))
	for i, r := range first.Tokens {
		if !(r.EntropyBits > 0.5 && r.EntropyBits < maxH) {
			t.Errorf("token %d: entropy %v bits outside (0.5, %v)", i, r.EntropyBits, maxH)
		}
		for _, g := range []*Generation{again, other} {
			s := g.Tokens[i]
			if s.ID != r.ID || math.Float64bits(s.EntropyBits) != math.Float64bits(r.EntropyBits) ||
				math.Float64bits(s.LogProb) != math.Float64bits(r.LogProb) {
				t.Fatalf("token %d differs between runs: id %d/%d, H %v/%v, log-prob %v/%v",
					i, r.ID, s.ID, r.EntropyBits, s.EntropyBits, r.LogProb, s.LogProb)
			}
		}
	}
}
