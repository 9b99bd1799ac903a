package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/models"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/templates"
)

// Manifest is manifest.json: everything that can change a logit or a score,
// so that a run can be reproduced (and `fragility verify` can check it).
type Manifest struct {
	Tool            map[string]string `json:"tool"` // version and build of the fragility binary
	LlamaCommit     string            `json:"llama_cpp_commit"`
	LlamaModule     string            `json:"llama_cpp_module"`
	BuildFlags      string            `json:"build_flags"`
	SystemInfo      string            `json:"llama_system_info"`
	GOOS            string            `json:"goos"`
	GOARCH          string            `json:"goarch"`
	Devices         []llm.Device      `json:"devices"`
	Config          Config            `json:"config"`
	Models          []ModelEntry      `json:"models"`
	Embedder        *Embedder         `json:"embedder,omitempty"`
	Prompt          PromptInfo        `json:"prompt"`
	Calculator      *CalcInfo         `json:"calculator,omitempty"` // the calculator condition's protocol and call limit; nil without it
	Sampler         string            `json:"sampler"`
	ExtractionRules string            `json:"extraction_rules"`
	ErrorRules      string            `json:"error_rules,omitempty"`  // anatomy.Version; "" in runs recorded before the error anatomy
	AnswerScore     string            `json:"answer_score,omitempty"` // probe.AnswerScoreVersion; "" in runs recorded before the answer-scoring pass
	Order           string            `json:"order"`
	Batching        string            `json:"batching"`
	KVType          string            `json:"kv_cache_type"`
	SetFile         string            `json:"set_file"`
	Excluded        int               `json:"excluded_draws"`
	Flagged         int               `json:"flagged_noop_clauses"`
	Skipped         []templates.Skip  `json:"skipped_templates,omitempty"` // templates left out of the set, with the reason
	// PlanSHA256 identifies the full plan (see probe.PlanSHA256): the same in a
	// whole run, in each of its shards and in their merge.
	PlanSHA256 string     `json:"plan_sha256,omitempty"`
	Shard      *ShardInfo `json:"shard,omitempty"` // set in a shard run (--shard K/N)
	// MergedFrom lists the shards a merged run was made of (fragility merge).
	MergedFrom []MergedShard `json:"merged_from,omitempty"`
	// MergeDifferences lists the environment differences between shards
	// that `fragility merge --accept-env-diff` accepted.
	MergeDifferences []string `json:"merge_env_differences,omitempty"`
	Status           string   `json:"status"` // "running", "interrupted", "failed" or "complete"
	// FailReason is the error that stopped a run with status "failed" (or
	// an "interrupted" one that did not stop at a batch boundary).
	FailReason       string  `json:"fail_reason,omitempty"`
	Started          string  `json:"started"`
	Finished         string  `json:"finished,omitempty"`
	Resumes          int     `json:"resumes"`
	EmbedSeconds     float64 `json:"embed_seconds"`      // classifier time, spent beside generation
	EmbedWaitSeconds float64 `json:"embed_wait_seconds"` // time the run waited for a DDC result
	// GenerationSeconds is the time spent in generation and WallSeconds the
	// time from loading the first model to the end, each summed over the
	// processes of the run (an interrupted one and its resumes) and, in a
	// merged run, over its shards.
	GenerationSeconds float64 `json:"generation_seconds"`
	WallSeconds       float64 `json:"wall_seconds"`
	// TimeSplit is where the generation time went, summed like
	// GenerationSeconds (nil in runs recorded before it).
	TimeSplit *TimeSplit `json:"time_split,omitempty"`
}

// TimeSplit is the generation time of a run split by what it was spent on,
// in seconds summed over every batch: from llm.Generation's timers and the
// answer-scoring pass's wall time. Prefill and Decode are llama_decode time
// (the prompts after a kept prefix, and the steps of generated tokens);
// Entropy is the entropy passes' own time, on the critical path when they
// run between two decodes (Inline) and hidden beside the next decode when a
// pass pool computes them. What GenerationSeconds holds beyond Prefill +
// Decode + inline Entropy is the per-token record, the stop checks and
// waiting. AnswerScore is the answer-scoring pass after each batch (both
// forcings), which GenerationSeconds does not include.
type TimeSplit struct {
	PrefillSeconds     float64 `json:"prefill_seconds"`
	DecodeSeconds      float64 `json:"decode_seconds"`
	EntropySeconds     float64 `json:"entropy_seconds"`
	EntropyInline      bool    `json:"entropy_inline"` // the passes ran between decodes (no pool)
	AnswerScoreSeconds float64 `json:"answer_score_seconds"`
}

// Add adds o's seconds to t (the merge of shards, a resumed run's earlier
// processes). Inline is true when it is in either.
func (t *TimeSplit) Add(o *TimeSplit) {
	if o == nil {
		return
	}
	t.PrefillSeconds += o.PrefillSeconds
	t.DecodeSeconds += o.DecodeSeconds
	t.EntropySeconds += o.EntropySeconds
	t.EntropyInline = t.EntropyInline || o.EntropyInline
	t.AnswerScoreSeconds += o.AnswerScoreSeconds
}

// PromptInfo records the frozen prompt: instruction, exemplars and how each
// model's chat was rendered.
type PromptInfo struct {
	Version     string `json:"version"`
	Preset      string `json:"preset,omitempty"` // "fragility" or "gsm-symbolic" (--prompt)
	Instruction string `json:"instruction"`
	// PlaceboInstruction is the instruction in the placebo variant's
	// wording (templates.VariantPlacebo); "" for a preset without one.
	PlaceboInstruction string            `json:"placebo_instruction,omitempty"`
	Exemplars          []Exemplar        `json:"exemplars"`
	Stop               []string          `json:"stop,omitempty"`      // stop strings the preset adds
	Rendering          map[string]string `json:"rendering,omitempty"` // model index -> "model", "named:..." or "fallback-plain: reason"
}

