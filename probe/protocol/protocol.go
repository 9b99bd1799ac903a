package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// maxProtocolSize bounds a protocol file read (a protocol is a few KiB).
const maxProtocolSize = 1 << 20

// ProtocolVersion names the format of Protocol.
const ProtocolVersion = "protocol/1"

// Protocol is a frozen test protocol (`fragility protocol freeze`):
// everything that shapes an answer or its score, fixed on development
// templates before the test templates are run, so that no prompt is chosen
// by its test scores. `run --protocol FILE` runs exactly it and refuses a
// flag that would change it; the manifest, summary.json and the narrative
// carry its SHA256.
type Protocol struct {
	Version string `json:"protocol_version"` // ProtocolVersion

	// The prompt: preset, its version, instruction and worked examples
	// (probe.PromptRecord), the chat template ("" = the model's own).
	Prompt       rundir.PromptInfo `json:"prompt"`
	Shots        int               `json:"shots"`
	ChatTemplate string            `json:"chat_template"`
	// The scoring: extraction and error-anatomy rules.
	ExtractionRules string `json:"extraction_rules"`
	ErrorRules      string `json:"error_rules"`
	// AnswerScore is the answer-scoring procedure (probe.AnswerScoreVersion);
	// empty in protocols frozen before it existed, which do not pin it.
	AnswerScore string `json:"answer_score,omitempty"`
	// Sampling and the output budget.
	Temperature float64 `json:"temperature"`
	Seed        int64   `json:"seed"`
	MaxTokens   int     `json:"max_tokens"`
	// The design: variants, instances, reference, conditions.
	Variants   []templates.Variant `json:"variants"`
	Instances  int                 `json:"instances"`
	Reference  string              `json:"reference"`
	Conditions []string            `json:"conditions,omitempty"`
	CalcCalls  int                 `json:"calc_calls,omitempty"`
	// The templates: source, its content hash (templates.SourceSHA256),
	// level and the split the protocol is for.
	Templates       string `json:"templates"`
	TemplatesSHA256 string `json:"templates_sha256"`
	Level           string `json:"level,omitempty"`
	Split           string `json:"split"`
	// TemplateIDs and Limit are the subset of the templates run
	// (Config.TemplateIDs, Config.Limit); none when absent.
	TemplateIDs []string `json:"template_ids,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	// Primary is the pre-specified primary variant (Config.Primary): the
	// verdict is its drop, tested alone; "" = Holm across the variants.
	Primary string `json:"primary_variant,omitempty"`

	// SHA256 is the hash of the protocol's other fields (the JSON of the
	// Protocol with SHA256 empty, as written): a changed field is seen.
	SHA256 string `json:"sha256"`
}

// FreezeProtocol returns the protocol of cfg (after probe.Validate) with its
// hashes. Errors name the template source that cannot be read.
func FreezeProtocol(cfg rundir.Config) (*Protocol, error) {
	if cfg.Items != "" {
		return nil, probe.OptionError{Msg: "a protocol freezes a template run, not document questions (--items)"}
	}
	// The protocol is run from anywhere: its templates by absolute path.
	srcs := templates.SplitSources(cfg.Templates)
	for i, s := range srcs {
		if s == "builtin" {
			continue
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, err
		}
		srcs[i] = abs
	}
	cfg.Templates = templates.JoinSources(srcs)
	sum, err := templates.SourceSHA256(cfg.Templates, templates.LoadOptions{Level: cfg.Level})
	if err != nil {
		return nil, err
	}
	if len(cfg.TemplateIDs) > 0 || cfg.Limit > 0 {
		// A subset that names an unknown template is refused now, not at run.
		if _, _, err := templates.LoadSkipping(cfg.Templates, cfg.LoadOptions()); err != nil {
			return nil, err
		}
	}
	p := &Protocol{Version: ProtocolVersion, Prompt: probe.PromptRecord(cfg), Shots: cfg.Shots, ChatTemplate: cfg.ChatTemplate,
		ExtractionRules: answer.ExtractionRulesVersion, ErrorRules: anatomy.Version, AnswerScore: probe.AnswerScoreVersion,
		Temperature: cfg.Temperature, Seed: cfg.Seed, MaxTokens: cfg.MaxTokens,
		Variants: cfg.Variants, Instances: cfg.Instances, Reference: cfg.Reference, Conditions: cfg.Conditions, CalcCalls: cfg.CalcCalls,
		Templates: cfg.Templates, TemplatesSHA256: sum, Level: cfg.Level, Split: cfg.Split, TemplateIDs: cfg.TemplateIDs, Limit: cfg.Limit, Primary: cfg.Primary}
	p.SHA256, err = p.hash()
	return p, err
}

// hash is the SHA256 of p's JSON with the SHA256 field empty.
func (p *Protocol) hash() (string, error) {
	q := *p
	q.SHA256 = ""
	b, err := json.Marshal(&q)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// ReadProtocol reads a protocol file and checks it: its format, its hash
// (an edited file is refused) and that this binary scores as it says
// (extraction and error rules). Errors name the file.
func ReadProtocol(path string) (*Protocol, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, templates.BarePathError(err))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProtocolSize+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxProtocolSize {
		return nil, fmt.Errorf("%s: not a protocol file (over %d bytes)", path, maxProtocolSize)
	}
	var p Protocol
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		msg, _ := jsonerr.Describe(data, err)
		return nil, fmt.Errorf("%s: not a protocol file (%s)", path, msg)
	}
	if p.Version != ProtocolVersion {
		return nil, fmt.Errorf("%s: protocol_version %q, this binary reads %s", path, p.Version, ProtocolVersion)
	}
	if h, err := p.hash(); err != nil || h != p.SHA256 {
		return nil, fmt.Errorf("%s: its fields do not match its sha256 %.12s (edited after it was frozen?): freeze it again", path, p.SHA256)
	}
	if p.ExtractionRules != answer.ExtractionRulesVersion || p.ErrorRules != anatomy.Version {
		return nil, fmt.Errorf("%s: frozen with extraction rules %s and error rules %s; this binary has %s and %s", path, p.ExtractionRules, p.ErrorRules, answer.ExtractionRulesVersion, anatomy.Version)
	}
	if p.AnswerScore != "" && p.AnswerScore != probe.AnswerScoreVersion {
		return nil, fmt.Errorf("%s: frozen with answer scoring %s; this binary has %s", path, p.AnswerScore, probe.AnswerScoreVersion)
	}
	return &p, nil
}

// Apply sets cfg's fields to the protocol's and records it
// (Config.Protocol, Config.ProtocolSHA256). It refuses, naming the file, a
// template source whose content changed since the freeze and a prompt this
// binary renders otherwise.
func (p *Protocol) Apply(cfg *rundir.Config, path string) error {
	cfg.Prompt, cfg.Shots, cfg.ChatTemplate = p.Prompt.Preset, p.Shots, p.ChatTemplate
	cfg.Temperature, cfg.Seed, cfg.MaxTokens = p.Temperature, p.Seed, p.MaxTokens
	cfg.Variants, cfg.Instances, cfg.Reference = p.Variants, p.Instances, p.Reference
	cfg.Conditions, cfg.CalcCalls = p.Conditions, p.CalcCalls
	cfg.Templates, cfg.Level, cfg.Split = p.Templates, p.Level, p.Split
	cfg.TemplateIDs, cfg.Limit, cfg.Primary = p.TemplateIDs, p.Limit, p.Primary
	sum, err := templates.SourceSHA256(cfg.Templates, templates.LoadOptions{Level: cfg.Level})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if sum != p.TemplatesSHA256 {
		return fmt.Errorf("%s: the templates %s changed since the protocol was frozen (sha256 %.12s, frozen %.12s)", path, p.Templates, sum, p.TemplatesSHA256)
	}
	pi := probe.PromptRecord(*cfg)
	a, _ := json.Marshal(pi)
	b, _ := json.Marshal(p.Prompt)
	if !bytes.Equal(a, b) {
		return fmt.Errorf("%s: this binary renders the %s prompt (version %s) otherwise than when the protocol was frozen (version %s)", path, pi.Preset, pi.Version, p.Prompt.Version)
	}
	cfg.Protocol, cfg.ProtocolSHA256 = path, p.SHA256
	return nil
}
