package llm

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fragility/fragility/models"
)

// The models of these tests, by their manifest names: Gemma 3 270M is the
// fast pretrained model without a chat template (most tests); the Qwen2.5
// Coder 0.5B Instruct model is the chat model (template, end of turn).
const (
	gemmaName = "gemma-3-270m-q4_k_m"
	chatName  = "qwen2.5-coder-0.5b"
)

var (
	loadMu sync.Mutex
	loaded = map[string]*Model{}
)

// cachedModel loads the named model from the cache once for all tests, with
// one thread and a 1024-token context.
func cachedModel(t testing.TB, name string) *Model {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if m, ok := loaded[name]; ok {
		return m
	}
	p, err := models.PathOf(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(p, Params{Threads: 1, NCtx: 1024, Seed: 1})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	loaded[name] = m
	return m
}

// gemmaModel is the fast pretrained model most tests use.
func gemmaModel(t testing.TB) *Model { return cachedModel(t, gemmaName) }

// chatModel is the instruction-tuned model with a chat template.
func chatModel(t testing.TB) *Model { return cachedModel(t, chatName) }

func TestLoadMetadata(t *testing.T) {
	m := gemmaModel(t)
	md := m.Metadata()
	if md.Architecture != "gemma3" {
		t.Errorf("architecture = %q, want gemma3", md.Architecture)
	}
	if md.NVocab != 262144 {
		t.Errorf("n_vocab = %d, want 262144", md.NVocab)
	}
	if md.Quantization != "Q4_K_M" {
		t.Errorf("quantization = %q, want Q4_K_M", md.Quantization)
	}
	if md.NParams < 200e6 || md.NParams > 350e6 {
		t.Errorf("n_params = %d, want about 270M", md.NParams)
	}
	if md.SHA256 != "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818" {
		t.Errorf("sha256 = %s", md.SHA256)
	}
	if md.FileSize != 253113024 {
		t.Errorf("file size = %d", md.FileSize)
	}
	if !strings.Contains(md.Description, "gemma3") {
		t.Errorf("description = %q", md.Description)
	}
	// Gemma 3 270M is the pretrained (not instruction-tuned) model: its
	// GGUF carries no tokenizer.chat_template.
	if md.ChatTemplate != "" {
		t.Errorf("unexpected chat template %q", md.ChatTemplate)
	}
}

func TestTokenizeRoundTrip(t *testing.T) {
	m := gemmaModel(t)
	for _, s := range []string{
		"A baker sold 12 loaves in the morning at $3 each.",
		"Zoë paid 4,50 € für drei Äpfel — naïve café, 東京, emoji 🍞.",
	} {
		toks, err := m.Tokenize(s, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(toks) == 0 {
			t.Fatalf("no tokens for %q", s)
		}
		back, err := m.Detokenize(toks, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if back != s {
			t.Errorf("round trip: %q -> %v -> %q", s, toks, back)
		}
	}
	if _, err := m.Detokenize([]Token{-1}, false, false); err == nil {
		t.Error("detokenize of token -1: no error")
	}
}

func prompt(t *testing.T, m *Model, q string) []Token {
	t.Helper()
	r, err := m.RenderChat([]Message{{Role: "user", Content: q}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Template != "fallback-plain" || r.Reason == "" || len(r.Stop) == 0 {
		t.Errorf("rendering = %+v, want the recorded plain fallback", r)
	}
	toks, err := m.Tokenize(r.Text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

func TestRenderChat(t *testing.T) {
	m := gemmaModel(t)
	msgs := []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}
	r, err := m.RenderChat(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := "System: Be brief.\n\nUser: Hi\n\nAssistant:"
	if r.Text != want || r.Template != "fallback-plain" {
		t.Errorf("fallback rendering %+v, want %q", r, want)
	}
	r, err = m.RenderChatWith(msgs, "gemma")
	if err != nil {
		t.Fatal(err)
	}
	if r.Template != "named:gemma" || !strings.Contains(r.Text, "<start_of_turn>user\n") || !strings.HasSuffix(r.Text, "<start_of_turn>model\n") {
		t.Errorf("gemma rendering %+v", r)
	}
	if _, err := m.RenderChatWith(msgs, "no-such-template"); err == nil {
		t.Error("unknown template name: no error")
	}
	if _, err := m.RenderChat(nil); err == nil {
		t.Error("no messages: no error")
	}
}

func TestGreedyDeterministic(t *testing.T) {
	m := gemmaModel(t)
	p := prompt(t, m, "What is 7 plus 5? Answer with a number.")
	opt := GenerateOptions{MaxTokens: 24, Stop: []string{"\nUser:"}}
	a, err := m.Generate(context.Background(), p, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Generate(context.Background(), p, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tokens) == 0 || len(a.Tokens) != len(b.Tokens) {
		t.Fatalf("token counts %d and %d", len(a.Tokens), len(b.Tokens))
	}
	for i := range a.Tokens {
		x, y := a.Tokens[i], b.Tokens[i]
		if x.ID != y.ID || math.Float64bits(x.EntropyBits) != math.Float64bits(y.EntropyBits) ||
			math.Float64bits(x.LogProb) != math.Float64bits(y.LogProb) {
			t.Fatalf("step %d differs: %+v vs %+v", i, x, y)
		}
	}
	t.Logf("%q (%s, %d tokens)", a.Text, a.StopReason, len(a.Tokens))
}

// referenceEntropy is an independent two-pass computation: p_i = exp(l_i − lse)
// with lse = m + ln Σ exp(l_i − m), then H = −Σ p_i log2 p_i, every sum taken
// exactly rounded by sorting and pairwise (cascade) summation.
func referenceEntropy(logits []float32) float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	e := make([]float64, len(logits))
	for i, l := range logits {
		e[i] = math.Exp(float64(l) - m)
	}
	lse := m + math.Log(pairwiseSum(e))
	terms := make([]float64, 0, len(logits))
	for _, l := range logits {
		p := math.Exp(float64(l) - lse)
		if p > 0 {
			terms = append(terms, -p*math.Log2(p))
		}
	}
	return pairwiseSum(terms)
}

// pairwiseSum sums x (sorted ascending first) by recursive halving.
func pairwiseSum(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	var rec func([]float64) float64
	rec = func(v []float64) float64 {
		if len(v) <= 8 {
			var t float64
			for _, a := range v {
				t += a
			}
			return t
		}
		h := len(v) / 2
		return rec(v[:h]) + rec(v[h:])
	}
	return rec(s)
}

func TestEntropyMatchesReferenceOnModelLogits(t *testing.T) {
	m := gemmaModel(t)
	p := prompt(t, m, "Tom has 3 apples and buys 4 more. How many apples does he have?")
	steps := 0
	err := m.Score(context.Background(), p, nil, 12, func(step int, logits []float32, d Dist) error {
		ref := referenceEntropy(logits)
		if diff := math.Abs(ref - d.EntropyBits); diff > 1e-12 {
			t.Errorf("step %d: entropy %v, reference %v, diff %g bits", step, d.EntropyBits, ref, diff)
		}
		steps++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if steps != 12 {
		t.Fatalf("scored %d steps, want 12", steps)
	}
}

func TestEntropyEdgeCases(t *testing.T) {
	const n = 262144
	flat := make([]float32, n)
	d, err := Entropy(flat)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.EntropyBits-math.Log2(n)) > 1e-12 {
		t.Errorf("flat: %v bits, want log2(%d) = 18", d.EntropyBits, n)
	}
	oneHot := make([]float32, n)
	for i := range oneHot {
		oneHot[i] = float32(math.Inf(-1))
	}
	oneHot[123] = 5
	d, err = Entropy(oneHot)
	if err != nil {
		t.Fatal(err)
	}
	if d.EntropyBits != 0 || d.ArgMax != 123 || d.TopProb() != 1 {
		t.Errorf("one-hot: %+v", d)
	}
	// Two equal tokens and the rest impossible: exactly 1 bit.
	oneHot[7] = 5
	d, _ = Entropy(oneHot)
	if math.Abs(d.EntropyBits-1) > 1e-15 || d.ArgMax != 7 {
		t.Errorf("two-way: %+v", d)
	}
	if _, err := Entropy(nil); err == nil {
		t.Error("empty logits: no error")
	}
	if _, err := Entropy([]float32{1, float32(math.NaN())}); err == nil {
		t.Error("NaN logit: no error")
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	garbage := filepath.Join(dir, "garbage.gguf")
	os.WriteFile(garbage, []byte(strings.Repeat("not a model ", 100)), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.gguf"), "no such file"},
		{empty, "empty file"},
		{garbage, "not a GGUF file"},
		{dir, "is a directory"},
	} {
		_, err := Load(c.path, Params{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Load(%s) error = %v, want one naming the file and %q", c.path, err, c.want)
		}
	}
}

// TestDefaultThreadsEnv: FRAGILITY_THREADS sets the default thread counts
// (one-token decodes and batches) when it is a positive integer (capped at
// MaxThreads); any other value leaves every core.
func TestDefaultThreadsEnv(t *testing.T) {
	for env, want := range map[string]int{"": runtime.NumCPU(), "3": 3, "0": runtime.NumCPU(), "-2": runtime.NumCPU(), "two": runtime.NumCPU(), "100000": MaxThreads} {
		t.Setenv(ThreadsEnv, env)
		if got := DefaultThreads(); got != want {
			t.Errorf("%s=%q: DefaultThreads() = %d, want %d", ThreadsEnv, env, got, want)
		}
		if got := (Params{}).Defaults().Threads; got != want {
			t.Errorf("%s=%q: Params{}.Defaults().Threads = %d, want %d", ThreadsEnv, env, got, want)
		}
		if got, gotP := DefaultThreadsBatch(), (Params{}).Defaults().ThreadsBatch; got != want || gotP != want {
			t.Errorf("%s=%q: DefaultThreadsBatch() = %d, Params{}.Defaults().ThreadsBatch = %d, want %d", ThreadsEnv, env, got, gotP, want)
		}
	}
}
