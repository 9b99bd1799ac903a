package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// Environment variables read by ParseShard for "auto".
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	EnvSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	EnvSlurmJobID     = "SLURM_ARRAY_JOB_ID"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
)

// ParseShard reads the value of `--shard`: "K/N" (1-based, 1 ≤ K ≤ N), or
// "auto", which takes the shard from the scheduler's environment (getenv,
// e.g. os.Getenv):
//
//   - a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX = 0..completions−1;
//     shard = index+1 of shards (the `--shards N` flag, required: the pod is
//     not told the number of completions);
//   - a Slurm job array sets SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN,
//     SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_STEP and SLURM_ARRAY_TASK_COUNT;
//     the array may start at any index and have a step (--array=4-12:4), so
//     shard = (ID − MIN)/STEP + 1 of COUNT. An array with gaps (--array=1,5,6)
//     is refused: its task IDs do not number the shards. shards, when not 0,
//     must equal COUNT.
//
// shards is the `--shards` flag (0 = not given); with "K/N" it must be 0 or N.
// It returns the shard and a description of where it came from, for the
// manifest. Errors say what is wrong in one line.
func ParseShard(spec string, shards int, getenv func(string) string) (rundir.Shard, string, error) {
	if shards < 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shards must be at least 1, got %d", shards)
	}
	if spec != "auto" {
		return parseShardSpec(spec, shards)
	}
	k8s, slurm := getenv(EnvK8sIndex), getenv(EnvSlurmTaskID)
	switch {
	case k8s != "" && slurm != "":
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: both %s and %s are set: give --shard K/N", EnvK8sIndex, EnvSlurmTaskID)
	case k8s != "":
		return k8sShard(k8s, shards)
	case slurm != "":
		return slurmShard(shards, getenv)
	}
	return rundir.Shard{}, "", fmt.Errorf("--shard auto: neither %s (Slurm job array) nor %s (Kubernetes Indexed Job) is set: give --shard K/N", EnvSlurmTaskID, EnvK8sIndex)
}

// parseShardSpec reads --shard K/N; shards (--shards, 0 when not given)
// must agree with N.
func parseShardSpec(spec string, shards int) (rundir.Shard, string, error) {
	k, n, ok := strings.Cut(spec, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return rundir.Shard{}, "", fmt.Errorf("--shard %q: want K/N (e.g. 2/8, numbered from 1) or auto", spec)
	}
	s := rundir.Shard{Index: ki, Count: ni}
	if err := s.Valid(); err != nil {
		return rundir.Shard{}, "", fmt.Errorf("--shard %s", err)
	}
	if shards != 0 && shards != ni {
		return rundir.Shard{}, "", fmt.Errorf("--shard %s and --shards %d disagree", spec, shards)
	}
	return s, "--shard " + s.String(), nil
}

// k8sShard is the shard of a Kubernetes Indexed Job's pod: its completion
// index k8s (from 0) of shards (--shards, required).
func k8sShard(k8s string, shards int) (rundir.Shard, string, error) {
	i, err := strconv.Atoi(k8s)
	if err != nil || i < 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: %s=%q is not an index ≥ 0", EnvK8sIndex, k8s)
	}
	if shards == 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto with %s needs --shards N (the Job's completions)", EnvK8sIndex)
	}
	s := rundir.Shard{Index: i + 1, Count: shards}
	if err := s.Valid(); err != nil {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: %s=%d with --shards %d: the index must be below the number of shards", EnvK8sIndex, i, shards)
	}
	return s, fmt.Sprintf("%s=%d (Kubernetes Indexed Job, --shards %d)", EnvK8sIndex, i, shards), nil
}

