package embed

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyDefault makes a temporary embedder directory holding hard links (or
// copies) of the default embedder's files, so a test can remove or replace
// one of them.
func copyDefault(t *testing.T) string {
	t.Helper()
	src := filepath.Dir(openDefault(t).ModelPath())
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestOpenErrors(t *testing.T) {
	dir := copyDefault(t)
	if err := os.Remove(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json") || !strings.Contains(err.Error(), dir) {
		t.Errorf("no tokenizer.json: got %v, want an error naming %s and tokenizer.json", err, dir)
	}

	notONNX := map[string][]byte{
		"text":                []byte("this is not a model\n"),
		"empty":               nil,
		"random":              []byte{0x08, 0x07, 0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01},
		"gguf":                append([]byte("GGUF"), make([]byte, 60)...),
		"proto without graph": {0x08, 0x08, 0x12, 0x03, 'a', 'b', 'c'},
	}
	for name, content := range notONNX {
		dir := copyDefault(t)
		model := filepath.Join(dir, "model.onnx")
		if err := os.WriteFile(model, content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir)
		if err == nil || !strings.Contains(err.Error(), model) || !strings.Contains(err.Error(), "not an ONNX model") {
			t.Errorf("%s: got %v, want an error naming %s as not an ONNX model", name, err, model)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error has several lines: %q", name, err)
		}
	}

	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing directory: no error")
	}
	empty := t.TempDir()
	if _, err := Open(empty); err == nil || !strings.Contains(err.Error(), "model.onnx") {
		t.Errorf("empty directory: got %v, want an error naming model.onnx", err)
	}
	if _, err := Open(openDefault(t).ModelPath()); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file instead of directory: got %v", err)
	}
	if _, err := Open(filepath.Dir(openDefault(t).ModelPath()), WithBackend("tpu")); err == nil {
		t.Error("unknown backend: no error")
	}
	if !ORTAvailable {
		_, err := Open(filepath.Dir(openDefault(t).ModelPath()), WithBackend(BackendORT))
		if err == nil || !strings.Contains(err.Error(), "-tags ORT") {
			t.Errorf("ORT backend without the build tag: got %v", err)
		}
	}
	if _, err := Open(filepath.Dir(openDefault(t).ModelPath()), WithMaxTokens(1000)); err == nil {
		t.Error("WithMaxTokens above max_seq_length: no error")
	}
}

func TestEmbedInputErrors(t *testing.T) {
	e := openDefault(t)
	for _, in := range [][]string{nil, {}, {""}, {"fine", "  \t\n"}} {
		if _, err := e.Embed(in); !errors.Is(err, ErrEmpty) {
			t.Errorf("Embed(%q): got %v, want ErrEmpty", in, err)
		}
	}
	long := strings.Repeat("seven apples and nine pears ", 100)
	_, err := e.Embed([]string{"short", long})
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Index != 1 || tl.Max != 256 || tl.Tokens <= 256 {
		t.Fatalf("over-long text: got %v, want *TooLongError for text 1", err)
	}
	res, err := e.EmbedTruncating([]string{"short", long})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Truncated || !res[1].Truncated || res[1].Used != 256 || res[1].Tokens != tl.Tokens {
		t.Errorf("EmbedTruncating: got %+v / truncated %t used %d tokens %d", res[0].Truncated, res[1].Truncated, res[1].Used, res[1].Tokens)
	}
	// A text of exactly MaxTokens tokens is not truncated.
	toks, err := e.Tokenize(long)
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) < 300 || toks[0] != "[CLS]" || toks[len(toks)-1] != "[SEP]" {
		t.Fatalf("Tokenize: %d tokens, first %q last %q", len(toks), toks[0], toks[len(toks)-1])
	}
}

func TestEmbedShapeAndDeterminism(t *testing.T) {
	e := openDefault(t)
	if e.Dim() != 384 {
		t.Errorf("Dim = %d, want 384", e.Dim())
	}
	if p, n := e.Pooling(); p != PoolMean || !n {
		t.Errorf("Pooling = %s normalised %t, want mean and true (all-MiniLM-L6-v2 configuration)", p, n)
	}
	if len(e.SHA256()) != 64 || e.Name() != "all-minilm-l6-v2-int8" {
		t.Errorf("SHA256 %q Name %q", e.SHA256(), e.Name())
	}
	// A text's vector must not depend on the other texts of the call.
	texts := []string{"Ann has 4 pens.", "Bob has 7 pens and gives 2 away.", "Ann has 5 pens.", "Ann has 4 pens."}
	a, err := e.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range a {
		if len(v) != 384 {
			t.Fatalf("vector %d has %d dimensions", i, len(v))
		}
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(ss)-1) > 1e-6 {
			t.Errorf("vector %d has norm %v, want 1", i, math.Sqrt(ss))
		}
		alone, err := e.Embed(texts[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v, alone[0]) {
			t.Errorf("text %d: vector in a batch differs from its vector alone (cosine %.12f)", i, Cosine(v, alone[0]))
		}
	}
	if !slices.Equal(a[0], a[3]) {
		t.Error("the same text twice in one call gave different vectors")
	}
	if slices.Equal(a[0], a[2]) {
		t.Error("different texts gave the same vector")
	}
}

