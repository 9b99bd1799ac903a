package embed

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// reference is testdata/reference.json, made by testdata/make_reference.py
// with sentence-transformers on the same model files.
type reference struct {
	ModelSHA256     string `json:"model_sha256"`
	TokenizerSHA256 string `json:"tokenizer_sha256"`
	MaxSeqLength    int    `json:"max_seq_length"`
	Dim             int    `json:"dim"`
	Sentences       []struct {
		Text      string    `json:"text"`
		Tokens    int       `json:"tokens"`
		Truncated bool      `json:"truncated"`
		IDs       []int     `json:"ids"`
		Vector    []float32 `json:"vector"`
	} `json:"sentences"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("testdata/reference.json: %v", err)
	}
	if len(r.Sentences) < 10 {
		t.Fatalf("reference has %d sentences, want at least 10", len(r.Sentences))
	}
	return r
}

// TestReferenceVectors checks the default embedder against
// sentence-transformers on the same model: equal token ids, equal token
// counts and truncation, and cosine ≥ 0.999 for every sentence.
func TestReferenceVectors(t *testing.T) {
	ref := loadReference(t)
	e := openDefault(t)
	if e.SHA256() != ref.ModelSHA256 {
		t.Fatalf("default embedder %s has sha256 %s; the reference was made for %s (re-run testdata/make_reference.py)",
			e.ModelPath(), e.SHA256(), ref.ModelSHA256)
	}
	if e.tokSHA != ref.TokenizerSHA256 {
		t.Fatalf("tokenizer.json sha256 %s, reference made with %s", e.tokSHA, ref.TokenizerSHA256)
	}
	if e.Dim() != ref.Dim || e.MaxTokens() != ref.MaxSeqLength {
		t.Fatalf("Dim %d MaxTokens %d, reference %d and %d", e.Dim(), e.MaxTokens(), ref.Dim, ref.MaxSeqLength)
	}
	texts := make([]string, len(ref.Sentences))
	for i, s := range ref.Sentences {
		texts[i] = s.Text
	}
	got, err := e.EmbedTruncating(texts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, s := range ref.Sentences {
		g := got[i]
		if g.Tokens != s.Tokens || g.Truncated != s.Truncated || g.Used != len(s.IDs) {
			t.Errorf("sentence %d: tokens %d truncated %t used %d; reference %d %t %d",
				i, g.Tokens, g.Truncated, g.Used, s.Tokens, s.Truncated, len(s.IDs))
		}
		enc, err := e.encode(s.Text, e.MaxTokens())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(enc.Ids, s.IDs) {
			t.Errorf("sentence %d: token ids differ from the reference tokenizer\n got %v\nwant %v", i, enc.Ids, s.IDs)
		}
		c := Cosine(g.Vector, s.Vector)
		if c < worst {
			worst = c
		}
		if c < 0.999 {
			t.Errorf("sentence %d (%.40q): cosine to reference %.6f, want ≥ 0.999", i, s.Text, c)
		}
		t.Logf("sentence %2d: 1-cosine %.1e  tokens %3d  %.50q", i, 1-c, g.Tokens, s.Text)
	}
	t.Logf("lowest cosine %.12f over %d sentences", worst, len(ref.Sentences))
}
