package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// PlanBatch is one batch of the plan: up to NSeq consecutive items of the
// order, all for one model. An item whose prompt does not fit the context is
// recorded as skipped and leaves its batch one sequence shorter; it never
// pulls an item of the next batch forward, so the batches depend on the plan
// alone and a shard can run some of them without the others.
type PlanBatch struct {
	Model int           // index of the model in Config.Models
	Items []PlannedItem // in run order
}

// PlanBatches cuts the plan into batches: model by model (in Config.Models
// order), the run order of the set (Order) in consecutive groups of
// Params.NSeq items (the last group of a model may be shorter).
func PlanBatches(cfg rundir.Config, set *templates.Set) []PlanBatch {
	order := Order(len(set.Instances), cfg.Seed)
	nseq := max(cfg.Params.NSeq, 1)
	var out []PlanBatch
	for mi := range cfg.Models {
		// Each condition runs every item, in the same order, in batches of
		// its own (a batch is decoded under one condition).
		for _, cond := range runConditions(cfg) {
			for lo := 0; lo < len(order); lo += nseq {
				b := PlanBatch{Model: mi}
				for _, k := range order[lo:min(lo+nseq, len(order))] {
					in := &set.Instances[k]
					b.Items = append(b.Items, PlannedItem{Model: mi, Inst: in, ID: results.ConditionItemID(itemID(mi, in), cond), Cond: cond})
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// PlanFormat names the definition of the plan document hashed into
// Manifest.PlanSHA256.
const PlanFormat = "fragility-plan/1"

// planDoc is the document whose sha256 identifies a plan (PlanSHA256).
type planDoc struct {
	Format          string         `json:"format"`
	Config          rundir.Config  `json:"config"` // Shard cleared; OutDir is never serialised
	ModelSHA256     []string       `json:"model_sha256"`
	Embedder        *planEmbedder  `json:"embedder"` // null without DDC
	PromptVersion   string         `json:"prompt_version"`
	ExtractionRules string         `json:"extraction_rules"`
	SetSHA256       string         `json:"set_sha256"`
	Batches         []planDocBatch `json:"batches"`
}

type planEmbedder struct {
	SHA256 string `json:"sha256"`
	Level  string `json:"level"`
}

type planDocBatch struct {
	Model int      `json:"model"`
	Items []string `json:"items"`
}

// PlanSHA256 returns the sha256 (hex) that identifies the full plan of a run,
// the same for the whole run and for each of its shards. It is the sha256 of
// the compact JSON (encoding/json, fields in this order) of:
//
//   - format: PlanFormat;
//   - config: every field of the run's Config (models by path, templates,
//     variants, instances, seed, max tokens, shots, prompt preset, level,
//     temperature, chat template, every llama.cpp parameter including n_seq
//     = --batch, bootstrap resamples) with the shard cleared;
//   - model_sha256: the sha256 of each model file, in Config.Models order;
//   - embedder: its sha256 and DDC level, or null when the run has no DDC;
//   - prompt_version and extraction_rules: the version of the prompt
//     preset's instruction and exemplars (PromptVersion or
//     GSMSymbolicPromptVersion) and answer.ExtractionRulesVersion;
//   - set_sha256: the sha256 of set.jsonl (the item set, byte for byte);
//   - batches: every batch of the plan in run order, each its model index
//     and its item IDs in order (see PlanBatches).
//
// setJSONL is the content of set.jsonl; modelSHA the models' sha256s; emb
// may be nil.
func PlanSHA256(cfg rundir.Config, set *templates.Set, setJSONL []byte, modelSHA []string, emb *rundir.Embedder) string {
	sum, _ := planSHA(cfg, PlanBatches(cfg, set), setJSONL, modelSHA, emb)
	return sum
}

func planSHA(cfg rundir.Config, batches []PlanBatch, setJSONL []byte, modelSHA []string, emb *rundir.Embedder) (string, []byte) {
	c := cfg
	c.Shard, c.Preset = nil, nil
	doc := planDoc{Format: PlanFormat, Config: c, ModelSHA256: modelSHA, PromptVersion: PromptRecord(cfg).Version,
		ExtractionRules: answer.ExtractionRulesVersion}
	if emb != nil {
		doc.Embedder = &planEmbedder{SHA256: emb.SHA256, Level: emb.Level}
	}
	s := sha256.Sum256(setJSONL)
	doc.SetSHA256 = hex.EncodeToString(s[:])
	for _, b := range batches {
		db := planDocBatch{Model: b.Model}
		for _, it := range b.Items {
			db.Items = append(db.Items, it.ID)
		}
		doc.Batches = append(doc.Batches, db)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(doc) // only plain data: cannot fail
	data := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:]), data
}