func TestCloseTwiceAndAfterClose(t *testing.T) {
	e, err := Open(filepath.Dir(openDefault(t).ModelPath()))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.Embed([]string{"x"}); err == nil {
		t.Error("Embed after Close: no error")
	}
}

func TestPool(t *testing.T) {
	h := [][]float32{{1, 2}, {3, -4}, {100, 100}}
	mask := []int{1, 1, 0}
	cases := []struct {
		mode Pooling
		want []float32
	}{
		{PoolMean, []float32{2, -1}},
		{PoolCLS, []float32{1, 2}},
		{PoolMax, []float32{3, 2}},
		{PoolMeanSqrtLen, []float32{float32(4 / math.Sqrt2), float32(-2 / math.Sqrt2)}},
	}
	for _, c := range cases {
		got, err := pool(h, mask, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		for k := range got {
			if math.Abs(float64(got[k]-c.want[k])) > 1e-6 {
				t.Errorf("%s: got %v, want %v", c.mode, got, c.want)
				break
			}
		}
	}
	if _, err := pool(h, mask, "weightedmean"); err == nil {
		t.Error("unknown pooling: no error")
	}
	if _, err := pool(nil, nil, PoolMean); err == nil {
		t.Error("no tokens: no error")
	}
}

func TestL2AndCosine(t *testing.T) {
	v := []float32{3, 4}
	l2Normalize(v)
	if v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("l2Normalize(3,4) = %v, want (0.6, 0.8)", v)
	}
	z := []float32{0, 0}
	l2Normalize(z)
	if z[0] != 0 || z[1] != 0 {
		t.Errorf("l2Normalize(0,0) = %v, want zeros", z)
	}
	if c := Cosine([]float32{1, 0}, []float32{1, 1}); math.Abs(c-1/math.Sqrt2) > 1e-15 {
		t.Errorf("Cosine = %v, want 1/√2", c)
	}
	if c := Cosine([]float32{1, 2}, []float32{-2, -4}); math.Abs(c+1) > 1e-15 {
		t.Errorf("Cosine of opposite vectors = %v, want -1", c)
	}
	if c := Cosine([]float32{1}, []float32{1, 2}); !math.IsNaN(c) {
		t.Errorf("Cosine of different lengths = %v, want NaN", c)
	}
	if c := Cosine([]float32{0, 0}, []float32{1, 2}); c != 0 {
		t.Errorf("Cosine with a zero vector = %v, want 0", c)
	}
}

func TestReadSTConfig(t *testing.T) {
	write := func(dir, name, s string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bare := t.TempDir()
	c, err := readSTConfig(bare)
	if err != nil || c.pooling != PoolMean || !c.normalize || c.maxTokens != 512 || c.fromFiles {
		t.Errorf("bare directory: %+v %v", c, err)
	}

	cls := t.TempDir()
	write(cls, "modules.json", `[{"path":"","type":"sentence_transformers.models.Transformer"},{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`)
	write(cls, "1_Pooling/config.json", `{"word_embedding_dimension":768,"pooling_mode_cls_token":true}`)
	write(cls, "sentence_bert_config.json", `{"max_seq_length":128}`)
	c, err = readSTConfig(cls)
	if err != nil || c.pooling != PoolCLS || c.normalize || c.maxTokens != 128 || c.dim != 768 {
		t.Errorf("CLS model without Normalize: %+v %v", c, err)
	}

	bad := map[string]map[string]string{
		"two pooling modes": {"modules.json": `[{"path":"p","type":"sentence_transformers.models.Pooling"}]`,
			"p/config.json": `{"pooling_mode_cls_token":true,"pooling_mode_mean_tokens":true}`},
		"last token": {"modules.json": `[{"path":"p","type":"sentence_transformers.models.Pooling"}]`,
			"p/config.json": `{"pooling_mode_lasttoken":true}`},
		"missing pooling config": {"modules.json": `[{"path":"p","type":"sentence_transformers.models.Pooling"}]`},
		"no pooling module":      {"modules.json": `[{"path":"","type":"sentence_transformers.models.Transformer"}]`},
		"dense module": {"modules.json": `[{"path":"p","type":"sentence_transformers.models.Pooling"},{"path":"2","type":"sentence_transformers.models.Dense"}]`,
			"p/config.json": `{"pooling_mode_mean_tokens":true}`},
		"broken json":  {"modules.json": `[{`},
		"tiny max len": {"sentence_bert_config.json": `{"max_seq_length":1}`},
	}
	for name, files := range bad {
		dir := t.TempDir()
		for f, s := range files {
			write(dir, f, s)
		}
		if _, err := readSTConfig(dir); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCheckONNX(t *testing.T) {
	if err := checkONNX(openDefault(t).ModelPath()); err != nil {
		t.Errorf("default model: %v", err)
	}
}
