package embed

import (
	"errors"
	"fmt"
	"github.com/fragility/fragility/models"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/pipelines"
	"github.com/sugarme/tokenizer"
)

// Embedder turns texts into sentence vectors with one ONNX model. It is safe
// for concurrent use; calls are serialised. Close releases it.
type Embedder struct {
	mu       sync.Mutex
	dir      string
	onnxPath string
	sha      string
	tokSHA   string
	backend  Backend
	cfg      stConfig
	dim      int

	tok      *tokenizer.Tokenizer
	session  *hugot.Session
	pipe     *pipelines.FeatureExtractionPipeline
	outIndex int
	closed   bool
}

// Embedding is the vector of one text with what happened to the text on the
// way in.
type Embedding struct {
	Vector    []float32 `json:"vector"`    // [Dim()], unit length when the model normalises
	Tokens    int       `json:"tokens"`    // tokens of the whole text, with [CLS] and [SEP]
	Used      int       `json:"used"`      // tokens the model saw: Tokens, or MaxTokens() if truncated
	Truncated bool      `json:"truncated"` // the text was longer than MaxTokens() and was cut
}

// TooLongError is returned by Embed for a text longer than the model's
// limit. EmbedTruncating embeds such texts instead, cut to the limit.
type TooLongError struct {
	Index  int // position of the text in the input slice
	Tokens int // its length in tokens, with special tokens
	Max    int // the model's limit (MaxTokens)
}

// Error says which text is too long, by how much, and what to call instead.
func (e *TooLongError) Error() string {
	return fmt.Sprintf("embed: text %d has %d tokens, over the model's limit of %d (use EmbedTruncating to embed its first %d)",
		e.Index, e.Tokens, e.Max, e.Max)
}

// ErrEmpty is returned (wrapped) for an empty list of texts and for a text
// that is empty or only white space.
var ErrEmpty = errors.New("empty input")

// Option configures Open.
type Option func(*openConfig)

type openConfig struct {
	backend    Backend
	ortLibrary string
	maxTokens  int
	sequential bool
}

// WithBackend selects the engine that runs the network (default BackendGo).
// BackendORT fails in Open unless the binary was built with `-tags ORT`.
func WithBackend(b Backend) Option { return func(c *openConfig) { c.backend = b } }

// WithORTLibrary sets the path of libonnxruntime.so for BackendORT (default:
// hugot's, /usr/lib/libonnxruntime.so).
func WithORTLibrary(path string) Option { return func(c *openConfig) { c.ortLibrary = path } }

// WithSequential runs the network of the pure-Go backend in the calling
// goroutine only, with no worker pool (GoMLX simplego "parallelism=0"):
// about half the speed on two cores, but it takes one core, not all of
// them, so an embedder classifying prompts beside llama.cpp's threads does
// not slow generation down. fragility run uses it on CPU. The vectors are
// bit-identical to those of the default mode (TestSequentialSameBits).
// No effect on the ORT backend.
func WithSequential() Option { return func(c *openConfig) { c.sequential = true } }

// WithMaxTokens lowers the token limit below the model's max_seq_length
// (counting [CLS] and [SEP]). A value above the configured limit is an error
// in Open: the model's position table bounds it.
func WithMaxTokens(n int) Option { return func(c *openConfig) { c.maxTokens = n } }

