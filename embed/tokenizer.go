package embed

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/normalizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// loadTokenizer reads tokenizer.json with its truncation and padding
// switched off (Embed decides truncation itself and never pads), and with
// the BERT normaliser corrected where github.com/sugarme/tokenizer departs
// from Hugging Face tokenizers (see bertNormalizer).
func loadTokenizer(path string) (tk *tokenizer.Tokenizer, err error) {
	defer func() {
		if r := recover(); r != nil {
			tk, err = nil, fmt.Errorf("%s: not a usable tokenizer.json: %v", path, r)
		}
	}()
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec struct {
		Normalizer *struct {
			Type               string `json:"type"`
			CleanText          *bool  `json:"clean_text"`
			HandleChineseChars *bool  `json:"handle_chinese_chars"`
			StripAccents       *bool  `json:"strip_accents"`
			Lowercase          *bool  `json:"lowercase"`
		} `json:"normalizer"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tk, err = pretrained.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tk.WithTruncation(nil)
	tk.WithPadding(nil)
	if n := spec.Normalizer; n != nil && n.Type == "BertNormalizer" {
		flag := func(p *bool, def bool) bool {
			if p == nil {
				return def
			}
			return *p
		}
		lower := flag(n.Lowercase, true)
		tk.WithNormalizer(&bertNormalizer{
			base:  normalizer.NewBertNormalizer(flag(n.CleanText, true), lower, flag(n.HandleChineseChars, true), false),
			strip: flag(n.StripAccents, lower),
		})
	}
	return tk, nil
}

// bertNormalizer is the BertNormalizer of Hugging Face tokenizers
// (tokenizers/src/normalizers/bert.rs): clean the text, pad CJK ideographs
// with spaces, strip accents, lowercase. Two details differ in
// github.com/sugarme/tokenizer v0.3.0 and change token ids on accented or
// Japanese text: there, "strip_accents": null means false, while Hugging Face
// uses the value of "lowercase" (so uncased BERT strips accents); and
// accents are stripped by removing nonspacing marks without first
// decomposing to NFD, which leaves "é" or "ご" whole. Lowercasing before
// stripping, as the base normaliser does, gives the same result.
type bertNormalizer struct {
	base  *normalizer.BertNormalizer
	strip bool
}

// Normalize implements normalizer.Normalizer.
func (b *bertNormalizer) Normalize(n *normalizer.NormalizedString) (*normalizer.NormalizedString, error) {
	n, err := b.base.Normalize(n)
	if err != nil || !b.strip {
		return n, err
	}
	return n.NFD().RemoveAccents(), nil
}