// slurmShard is the shard of a Slurm job array task, numbered by its task
// ID within the array's evenly spaced range; shards (--shards, 0 when not
// given) must agree with the array's task count.
func slurmShard(shards int, getenv func(string) string) (rundir.Shard, string, error) {
	num := func(name, def string) (int, error) {
		v := getenv(name)
		if v == "" {
			v = def
		}
		if v == "" {
			return 0, fmt.Errorf("--shard auto: %s is set but %s is not (not a Slurm job array task?)", EnvSlurmTaskID, name)
		}
		x, err := strconv.Atoi(v)
		if err != nil || x < 0 {
			return 0, fmt.Errorf("--shard auto: %s=%q is not a number ≥ 0", name, v)
		}
		return x, nil
	}
	id, err := num(EnvSlurmTaskID, "")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	lo, err := num(EnvSlurmTaskMin, "")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	count, err := num(EnvSlurmTaskCount, "")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	step, err := num(EnvSlurmTaskStep, "1")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	hi, err := num(EnvSlurmTaskMax, strconv.Itoa(lo+(count-1)*max(step, 1)))
	if err != nil {
		return rundir.Shard{}, "", err
	}
	if step < 1 {
		step = 1
	}
	if count < 1 || hi < lo || (hi-lo)%step != 0 || (hi-lo)/step+1 != count || id < lo || id > hi || (id-lo)%step != 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: the array (tasks %d..%d step %d, %d tasks, this one %d) is not one evenly spaced range, so its task IDs do not number the shards: submit --array=0-%d, or give --shard K/N", lo, hi, step, count, id, max(count-1, 0))
	}
	if shards != 0 && shards != count {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: --shards %d but the Slurm array has %d tasks (%s)", shards, count, EnvSlurmTaskCount)
	}
	s := rundir.Shard{Index: (id-lo)/step + 1, Count: count}
	src := fmt.Sprintf("%s=%d (Slurm job array %s, tasks %d..%d step %d)", EnvSlurmTaskID, id, getenv(EnvSlurmJobID), lo, hi, step)
	return s, src, nil
}

// planBatch is one batch of the plan: up to NSeq consecutive items of the
// order, all for one model. An item whose prompt does not fit the context is
// recorded as skipped and leaves its batch one sequence shorter; it never
// pulls an item of the next batch forward, so the batches depend on the plan
// alone and a shard can run some of them without the others.
type planBatch struct {
	model int
	items []plannedItem
}

// planBatches cuts the plan into batches: model by model (in Config.Models
// order), the run order of the set (Order) in consecutive groups of
// Params.NSeq items (the last group of a model may be shorter).
func planBatches(cfg rundir.Config, set *templates.Set) []planBatch {
	order := Order(len(set.Instances), cfg.Seed)
	nseq := max(cfg.Params.NSeq, 1)
	var out []planBatch
	for mi := range cfg.Models {
		// Each condition runs every item, in the same order, in batches of
		// its own (a batch is decoded under one condition).
		for _, cond := range runConditions(cfg) {
			for lo := 0; lo < len(order); lo += nseq {
				b := planBatch{model: mi}
				for _, k := range order[lo:min(lo+nseq, len(order))] {
					in := &set.Instances[k]
					b.items = append(b.items, plannedItem{model: mi, inst: in, id: results.ConditionItemID(itemID(mi, in), cond), cond: cond})
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
//     and its item IDs in order (see planBatches).
//
// setJSONL is the content of set.jsonl; modelSHA the models' sha256s; emb
// may be nil.
func PlanSHA256(cfg rundir.Config, set *templates.Set, setJSONL []byte, modelSHA []string, emb *rundir.Embedder) string {
	sum, _ := planSHA(cfg, planBatches(cfg, set), setJSONL, modelSHA, emb)
	return sum
}

func planSHA(cfg rundir.Config, batches []planBatch, setJSONL []byte, modelSHA []string, emb *rundir.Embedder) (string, []byte) {
	c := cfg
	c.Shard, c.Preset = nil, nil
	doc := planDoc{Format: PlanFormat, Config: c, ModelSHA256: modelSHA, PromptVersion: promptInfo(cfg).Version,
		ExtractionRules: answer.ExtractionRulesVersion}
	if emb != nil {
		doc.Embedder = &planEmbedder{SHA256: emb.SHA256, Level: emb.Level}
	}
	s := sha256.Sum256(setJSONL)
	doc.SetSHA256 = hex.EncodeToString(s[:])
	for _, b := range batches {
		db := planDocBatch{Model: b.model}
		for _, it := range b.items {
			db.Items = append(db.Items, it.id)
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
