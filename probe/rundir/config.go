package rundir

import (
	"slices"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/templates"
)

// Config is everything that defines a run. It is stored in the manifest, and
// `fragility run --resume DIR` continues from the stored Config.
type Config struct {
	Models    []string `json:"models"`    // GGUF paths, never copied or modified
	Templates string   `json:"templates"` // "builtin", a directory, a file, or a GSM8K .jsonl; several joined by templates.SourceSeparator
	// TemplateIDs and Limit pick a subset of the templates loaded
	// (templates.LoadOptions.IDs and Limit): run --template-ids, --limit.
	TemplateIDs []string `json:"template_ids,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	// MaxItems caps the set's instances (templates × variants × instances,
	// base included) before any is drawn; 0 is templates.DefaultMaxItems.
	MaxItems int `json:"max_items,omitempty"`
	// Datasets are the released GSM-Symbolic instances the run asks
	// (run --dataset): files, or hf:datasets/ORG/NAME[@REV][:CONFIG] in
	// the Hugging Face hub cache (see probe.DatasetSet); when set, Templates is
	// not read.
	Datasets []string `json:"datasets,omitempty"`
	// Items is a file of the user's own document-question items (package
	// docqa); when set, Templates is not read and Prompt is probe.PromptDocQA.
	Items     string              `json:"items,omitempty"`
	Variants  []templates.Variant `json:"variants"`
	Instances int                 `json:"instances"`
	Seed      int64               `json:"seed"`
	MaxTokens int                 `json:"max_tokens"`
	Shots     int                 `json:"shots"`            // few-shot exemplars, 0..probe.MaxShotsFor(Prompt)
	Prompt    string              `json:"prompt,omitempty"` // prompt preset: "fragility" ("" in older manifests) or "gsm-symbolic"
	Level     string              `json:"level,omitempty"`  // GSM-Symbolic difficulty level of the templates read; "" infers it from folder names
	// Reference is what noop, noop-seeming and paraphrase are compared with
	// (templates.Options.Reference): templates.ReferenceDrawn, the symbolic
	// instance of the same index, or templates.ReferenceOriginal ("" in
	// older manifests), the base instance at the template's own values.
	Reference string `json:"reference,omitempty"`
	// Split keeps the templates of one split (templates.SplitDev or
	// SplitTest; "" all of them).
	Split string `json:"split,omitempty"`
	// Protocol is the frozen protocol file the run follows (run
	// --protocol) and ProtocolSHA256 its hash; "" for none.
	Protocol       string `json:"protocol,omitempty"`
	ProtocolSHA256 string `json:"protocol_sha256,omitempty"`
	// SkipInvalid runs a template source of which more than probe.MaxLeftOutShare
	// could not be loaded or drawn (run --skip-invalid); without it such a
	// run stops before it starts.
	SkipInvalid  bool       `json:"skip_invalid,omitempty"`
	Temperature  float64    `json:"temperature"`   // 0 = greedy
	ChatTemplate string     `json:"chat_template"` // "" = the model's own (or the recorded fallback)
	Params       llm.Params `json:"params"`        // NSeq = sequences decoded together in one batch
	BootstrapB   int        `json:"bootstrap_resamples"`
	// Overrides is the label-overrides file (run --overrides; see probe.Override)
	// and OverridesSHA256 its sha256, set by probe.Validate: a report refuses the
	// file once it has changed.
	Overrides       string `json:"overrides,omitempty"`
	OverridesSHA256 string `json:"overrides_sha256,omitempty"`
	// Shard, when set, runs only that part of the plan (see ShardBatches);
	// nil runs the whole plan. It is not part of the plan (probe.PlanSHA256).
	Shard *Shard `json:"shard,omitempty"`
	// Primary is the pre-specified primary variant (`run --primary`): the
	// model's verdict is this variant's, tested alone, instead of the most
	// severe over the variants with Holm's adjustment. "" for none.
	Primary string `json:"primary_variant,omitempty"`
	// Conditions are the run's conditions (results.ConditionNone,
	// results.ConditionCalculator), each run on every item; nil means none alone.
	// CalcCalls is the calculator's call limit per item (probe.DefaultCalcCalls
	// when 0 and the calculator runs).
	Conditions []string `json:"conditions,omitempty"`
	CalcCalls  int      `json:"calc_calls,omitempty"`
	// Decode is how prompts are split into llama_decode calls
	// (probe.DecodeKeepPrefix, set by probe.Validate when empty;
	// probe.DecodePerBatch): it
	// can change logits, so it is part of the plan. Manifests written before
	// it was recorded have none, which means probe.DecodePerBatch.
	Decode string `json:"decode,omitempty"`
	// Preset records how `--preset` expanded into the flags above (nil
	// without one); not part of the plan.
	Preset *RunPreset `json:"preset,omitempty"`
	OutDir string     `json:"-"`

	// ModelSources has, for each of Models named from another tool's store
	// (Ollama, Hugging Face, LM Studio), where it was found; nil for a path.
	ModelSources []*models.Source `json:"model_sources,omitempty"`
}

// Embedder describes the embedder in the manifest.
type Embedder struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Level  string `json:"level"`
}

// RunPreset records in the manifest how `--preset` was expanded: the
// preset's name, the flag values it set (flag name without dashes ->
// value), the flags given explicitly that it left as given, and the
// difficulty levels found in the templates folder. It describes how the
// configuration was chosen and is not part of the plan (probe.PlanSHA256): a
// run with the same expanded flags given by hand has the same plan.
type RunPreset struct {
	Name     string            `json:"name"`
	Expanded map[string]string `json:"expanded"`
	Given    []string          `json:"given,omitempty"`
	Levels   []string          `json:"levels,omitempty"`
}

// PresetGSMSymbolicPaper is the run preset of the GSM-Symbolic paper's
// protocol (Mirzadeh et al., arXiv:2410.05229, §3 and Table 1): the
// gsm-symbolic prompt (8-shot Q:/A: completion), greedy decoding, the
// originals (base), every difficulty level found in the templates folder,
// GSM-NoOp (noop-seeming, drawn on the symbolic instance) and 50 datasets
// (instances).
const PresetGSMSymbolicPaper = "gsm-symbolic-paper"

// ModelSource returns where model mi of c was found (Config.ModelSources),
// or nil for a path.
func (c *Config) ModelSource(mi int) *models.Source {
	if mi < len(c.ModelSources) {
		return c.ModelSources[mi]
	}
	return nil
}

// ModelName is the name model mi of c is known by in results: the store's
// name when it came from a store, else path.
func (c *Config) ModelName(mi int, path string) string {
	if s := c.ModelSource(mi); s != nil {
		return s.Name
	}
	return path
}

// LoadOptions are the template load options of c: level and subset.
func (c Config) LoadOptions() templates.LoadOptions {
	return templates.LoadOptions{Level: c.Level, IDs: c.TemplateIDs, Limit: c.Limit}
}

// DrawnDesign reports whether the run pairs some variant with a drawn
// reference (Reference ReferenceDrawn and a variant of
// templates.DrawnReferenceVariants): its variance components are then the
// drawn design's (summary.PlanningComponents).
func (c Config) DrawnDesign() bool {
	if c.Items != "" || c.Reference != templates.ReferenceDrawn {
		return false
	}
	return slices.ContainsFunc(c.Variants, func(v templates.Variant) bool { return slices.Contains(templates.DrawnReferenceVariants, v) })
}
