package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
)

// Pooling names how token embeddings become one sentence vector, with the
// names of sentence-transformers' Pooling module.
type Pooling string

// The pooling modes this package implements (sentence_transformers.models.Pooling):
//
//	mean:           v = Σ_t m_t h_t / Σ_t m_t, over the attention mask m
//	cls:            v = h_0, the [CLS] token
//	max:            v_k = max_t h_tk over tokens with m_t = 1
//	mean_sqrt_len:  v = Σ_t m_t h_t / sqrt(Σ_t m_t)
const (
	PoolMean        Pooling = "mean"
	PoolCLS         Pooling = "cls"
	PoolMax         Pooling = "max"
	PoolMeanSqrtLen Pooling = "mean_sqrt_len"
)

// defaultMaxTokens is the sequence limit used when a directory has no
// sentence_bert_config.json: BERT's 512 positions.
const defaultMaxTokens = 512

// stConfig is what this package reads of a sentence-transformers model
// directory.
type stConfig struct {
	pooling   Pooling
	normalize bool // a sentence_transformers.models.Normalize module follows pooling
	maxTokens int  // max_seq_length, including special tokens
	dim       int  // word_embedding_dimension, 0 if unknown
	fromFiles bool // false: no configuration found, defaults used
}

// readSTConfig reads modules.json, the Pooling module's config.json and
// sentence_bert_config.json from dir. A directory without modules.json gets
// the defaults of a bare sentence-transformers model: mean pooling, L2
// normalisation, 512 tokens (a bare transformer has no Normalize module;
// fragility normalises because its cosines assume unit vectors either way).
func readSTConfig(dir string) (stConfig, error) {
	c := stConfig{pooling: PoolMean, normalize: true, maxTokens: defaultMaxTokens}
	var mods []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	found, err := readJSON(filepath.Join(dir, "modules.json"), &mods)
	if err != nil {
		return c, err
	}
	if found {
		c.fromFiles = true
		c.normalize = false
		poolPath := ""
		for _, m := range mods {
			switch {
			case strings.HasSuffix(m.Type, ".Pooling"):
				poolPath = m.Path
			case strings.HasSuffix(m.Type, ".Normalize"):
				c.normalize = true
			case strings.HasSuffix(m.Type, ".Transformer"):
			default:
				return c, fmt.Errorf("%s: module %q is not supported (only Transformer, Pooling, Normalize)",
					filepath.Join(dir, "modules.json"), m.Type)
			}
		}
		if poolPath == "" {
			return c, fmt.Errorf("%s: no Pooling module", filepath.Join(dir, "modules.json"))
		}
		pc := filepath.Join(dir, poolPath, "config.json")
		var p struct {
			Dim         int  `json:"word_embedding_dimension"`
			CLS         bool `json:"pooling_mode_cls_token"`
			Mean        bool `json:"pooling_mode_mean_tokens"`
			Max         bool `json:"pooling_mode_max_tokens"`
			MeanSqrtLen bool `json:"pooling_mode_mean_sqrt_len_tokens"`
			Weighted    bool `json:"pooling_mode_weightedmean_tokens"`
			LastToken   bool `json:"pooling_mode_lasttoken"`
		}
		ok, err := readJSON(pc, &p)
		if err != nil {
			return c, err
		}
		if !ok {
			return c, fmt.Errorf("%s: missing (named by modules.json)", pc)
		}
		var modes []Pooling
		for _, m := range []struct {
			on bool
			p  Pooling
		}{{p.CLS, PoolCLS}, {p.Mean, PoolMean}, {p.Max, PoolMax}, {p.MeanSqrtLen, PoolMeanSqrtLen}} {
			if m.on {
				modes = append(modes, m.p)
			}
		}
		if p.Weighted || p.LastToken {
			return c, fmt.Errorf("%s: weighted-mean and last-token pooling are not supported", pc)
		}
		if len(modes) != 1 {
			return c, fmt.Errorf("%s: want exactly one pooling mode, found %d", pc, len(modes))
		}
		c.pooling, c.dim = modes[0], p.Dim
	}
	var sb struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	sbPath := filepath.Join(dir, "sentence_bert_config.json")
	ok, err := readJSON(sbPath, &sb)
	if err != nil {
		return c, err
	}
	if ok {
		c.fromFiles = true
		if sb.MaxSeqLength < 3 {
			return c, fmt.Errorf("%s: max_seq_length %d is too small", sbPath, sb.MaxSeqLength)
		}
		c.maxTokens = sb.MaxSeqLength
	}
	return c, nil
}

// readJSON decodes the JSON file at path into v. found is false, with no
// error, when the file does not exist.
func readJSON(path string, v any) (found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("%s: %s", path, jsonerr.Text(b, err))
	}
	return true, nil
}