// Open loads the embedder in dir: its ONNX model (model.onnx, or the only
// *.onnx file), tokenizer.json and sentence-transformers configuration (see
// the package documentation). Errors name the offending file.
func Open(dir string, opts ...Option) (e *Embedder, err error) {
	oc := openConfig{backend: BackendGo}
	for _, o := range opts {
		o(&oc)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("embed: %s: not a directory (an embedder is a directory with model.onnx and tokenizer.json)", dir)
	}
	onnxPath, err := findONNX(dir)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	tokPath := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(tokPath); err != nil {
		return nil, fmt.Errorf("embed: %s: no tokenizer.json (an embedder directory holds the model and its tokenizer.json)", dir)
	}
	if err := checkONNX(onnxPath); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	cfg, err := readSTConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if oc.maxTokens != 0 {
		if oc.maxTokens < 3 || oc.maxTokens > cfg.maxTokens {
			return nil, fmt.Errorf("embed: WithMaxTokens(%d): want 3..%d", oc.maxTokens, cfg.maxTokens)
		}
		cfg.maxTokens = oc.maxTokens
	}
	tok, err := loadTokenizer(tokPath)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	sum, err := models.SHA256File(onnxPath)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	tokSum, err := models.SHA256File(tokPath)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	emb := &Embedder{dir: dir, onnxPath: onnxPath, sha: sum, tokSHA: tokSum, backend: oc.backend, cfg: cfg, tok: tok}
	if emb.backend == "" {
		emb.backend = BackendGo
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embed: %s: loading the model failed: %v", onnxPath, r)
		}
		if err != nil {
			emb.destroy()
			e = nil
		}
	}()
	emb.session, err = newSession(emb.backend, oc.ortLibrary)
	if err != nil {
		return nil, fmt.Errorf("embed: %s backend: %w", emb.backend, err)
	}
	emb.pipe, err = newPipeline(emb.session, onnxPath, oc.sequential)
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", onnxPath, err)
	}
	if err := emb.inspectModel(); err != nil {
		return nil, fmt.Errorf("embed: %s: %w", onnxPath, err)
	}
	// Run once: a graph that hugot loads may still contain an operator its
	// backend cannot run, which shows only at the first execution.
	if _, err := emb.embedOne("probe", false); err != nil {
		return nil, fmt.Errorf("embed: %s: cannot run on the %s backend: %w", onnxPath, emb.backend, err)
	}
	return emb, nil
}

// findONNX returns dir/model.onnx, or the only *.onnx file in dir.
func findONNX(dir string) (string, error) {
	p := filepath.Join(dir, "model.onnx")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%s: no model.onnx (an embedder directory holds an ONNX model and its tokenizer.json)", dir)
	case 1:
		return matches[0], nil
	default:
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = filepath.Base(m)
		}
		return "", fmt.Errorf("%s: several ONNX files (%s) and no model.onnx", dir, strings.Join(names, ", "))
	}
}

// inspectModel picks the token-embedding output and checks the inputs.
func (e *Embedder) inspectModel() error {
	m := e.pipe.Model
	e.outIndex = -1
	for i, o := range m.OutputsMeta {
		if len(o.Dimensions) == 3 && (o.Name == "last_hidden_state" || o.Name == "token_embeddings") {
			e.outIndex = i
			break
		}
	}
	if e.outIndex < 0 && len(m.OutputsMeta) > 0 && len(m.OutputsMeta[0].Dimensions) == 3 {
		e.outIndex = 0
	}
	if e.outIndex < 0 {
		var outs []string
		for _, o := range m.OutputsMeta {
			outs = append(outs, fmt.Sprintf("%s%v", o.Name, []int64(o.Dimensions)))
		}
		return fmt.Errorf("no token-embedding output [batch, sequence, dim] (outputs: %s)", strings.Join(outs, ", "))
	}
	for _, in := range m.InputsMeta {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
		default:
			return fmt.Errorf("unexpected model input %q (want input_ids, attention_mask, token_type_ids)", in.Name)
		}
	}
	dims := m.OutputsMeta[e.outIndex].Dimensions
	if d := dims[len(dims)-1]; d > 0 {
		e.dim = int(d)
	}
	if e.cfg.dim > 0 && e.dim > 0 && e.cfg.dim != e.dim {
		return fmt.Errorf("the model outputs %d dimensions, the pooling configuration says %d", e.dim, e.cfg.dim)
	}
	if e.dim == 0 {
		e.dim = e.cfg.dim
	}
	return nil
}