// ModelEntry is one model of a run.
type ModelEntry struct {
	Path     string        `json:"path"`
	SHA256   string        `json:"sha256"`
	Size     int64         `json:"size_bytes"`
	Identity Identity      `json:"identity"`
	Backend  string        `json:"backend,omitempty"`
	Metadata *llm.Metadata `json:"metadata,omitempty"`

	Source *models.Source `json:"source,omitempty"` // the store the model was named from (nil for a path)
}

// CalcInfo is the manifest's record of the calculator condition.
type CalcInfo struct {
	Protocol string `json:"protocol"`   // probe.CalcProtocolVersion
	Calls    int    `json:"call_limit"` // calls per item that get a result
	Note     string `json:"note"`       // the instruction note (probe.CalcNote)
	Decimals int    `json:"decimals"`   // probe.CalcDecimals
}

// MergedShard is the merged manifest's record of one shard it was made of.
type MergedShard struct {
	Dir               string       `json:"dir"`   // the shard's run directory, as given to merge (absolute)
	Shard             string       `json:"shard"` // "K/N"
	Source            string       `json:"source,omitempty"`
	Host              string       `json:"host,omitempty"`
	FirstBatch        int          `json:"first_batch"`
	Batches           int          `json:"batches"`
	Items             int          `json:"items"`
	Started           string       `json:"started"`
	Finished          string       `json:"finished,omitempty"`
	Resumes           int          `json:"resumes"`
	GenerationSeconds float64      `json:"generation_seconds"`
	WallSeconds       float64      `json:"wall_seconds"`
	SystemInfo        string       `json:"llama_system_info"`
	Backends          []string     `json:"backends"` // per model, "" when the shard did not load it
	Devices           []llm.Device `json:"devices,omitempty"`
}

// Exemplar is one worked problem of the few-shot mode. The exemplars are our
// own problems (not from GSM8K or GSM-Symbolic), so they cannot leak an
// evaluation item.
type Exemplar struct {
	Question string `json:"question"`
	Solution string `json:"solution"`
}

// ToolEntropyKernel is the key of Manifest.Tool that names the entropy
// kernel of the run (llm.EntropyKernel when it was made).
const ToolEntropyKernel = "entropy_kernel"

// WithEntropyKernel returns a copy of the tool entry info with
// ToolEntropyKernel set to this binary's kernel.
func WithEntropyKernel(info map[string]string) map[string]string {
	out := map[string]string{ToolEntropyKernel: llm.EntropyKernel}
	for k, v := range info {
		out[k] = v
	}
	return out
}

// RecordedEntropyKernel returns the entropy kernel a run was made with: its
// manifest's Tool entry, and llm.EntropyKernelV1 for a run recorded before
// kernels were named.
func RecordedEntropyKernel(man *Manifest) string {
	if k := man.Tool[ToolEntropyKernel]; k != "" {
		return k
	}
	return llm.EntropyKernelV1
}

// NoteRendering records in the manifest how model mi rendered its chat
// (PromptInfo.Rendering): r's template, and the reason when it fell back.
func (m *Manifest) NoteRendering(mi int, r llm.Rendered) {
	if m.Prompt.Rendering == nil {
		m.Prompt.Rendering = map[string]string{}
	}
	v := r.Template
	if r.Reason != "" {
		v += ": " + r.Reason
	}
	m.Prompt.Rendering[fmt.Sprint(mi)] = v
}

// FileIdentity hashes a model file and identifies it from its GGUF metadata
// and, when it was named from a store (src not nil), from that name.
func FileIdentity(path string, src *models.Source) (ModelEntry, error) {
	sum, err := models.SHA256FileOnce(path)
	if err != nil {
		return ModelEntry{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return ModelEntry{}, err
	}
	id, err := IdentifyFile(path)
	if err != nil {
		return ModelEntry{}, err
	}
	if src != nil {
		id = IdentifyNamed(src.Name, id)
	}
	return ModelEntry{Path: path, SHA256: sum, Size: st.Size(), Identity: id, Source: src}, nil
}

// CheckRunDir refuses a dir that names a file, not a folder (a run's
// results.csv or manifest.json given for the run directory): the error says
// so and names the folder to give instead, the file's own folder when it
// holds a manifest. A dir that does not exist, or is a folder, passes: the
// caller's own reading says what is wrong with it.
func CheckRunDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil || fi.IsDir() {
		return nil
	}
	hint := "give the folder that holds " + FileManifest
	if parent := filepath.Dir(dir); IsFile(filepath.Join(parent, FileManifest)) {
		hint += ": " + parent
	}
	return fmt.Errorf("%s: not a run directory (%s)", dir, hint)
}

// IsFile reports whether path is a file (not a folder) that can be stat'ed.
func IsFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// ReadManifest reads manifest.json of a run directory.
func ReadManifest(dir string) (*Manifest, error) {
	if err := CheckRunDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileManifest)
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			if _, derr := os.Stat(dir); derr != nil {
				return nil, fmt.Errorf("%s: not a run directory (no such folder)", dir)
			}
			return nil, fmt.Errorf("%s: no manifest: not a run directory", dir)
		}
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		msg, line := jsonerr.Describe(data, err)
		return nil, fmt.Errorf("%s:%d: not a run manifest: %s", path, line, msg)
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil || keys["config"] == nil {
		return nil, fmt.Errorf("%s: not a run manifest (no config)", path)
	}
	return &m, nil
}

// ShortSHA is a sha256 (hex) shortened to its first 12 digits for a
// message.
func ShortSHA(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
