package embed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Score is one class with the cosine similarity between its description's
// vector and the text's vector.
type Score struct {
	Code   string  `json:"code"`
	Name   string  `json:"name"`
	Cosine float64 `json:"cosine"`
}

// Ranking is how the embedder reads one text: every class of the level,
// best first, the top class, the runner-up, and the margin between them.
type Ranking struct {
	Level     string  `json:"level"`     // "main" or "division"
	Scores    []Score `json:"scores"`    // all classes by descending cosine; ties by ascending code
	Top       Score   `json:"top"`       // Scores[0]
	RunnerUp  Score   `json:"runner_up"` // Scores[1]
	Margin    float64 `json:"margin"`    // Top.Cosine − RunnerUp.Cosine, ≥ 0
	Tokens    int     `json:"tokens"`    // length of the text in tokens, with [CLS] and [SEP]
	Truncated bool    `json:"truncated"` // the text was cut to the embedder's MaxTokens
}

// Classifier ranks texts against the DDC classes of one level with one
// embedder. The class vectors are computed once per embedder, level and
// class wording and shared by all classifiers in the process; with
// WithCacheDir they are also kept on disk. Safe for concurrent use.
type Classifier struct {
	emb     *Embedder
	level   Level
	classes []Class
	vecs    [][]float32 // [len(classes)][emb.Dim()]
}

// ClassifierOption configures NewClassifier.
type ClassifierOption func(*classifierConfig)

type classifierConfig struct {
	cacheDir string
}

// WithCacheDir keeps class vectors in dir (created if needed) as
// ddc-<level>-<key>.json, where key hashes the ONNX file's sha256, the
// tokenizer, the pooling settings, the backend and the class texts, so a
// stale file is never used. A file that cannot be read or written is
// ignored: the vectors are then computed, not failed on.
func WithCacheDir(dir string) ClassifierOption {
	return func(c *classifierConfig) { c.cacheDir = dir }
}

var (
	classCacheMu sync.Mutex
	classCache   = map[string][][]float32{} // key → class vectors
)

// NewClassifier prepares a classifier of level l on e, embedding the class
// descriptions unless they are already cached in memory or on disk.
func NewClassifier(e *Embedder, l Level, opts ...ClassifierOption) (*Classifier, error) {
	if e == nil {
		return nil, errors.New("embed: NewClassifier: nil embedder")
	}
	var cc classifierConfig
	for _, o := range opts {
		o(&cc)
	}
	classes, err := Classes(l)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	texts := make([]string, len(classes))
	for i, c := range classes {
		texts[i] = c.Text()
	}
	key := e.fingerprint(l, texts)
	classCacheMu.Lock()
	defer classCacheMu.Unlock()
	vecs, ok := classCache[key]
	if !ok && cc.cacheDir != "" {
		vecs, ok = readClassFile(classFile(cc.cacheDir, l, key), key, texts, e.Dim())
	}
	if !ok {
		vecs, err = e.Embed(texts)
		if err != nil {
			return nil, fmt.Errorf("embed: class descriptions: %w", err)
		}
		if cc.cacheDir != "" {
			writeClassFile(classFile(cc.cacheDir, l, key), key, e, l, texts, vecs)
		}
	}
	classCache[key] = vecs
	return &Classifier{emb: e, level: l, classes: classes, vecs: vecs}, nil
}

// Level returns the classifier's level.
func (c *Classifier) Level() Level { return c.level }

// Classes returns the classes the classifier ranks (a copy).
func (c *Classifier) Classes() []Class { return append([]Class(nil), c.classes...) }

// Classify ranks the classes for one text. Over-long texts are truncated
// and flagged in Ranking.Truncated; empty texts are an error (ErrEmpty).
func (c *Classifier) Classify(text string) (Ranking, error) {
	rs, err := c.ClassifyAll([]string{text})
	if err != nil {
		return Ranking{}, err
	}
	return rs[0], nil
}

// ClassifyAll is Classify for many texts, in order.
func (c *Classifier) ClassifyAll(texts []string) ([]Ranking, error) {
	embs, err := c.emb.EmbedTruncating(texts)
	if err != nil {
		return nil, err
	}
	out := make([]Ranking, len(embs))
	for i, em := range embs {
		out[i] = c.rank(em)
	}
	return out, nil
}

// rank scores one embedding against every class.
func (c *Classifier) rank(em Embedding) Ranking {
	r := Ranking{Level: c.level.String(), Tokens: em.Tokens, Truncated: em.Truncated}
	r.Scores = make([]Score, len(c.classes))
	for i, cl := range c.classes {
		r.Scores[i] = Score{Code: cl.Code, Name: cl.Name, Cosine: Cosine(em.Vector, c.vecs[i])}
	}
	sort.SliceStable(r.Scores, func(i, j int) bool {
		if r.Scores[i].Cosine != r.Scores[j].Cosine {
			return r.Scores[i].Cosine > r.Scores[j].Cosine
		}
		return r.Scores[i].Code < r.Scores[j].Code
	})
	r.Top, r.RunnerUp = r.Scores[0], r.Scores[1]
	r.Margin = r.Top.Cosine - r.RunnerUp.Cosine
	return r
}

// fingerprint identifies the class vectors of level l for texts on e: the
// same key means the same vectors.
func (e *Embedder) fingerprint(l Level, texts []string) string {
	h := sha256.New()
	p, norm := e.Pooling()
	fmt.Fprintf(h, "onnx=%s\ntokenizer=%s\npool=%s norm=%t max=%d backend=%s\nlevel=%s\n",
		e.sha, e.tokSHA, p, norm, e.MaxTokens(), e.backend, l)
	for _, t := range texts {
		fmt.Fprintf(h, "%q\n", t)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// classFileData is the on-disk form of cached class vectors.
type classFileData struct {
	Key         string      `json:"key"`
	ModelSHA256 string      `json:"model_sha256"`
	Embedder    string      `json:"embedder"`
	Backend     string      `json:"backend"`
	Level       string      `json:"level"`
	Texts       []string    `json:"texts"`
	Vectors     [][]float32 `json:"vectors"`
}

func classFile(dir string, l Level, key string) string {
	return filepath.Join(dir, fmt.Sprintf("ddc-%s-%s.json", l, key[:16]))
}

// readClassFile returns the vectors in path if the file matches key, the
// class texts and the dimension.
func readClassFile(path, key string, texts []string, dim int) ([][]float32, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var d classFileData
	if json.Unmarshal(b, &d) != nil || d.Key != key || len(d.Texts) != len(texts) || len(d.Vectors) != len(texts) {
		return nil, false
	}
	for i := range texts {
		if d.Texts[i] != texts[i] || len(d.Vectors[i]) != dim {
			return nil, false
		}
	}
	return d.Vectors, true
}

// writeClassFile stores vectors at path atomically; failures are ignored
// (the cache is an optimisation).
func writeClassFile(path, key string, e *Embedder, l Level, texts []string, vecs [][]float32) {
	d := classFileData{Key: key, ModelSHA256: e.sha, Embedder: e.Name(), Backend: string(e.backend),
		Level: l.String(), Texts: texts, Vectors: vecs}
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	tmp, err := os.CreateTemp(dir, ".ddc-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