// Dim returns the length of the vectors Embed returns (384 for MiniLM).
func (e *Embedder) Dim() int { return e.dim }

// MaxTokens returns the longest input, in tokens with [CLS] and [SEP], that
// the model sees whole (max_seq_length; 256 for all-MiniLM-L6-v2).
func (e *Embedder) MaxTokens() int { return e.cfg.maxTokens }

// Name returns the embedder's name: the base name of its directory (for the
// default embedder, its name in models/manifest.json).
func (e *Embedder) Name() string { return filepath.Base(filepath.Clean(e.dir)) }

// ModelPath returns the path of the ONNX file in use.
func (e *Embedder) ModelPath() string { return e.onnxPath }

// SHA256 returns the hex sha256 of the ONNX file, for run manifests and for
// keying cached class vectors.
func (e *Embedder) SHA256() string { return e.sha }

// Backend returns the backend running the model.
func (e *Embedder) Backend() Backend { return e.backend }

// Pooling returns the pooling mode and whether vectors are L2-normalised,
// as read from the model's sentence-transformers configuration.
func (e *Embedder) Pooling() (mode Pooling, normalized bool) {
	return e.cfg.pooling, e.cfg.normalize
}

// Close releases the model. Calls after Close return an error.
func (e *Embedder) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.destroy()
}

func (e *Embedder) destroy() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embed: closing %s: %v", e.onnxPath, r)
		}
	}()
	if e.session != nil {
		err = e.session.Destroy()
		e.session = nil
	}
	return err
}

// Embed returns one vector of Dim() float32 per text, in order, pooled and
// normalised as the model's sentence-transformers configuration says. It
// fails with a *TooLongError if a text is longer than MaxTokens() (nothing is
// cut silently; see EmbedTruncating), and with ErrEmpty for an empty list or
// an empty or all-space text.
func (e *Embedder) Embed(texts []string) ([][]float32, error) {
	res, err := e.embed(texts, false)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(res))
	for i, r := range res {
		out[i] = r.Vector
	}
	return out, nil
}

// EmbedTruncating is Embed for texts that may be too long: a text over
// MaxTokens() keeps its first MaxTokens()-2 tokens between [CLS] and [SEP]
// (what sentence-transformers does) and is marked Truncated.
func (e *Embedder) EmbedTruncating(texts []string) ([]Embedding, error) {
	return e.embed(texts, true)
}

func (e *Embedder) embed(texts []string, truncate bool) ([]Embedding, error) {
	if len(texts) == 0 {
		return nil, fmt.Errorf("embed: no texts: %w", ErrEmpty)
	}
	// Invalid UTF-8 (a binary file, a Latin-1 byte) is read as U+FFFD, as
	// Python's errors="replace" would, instead of reaching the tokenizer.
	clean := make([]string, len(texts))
	for i, t := range texts {
		clean[i] = strings.ToValidUTF8(t, "\uFFFD")
	}
	texts = clean
	for i, t := range texts {
		if strings.TrimFunc(t, unicode.IsSpace) == "" {
			return nil, fmt.Errorf("embed: text %d: %w", i, ErrEmpty)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.session == nil {
		return nil, errors.New("embed: embedder is closed")
	}
	out := make([]Embedding, len(texts))
	encs := make([]*tokenizer.Encoding, len(texts))
	for i, t := range texts {
		enc, err := e.prepare(t, truncate, &out[i])
		if err != nil {
			var tl *TooLongError
			if errors.As(err, &tl) {
				tl.Index = i
				return nil, tl
			}
			return nil, fmt.Errorf("embed: text %d: %w", i, err)
		}
		encs[i] = enc
	}
	// One text per forward pass: the inference engine picks its matrix
	// kernels by problem size, so a batch would change the low bits of a
	// text's vector with the company it keeps.
	for i, enc := range encs {
		vecs, err := e.run([]*tokenizer.Encoding{enc})
		if err != nil {
			return nil, fmt.Errorf("embed: text %d: %w", i, err)
		}
		out[i].Vector = vecs[0]
	}
	return out, nil
}

// Tokenize returns the token pieces of text as the model sees them, with
// [CLS] and [SEP] and without truncation.
func (e *Embedder) Tokenize(text string) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	enc, err := e.encode(text, 0)
	if err != nil {
		return nil, err
	}
	return enc.Tokens, nil
}

// encode tokenises text with special tokens, truncated to max tokens if
// max > 0.
func (e *Embedder) encode(text string, max int) (enc *tokenizer.Encoding, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tokenizer: %v", r)
		}
	}()
	if max > 0 {
		e.tok.WithTruncation(&tokenizer.TruncationParams{MaxLength: max, Strategy: tokenizer.LongestFirst})
		defer e.tok.WithTruncation(nil)
	}
	enc, err = e.tok.EncodeSingle(text, true)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if len(enc.Ids) == 0 {
		return nil, errors.New("tokenizer produced no tokens")
	}
	return enc, nil
}

// prepare tokenises one text, applies the length limit and fills res's
// token counts. The caller holds e.mu.
func (e *Embedder) prepare(text string, truncate bool, res *Embedding) (*tokenizer.Encoding, error) {
	enc, err := e.encode(text, 0)
	if err != nil {
		return nil, err
	}
	res.Tokens = len(enc.Ids)
	if res.Tokens > e.cfg.maxTokens {
		if !truncate {
			return nil, &TooLongError{Tokens: res.Tokens, Max: e.cfg.maxTokens}
		}
		if enc, err = e.encode(text, e.cfg.maxTokens); err != nil {
			return nil, err
		}
		if len(enc.Ids) > e.cfg.maxTokens {
			return nil, fmt.Errorf("tokenizer truncated to %d tokens, want %d", len(enc.Ids), e.cfg.maxTokens)
		}
		res.Truncated = true
	}
	res.Used = len(enc.Ids)
	return enc, nil
}

// embedOne embeds one text. The caller holds e.mu.
func (e *Embedder) embedOne(text string, truncate bool) (Embedding, error) {
	var res Embedding
	enc, err := e.prepare(text, truncate, &res)
	if err != nil {
		return res, err
	}
	vecs, err := e.run([]*tokenizer.Encoding{enc})
	if err != nil {
		return res, err
	}
	res.Vector = vecs[0]
	return res, nil
}

// run embeds encoded texts that all have the same number of tokens: one
// forward pass, then pooling and normalisation per text. Embed passes one
// text at a time.
func (e *Embedder) run(encs []*tokenizer.Encoding) ([][]float32, error) {
	hidden, err := e.forward(encs)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(encs))
	for i, enc := range encs {
		mask := enc.AttentionMask
		if len(hidden[i]) != len(mask) {
			return nil, fmt.Errorf("model returned %d token vectors for %d tokens", len(hidden[i]), len(mask))
		}
		v, err := pool(hidden[i], mask, e.cfg.pooling)
		if err != nil {
			return nil, err
		}
		if e.dim == 0 {
			e.dim = len(v)
		}
		if len(v) != e.dim {
			return nil, fmt.Errorf("model returned %d dimensions, want %d", len(v), e.dim)
		}
		if e.cfg.normalize {
			l2Normalize(v)
		}
		out[i] = v
	}
	return out, nil
}

// forward runs the network on encoded texts of equal length and returns
// their token embeddings [texts][tokens][dim].
func (e *Embedder) forward(encs []*tokenizer.Encoding) (hidden [][][]float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("inference: %v", r)
		}
	}()
	n := len(encs[0].Ids)
	batch := backends.NewBatch(len(encs))
	batch.MaxSequenceLength = n
	for _, enc := range encs {
		if len(enc.Ids) != n {
			return nil, fmt.Errorf("internal: batch of unequal lengths %d and %d", n, len(enc.Ids))
		}
		in := backends.TokenizedInput{
			Tokens:            enc.Tokens,
			TokenIDs:          make([]uint32, n),
			TypeIDs:           make([]uint32, n),
			AttentionMask:     make([]uint32, n),
			MaxAttentionIndex: n - 1,
		}
		for i := 0; i < n; i++ {
			if enc.Ids[i] < 0 {
				return nil, fmt.Errorf("negative token id at %d", i)
			}
			in.TokenIDs[i] = uint32(enc.Ids[i])
			if i < len(enc.TypeIds) && enc.TypeIds[i] > 0 {
				in.TypeIDs[i] = uint32(enc.TypeIds[i])
			}
			in.AttentionMask[i] = 1
			if i < len(enc.AttentionMask) {
				in.AttentionMask[i] = uint32(max(enc.AttentionMask[i], 0))
			}
		}
		batch.Input = append(batch.Input, in)
	}
	defer func() { err = errors.Join(err, batch.Destroy()) }()
	bp := e.pipe.BasePipeline
	if err := backends.CreateInputTensors(batch, bp.Model, bp.Runtime); err != nil {
		return nil, err
	}
	if err := backends.RunSessionOnBatch(batch, bp); err != nil {
		return nil, err
	}
	if e.outIndex >= len(batch.OutputValues) {
		return nil, fmt.Errorf("model returned %d outputs", len(batch.OutputValues))
	}
	out, ok := batch.OutputValues[e.outIndex].([][][]float32)
	if !ok || len(out) != len(encs) {
		return nil, fmt.Errorf("model output has type %T, want [%d][tokens][dim]float32", batch.OutputValues[e.outIndex], len(encs))
	}
	return out, nil
}

// pool reduces token embeddings h [tokens][dim] to one vector over the
// tokens whose attention mask is 1, as sentence-transformers' Pooling module
// does (sentence_transformers/models/Pooling.py): the mean Σ m_t h_t / Σ m_t
// (with the denominator clamped at 1e-9), the first token, the elementwise
// maximum, or Σ m_t h_t / sqrt(Σ m_t). Sums are accumulated in float64.
func pool(h [][]float32, mask []int, mode Pooling) ([]float32, error) {
	if len(h) == 0 {
		return nil, errors.New("no token vectors to pool")
	}
	dim := len(h[0])
	out := make([]float32, dim)
	switch mode {
	case PoolCLS:
		copy(out, h[0])
		return out, nil
	case PoolMax:
		seen := false
		for t, v := range h {
			if mask[t] == 0 {
				continue
			}
			for k, x := range v {
				if !seen || x > out[k] {
					out[k] = x
				}
			}
			seen = true
		}
		return out, nil
	case PoolMean, PoolMeanSqrtLen:
		sum := make([]float64, dim)
		count := 0.0
		for t, v := range h {
			if mask[t] == 0 {
				continue
			}
			if len(v) != dim {
				return nil, fmt.Errorf("token %d has %d dimensions, want %d", t, len(v), dim)
			}
			for k, x := range v {
				sum[k] += float64(x)
			}
			count++
		}
		div := math.Max(count, 1e-9)
		if mode == PoolMeanSqrtLen {
			div = math.Sqrt(count)
		}
		for k := range out {
			out[k] = float32(sum[k] / div)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("pooling %q is not supported", mode)
	}
}

// l2Normalize scales v in place to unit Euclidean length, v / max(‖v‖₂,
// 1e-12), as torch.nn.functional.normalize does in sentence-transformers'
// Normalize module. The norm is accumulated in float64.
func l2Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	n := math.Max(math.Sqrt(ss), 1e-12)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
}

// Cosine returns the cosine similarity of a and b, a·b / (‖a‖₂ ‖b‖₂),
// accumulated in float64. It returns 0 if either vector is zero and NaN if
// their lengths differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.NaN()
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
