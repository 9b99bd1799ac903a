package compare

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"
)

// CompareOptions are the settings of Compare.
type CompareOptions struct {
	// Reference names the reference model (compare's --reference-model):
	// a path as recorded in the manifest, or its file name. "" picks the
	// file with the most bits per weight (see BitsPerWeight), the first one
	// among equals.
	Reference string
	// Log receives one-line notices; may be nil.
	Log io.Writer
	// Progress, when set, is called after every scored item with the items
	// scored so far and the number to score (items × compared models).
	Progress func(done, total int)
}

// Distribution summarises per-token values in the way llama.cpp's
// llama-perplexity --kl-divergence reports them: the mean with its standard
// error, and the maximum, the 99.9, 99, 95 and 90th percentiles, the median,
// the 10, 5, 1 and 0.1th percentiles and the minimum.
//
// SE = s/√n with s the sample standard deviation (n − 1 denominator); it
// treats tokens as independent, which they are not (tokens of one answer are
// correlated), so it understates the uncertainty, as llama.cpp's does.
// Percentiles interpolate linearly between order statistics (Hyndman & Fan
// 1996, definition 7). RMS is √(Σx²/n). All zero when N = 0.
type Distribution struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	SE     float64 `json:"se"`
	RMS    float64 `json:"rms"`
	Max    float64 `json:"max"`
	P999   float64 `json:"p99_9"`
	P99    float64 `json:"p99"`
	P95    float64 `json:"p95"`
	P90    float64 `json:"p90"`
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P5     float64 `json:"p5"`
	P1     float64 `json:"p1"`
	P01    float64 `json:"p0_1"`
	Min    float64 `json:"min"`
}

// Describe computes the Distribution of xs (not modified).
func Describe(xs []float64) Distribution {
	n := len(xs)
	if n == 0 {
		return Distribution{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum, sq float64
	for _, v := range s {
		sum += v
		sq += v * v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	d := Distribution{N: n, Mean: mean, RMS: math.Sqrt(sq / float64(n)), Max: s[n-1], Min: s[0]}
	if n > 1 {
		d.SE = math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	}
	d.P999, d.P99, d.P95, d.P90 = stats.Quantile7(s, 0.999), stats.Quantile7(s, 0.99), stats.Quantile7(s, 0.95), stats.Quantile7(s, 0.90)
	d.Median = stats.Quantile7(s, 0.5)
	d.P10, d.P5, d.P1, d.P01 = stats.Quantile7(s, 0.10), stats.Quantile7(s, 0.05), stats.Quantile7(s, 0.01), stats.Quantile7(s, 0.001)
	return d
}

// logSumExp returns ln Σ exp(l_i) of a row of logits in float64, max
// subtracted (the standard overflow-safe form), summed in index order.
func logSumExp(l []float32) float64 {
	m := math.Inf(-1)
	for _, v := range l {
		m = math.Max(m, float64(v))
	}
	if math.IsInf(m, 0) {
		return m
	}
	var z float64
	for _, v := range l {
		z += math.Exp(float64(v) - m)
	}
	return m + math.Log(z)
}

// KLDivergence returns the Kullback–Leibler divergence
//
//	KL(P‖Q) = Σ_i p_i (ln p_i − ln q_i)    (Kullback & Leibler 1951)
//
// in nats, between P = softmax(ref) and Q = softmax(q) over the full rows of
// raw logits (both [n_vocab]), with the log-softmax ln p_i = l_i − ln Σ_j
// exp(l_j) computed in float64. It is the per-token quantity of llama.cpp's
// llama-perplexity --kl-divergence.
//
// Each term is evaluated in the equivalent form p_i·(d_i − 1 + e^(−d_i)),
// d_i = ln p_i − ln q_i (equal in sum because Σp = Σq = 1; Bregman form),
// whose every term is ≥ 0, so rounding never makes KL negative; a token with
// p_i = 0 contributes q_i, one with q_i = 0 < p_i makes KL = +Inf. Identical
// rows give exactly 0. Errors: rows of different lengths, empty rows, NaN.
func KLDivergence(ref, q []float32) (float64, error) {
	if len(ref) == 0 || len(ref) != len(q) {
		return 0, fmt.Errorf("kl divergence: rows of %d and %d logits", len(ref), len(q))
	}
	za, zb := logSumExp(ref), logSumExp(q)
	if math.IsNaN(za) || math.IsNaN(zb) || math.IsInf(za, 0) || math.IsInf(zb, 0) {
		return 0, fmt.Errorf("kl divergence: logits hold NaN or no finite value")
	}
	var kl float64
	for i := range ref {
		lp := float64(ref[i]) - za
		lq := float64(q[i]) - zb
		p := math.Exp(lp)
		switch {
		case p == 0:
			kl += math.Exp(lq)
		case math.IsInf(lq, -1):
			return math.Inf(1), nil
		default:
			d := lp - lq
			if d > -30 {
				kl += p * (math.Expm1(-d) + d)
			} else { // q ≥ e^30·p: the term is ≈ q, and e^(−d) could overflow
				kl += math.Exp(lq) - p + p*d
			}
		}
	}
	return kl, nil
}

// ModelComparison is one model of a comparison: its agreement with the
// reference, token by token, and its accuracy and drops from the run.
type ModelComparison struct {
	Path          string  `json:"path"`
	Label         string  `json:"label"` // display name (from the run's summary)
	Quantization  string  `json:"quantization"`
	BitsPerWeight float64 `json:"bits_per_weight"` // see BitsPerWeight; 0 when unknown
	Reference     bool    `json:"reference"`
	SameFamily    bool    `json:"same_family"` // SameFamily with the reference

	// Token-level agreement with the reference, over every generated token
	// of the reference (teacher forcing); nil for the reference itself.
	Agreement *Agreement `json:"agreement,omitempty"`

	Accuracy []VariantAccuracy `json:"accuracy"` // in the summary's variant order
}

// Agreement is how one model's next-token distributions agree with the
// reference's on the reference's own tokens.
type Agreement struct {
	Items  int `json:"items"`  // items scored
	Tokens int `json:"tokens"` // tokens scored
	// KL is KL(ref‖model) in nats per token (KLDivergence).
	KL Distribution `json:"kl_nats"`
	// SameTopPct is the percentage of tokens where both models' most likely
	// token (lowest id among ties) is the same, with its standard error
	// √(p(1−p)/(n−1)) in percentage points.
	SameTopPct float64 `json:"same_top_pct"`
	SameTopSE  float64 `json:"same_top_se_pp"`
	// DeltaP is p_model(t) − p_ref(t) for the reference's token t (Mean, SE
	// and RMS as llama.cpp reports "Δp" and "RMS Δp"), as a probability.
	DeltaP Distribution `json:"delta_p"`
	// DeltaH is H_model − H_ref of the full next-token distributions, in bits.
	DeltaH Distribution `json:"delta_entropy_bits"`
}

// VariantAccuracy is a model's accuracy on one variant and its drop against
// base, from the run's Summary.
type VariantAccuracy struct {
	Variant string   `json:"variant"`
	K       float64  `json:"k"`            // distinct prompts answered right (VariantSummary.K)
	N       int      `json:"n"`            // distinct prompts scored (VariantSummary.N)
	Pct     *float64 `json:"accuracy_pct"` // nil when N = 0
	DropPP  *float64 `json:"drop_pp"`      // nil for base or without base
	// Against is what DropPP is taken against: the variant's reference,
	// base or, for a variant drawn on the symbolic instance of its index
	// (run --reference drawn), symbolic (summary.Paired.Reference); "" for
	// base and without pairs.
	Against string `json:"drop_against,omitempty"`
}

// Comparison is the result of Compare.
type Comparison struct {
	Dir       string `json:"dir"`
	Reference int    `json:"reference"` // index into Models
	// ReferenceRule says how the reference was chosen.
	ReferenceRule string            `json:"reference_rule"`
	NVocab        int               `json:"n_vocab"`
	Variants      []string          `json:"variants"`
	Models        []ModelComparison `json:"models"` // in the run's model order
	// Differences are the summary's paired differences between models
	// (Summary.ModelPairs) that involve the reference: accuracy and paired
	// drop, A − B, clustered by template, with intervals and Holm-adjusted
	// sign-flip tests.
	Differences []summary.ModelPair `json:"differences"`
	// Confidence is the level of the differences' intervals (the summary's
	// Params.Confidence).
	Confidence float64 `json:"confidence_level"`
}

// BitsPerWeight returns 8 × tensor bytes / parameters of a model
// (llama_model_size and llama_model_n_params), the precision rank used to
// pick the reference; 0 when unknown.
func BitsPerWeight(md *llm.Metadata) float64 {
	if md == nil || md.NParams == 0 {
		return 0
	}
	return 8 * float64(md.ModelSizeBytes) / float64(md.NParams)
}

// Compare compares the models of a finished run in dir with a reference
// model, the way llama.cpp's llama-perplexity --kl-divergence compares a
// quantization with its base model: for every item the reference generated
// tokens for (traces.jsonl), its prompt token ids and generated token ids are
// fed to the reference and to each other model with llm.Model.Score (teacher
// forcing, one sequence, a fresh KV state per item), and at every token the
// two full next-token distributions are compared: KL(ref‖model), same top
// token, Δp of the reference's token and the entropy difference (see
// Agreement). Accuracy per variant and drops come from the run's
// summary.json (recomputed with WriteSummary when missing).
//
// It writes compare.csv, compare.md and compare.json into dir and returns
// the comparison. The reference's logits are held for one item at a time:
// tokens × n_vocab × 4 bytes. Errors name the file or item: fewer than two
// models, an unknown --reference-model, models with different vocabularies or
// prompt token ids (different tokenizers cannot be compared token by token),
// a model that does not load.
func Compare(ctx context.Context, dir string, opt CompareOptions) (*Comparison, error) {
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if len(man.Models) < 2 {
		return nil, fmt.Errorf("%s: compare needs at least two models, the run has %d", dir, len(man.Models))
	}
	sum, err := readSummary(dir)
	if err != nil {
		return nil, err
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		return nil, err
	}
	ref, rule, err := pickReference(man, opt.Reference)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	c := &comparer{ctx: ctx, dir: dir, opt: opt, man: man, ref: ref,
		cmp: &Comparison{Dir: dir, Reference: ref, ReferenceRule: rule, Variants: sum.Variants, Confidence: sum.Params.Confidence}}
	c.fromSummary(sum)
	if err := c.readItems(traces); err != nil {
		return nil, err
	}
	if err := c.measure(); err != nil {
		return nil, err
	}
	if err := WriteCompareFiles(dir, c.cmp); err != nil {
		return nil, err
	}
	return c.cmp, nil
}

// comparer is the state of one Compare shared by its steps.
type comparer struct {
	ctx     context.Context
	dir     string
	opt     CompareOptions
	man     *rundir.Manifest
	ref     int // index of the reference model
	cmp     *Comparison
	items   []compareItem            // the reference's items with tokens
	prompts []map[string][]llm.Token // per model: instance -> prompt token ids
	refM    *llm.Model               // the reference model, loaded
	logits  [][]float32              // the reference's logits of an item, one row per token (reused)
	dists   []llm.Dist               // the reference's distributions of an item
	done    int                      // items compared, all models
	total   int                      // items to compare, all models
}

// compareItem is an item of the reference: its instance, prompt token ids
// and the tokens it generated (forced on every model).
type compareItem struct {
	inst   string
	prompt []llm.Token
	forced []llm.Token
}

// agreementSums gathers the per-token measures of one model against the
// reference: KL divergence, change of the forced token's probability and of
// the entropy (bits), and how many tokens have the same top token.
type agreementSums struct {
	kl, dp, dh []float64
	same       int
}

// logf writes a one-line notice to opt.Log, if any.
func (c *comparer) logf(format string, args ...any) {
	if c.opt.Log != nil {
		fmt.Fprintf(c.opt.Log, format+"\n", args...)
	}
}

// fromSummary fills each model's identity and accuracies from the run's
// summary and keeps the differences between models that involve the
// reference.
func (c *comparer) fromSummary(sum *summary.Summary) {
	man, ref, cmp := c.man, c.ref, c.cmp
	for i, me := range man.Models {
		mc := ModelComparison{Path: me.Path, Label: filepath.Base(me.Path), BitsPerWeight: BitsPerWeight(me.Metadata),
			Reference: i == ref, SameFamily: rundir.SameFamily(man.Models[ref].Identity, me.Identity)}
		if me.Metadata != nil {
			mc.Quantization = me.Metadata.Quantization
		}
		if ms := summaryModel(sum, me.Path); ms != nil {
			mc.Label = ms.Label
			if mc.Quantization == "" {
				mc.Quantization = ms.Quantization
			}
			mc.Accuracy = variantAccuracies(sum.Variants, ms)
		}
		if !mc.SameFamily && i != ref {
			c.logf("compare: %s and the reference %s do not look like one model family (%s vs %s); comparing anyway",
				me.Path, man.Models[ref].Path, me.Identity.Family, man.Models[ref].Identity.Family)
		}
		cmp.Models = append(cmp.Models, mc)
	}
	for _, mp := range sum.ModelPairs {
		if mp.APath == man.Models[ref].Path || mp.BPath == man.Models[ref].Path {
			cmp.Differences = append(cmp.Differences, mp)
		}
	}
}

// variantAccuracies is a model's accuracy and drop against base in each of
// the variants, from its summary.
func variantAccuracies(variants []string, ms *summary.ModelSummary) []VariantAccuracy {
	var out []VariantAccuracy
	for _, v := range variants {
		va := VariantAccuracy{Variant: v}
		if vs := ms.Variant(v); vs != nil {
			va.K, va.N = vs.K, vs.N
			if vs.AccuracyPct != nil {
				va.Pct = &vs.AccuracyPct.Value
			}
			if vs.DropPP != nil {
				va.DropPP = &vs.DropPP.Value
			}
			if vs.Paired != nil {
				va.Against = cmp.Or(vs.Paired.Reference, summary.BaseVariant)
			}
		}
		out = append(out, va)
	}
	return out
}

// readItems lists the reference's items with generated tokens and every
// model's prompt token ids per instance, condition none only.
func (c *comparer) readItems(traces []rundir.Trace) error {
	man := c.man
	c.prompts = make([]map[string][]llm.Token, len(man.Models))
	for i := range c.prompts {
		c.prompts[i] = map[string][]llm.Token{}
	}
	for ln, t := range traces {
		mi, inst, err := probe.SplitItemID(t.ItemID, len(man.Models))
		if err != nil {
			return fmt.Errorf("%s:%d: %w", filepath.Join(c.dir, rundir.FileTraces), ln+1, err)
		}
		if t.SkipReason != "" || results.ItemCondition(t.ItemID) != results.ConditionNone {
			continue // the comparison is of the model alone
		}
		c.prompts[mi][inst] = t.PromptTokenIDs
		if mi == c.ref && len(t.Tokens) > 0 {
			it := compareItem{inst: inst, prompt: t.PromptTokenIDs}
			for _, tok := range t.Tokens {
				it.forced = append(it.forced, tok.ID)
			}
			c.items = append(c.items, it)
		}
	}
	if len(c.items) == 0 {
		return fmt.Errorf("%s: the reference %s generated no tokens: nothing to compare", c.dir, man.Models[c.ref].Path)
	}
	return nil
}

// measure loads the reference and compares every other model with it,
// token by token.
func (c *comparer) measure() error {
	man := c.man
	params := man.Config.Params
	params.NSeq = 1
	refModel, err := llm.Load(man.Models[c.ref].Path, params)
	if err != nil {
		return err
	}
	defer refModel.Close()
	c.refM = refModel
	c.cmp.NVocab = refModel.NVocab()
	c.total = len(c.items) * (len(man.Models) - 1)
	for mi, me := range man.Models {
		if mi == c.ref {
			continue
		}
		if err := c.compareModel(mi, me, params); err != nil {
			return err
		}
	}
	return nil
}

// compareModel loads model mi, scores the reference's tokens of every item
// with it and the reference, and records the agreement.
func (c *comparer) compareModel(mi int, me rundir.ModelEntry, params llm.Params) error {
	nv := c.cmp.NVocab
	qm, err := llm.Load(me.Path, params)
	if err != nil {
		return err
	}
	defer qm.Close()
	if qm.NVocab() != nv {
		return fmt.Errorf("%s: vocabulary of %d tokens, the reference %s has %d: not comparable token by token", me.Path, qm.NVocab(), c.man.Models[c.ref].Path, nv)
	}
	var s agreementSums
	for _, it := range c.items {
		if err := c.compareItem(qm, mi, me, it, &s); err != nil {
			return err
		}
		c.done++
		if c.opt.Progress != nil {
			c.opt.Progress(c.done, c.total)
		}
	}
	n := len(s.kl)
	ag := &Agreement{Items: len(c.items), Tokens: n, KL: Describe(s.kl), DeltaP: Describe(s.dp), DeltaH: Describe(s.dh)}
	if n > 0 {
		p := float64(s.same) / float64(n)
		ag.SameTopPct = 100 * p
		if n > 1 {
			ag.SameTopSE = 100 * math.Sqrt(p*(1-p)/float64(n-1))
		}
	}
	c.cmp.Models[mi].Agreement = ag
	return nil
}

// compareItem scores one item's forced tokens with the reference, then with
// qm, adding each token's measures to s; it refuses an item whose prompt
// token ids differ from the reference's.
func (c *comparer) compareItem(qm *llm.Model, mi int, me rundir.ModelEntry, it compareItem, s *agreementSums) error {
	ref := c.ref
	if p, ok := c.prompts[mi][it.inst]; ok && !equalTokens(p, it.prompt) {
		return fmt.Errorf("%s: item %s: its prompt token ids differ from the reference's (different tokenizers): not comparable token by token", me.Path, fmt.Sprintf("m%d/%s", mi, it.inst))
	}
	c.dists = c.dists[:0]
	err := c.refM.Score(c.ctx, it.prompt, it.forced, 0, func(step int, l []float32, d llm.Dist) error {
		if step >= len(c.logits) {
			c.logits = append(c.logits, make([]float32, len(l)))
		}
		copy(c.logits[step], l)
		c.dists = append(c.dists, d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: item %s: %w", c.man.Models[ref].Path, fmt.Sprintf("m%d/%s", ref, it.inst), err)
	}
	err = qm.Score(c.ctx, it.prompt, it.forced, 0, func(step int, l []float32, d llm.Dist) error {
		k, err := KLDivergence(c.logits[step], l)
		if err != nil {
			return fmt.Errorf("token %d: %w", step, err)
		}
		s.kl = append(s.kl, k)
		rd := c.dists[step]
		if rd.ArgMax == d.ArgMax {
			s.same++
		}
		tok := it.forced[step]
		s.dp = append(s.dp, math.Exp(d.LogProb(l[tok]))-math.Exp(rd.LogProb(c.logits[step][tok])))
		s.dh = append(s.dh, d.EntropyBits-rd.EntropyBits)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: item %s: %w", me.Path, fmt.Sprintf("m%d/%s", mi, it.inst), err)
	}
	return nil
}

// pickReference returns the index of the reference model and how it was chosen.
func pickReference(man *rundir.Manifest, want string) (int, string, error) {
	if want != "" {
		for i, me := range man.Models {
			if me.Path == want || filepath.Clean(me.Path) == filepath.Clean(want) {
				return i, "given with --reference-model", nil
			}
		}
		var hits []int
		for i, me := range man.Models {
			if filepath.Base(me.Path) == filepath.Base(want) {
				hits = append(hits, i)
			}
		}
		if len(hits) == 1 {
			return hits[0], "given with --reference-model", nil
		}
		var names []string
		for _, me := range man.Models {
			names = append(names, me.Path)
		}
		return 0, "", fmt.Errorf("reference %s is not one model of the run (models: %s)", want, strings.Join(names, ", "))
	}
	// A requantized file (llm.KeyRequantizedFrom) is no more precise than
	// its source, whatever its bits per weight: it is the reference only
	// when every candidate is requantized.
	original := 0
	for _, me := range man.Models {
		if me.Metadata != nil && me.Metadata.RequantizedFrom == "" {
			original++
		}
	}
	best, bpw := 0, -1.0
	for i, me := range man.Models {
		if original > 0 && me.Metadata != nil && me.Metadata.RequantizedFrom != "" {
			continue
		}
		if b := BitsPerWeight(me.Metadata); b > bpw {
			best, bpw = i, b
		}
	}
	if bpw <= 0 {
		return best, "the first model (no model metadata recorded to rank precision)", nil
	}
	rule := fmt.Sprintf("the file with the most bits per weight (%s)", strconv.FormatFloat(bpw, 'f', 2, 64))
	switch {
	case original == 0:
		rule += "; WARNING: every model is requantized (" + llm.KeyRequantizedFrom + "), so none has original weights"
	case original < len(man.Models):
		rule += ", among the files with original weights (requantized files are never the reference)"
	}
	return best, rule, nil
}

// readSummary reads summary.json of a run directory, recomputing it from
// results.csv (WriteSummary) when it is missing.
func readSummary(dir string) (*summary.Summary, error) {
	path := filepath.Join(dir, rundir.FileSummary)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return probe.WriteSummary(dir)
	}
	if err != nil {
		return nil, err
	}
	var s summary.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %s", path, jsonerr.Text(data, err))
	}
	return &s, nil
}

func summaryModel(s *summary.Summary, path string) *summary.ModelSummary {
	for i := range s.Models {
		if s.Models[i].Path == path {
			return &s.Models[i]
		}
	}
	return nil
}

func equalTokens(a, b []llm.Token) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// WriteCompareFiles writes compare.csv and compare.json of c (compare.md,
// the text, is written by package report: report.WriteCompareNarrative)
// into dir, atomically.
func WriteCompareFiles(dir string, c *Comparison) error {
	var b bytes.Buffer
	if err := WriteCompareCSV(&b, c); err != nil {
		return err
	}
	if err := rundir.WriteFileAtomic(filepath.Join(dir, rundir.FileCompareCSV), b.Bytes()); err != nil {
		return err
	}
	return rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileCompareJSON), c)
}

// WriteCompareCSV writes one row per model: identity, bits per weight,
// whether it is the reference, the agreement statistics (empty for the
// reference; KL in nats, Δp as a probability, ΔH in bits, same top in %),
// then accuracy (%) and drop (pp) per variant. Floats are in shortest
// round-trip form.
func WriteCompareCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	head := []string{"model_path", "label", "quantization", "bits_per_weight", "reference", "same_family", "items", "tokens",
		"kl_mean", "kl_se", "kl_max", "kl_p99_9", "kl_p99", "kl_p95", "kl_p90", "kl_median", "kl_p10", "kl_p5", "kl_p1", "kl_p0_1", "kl_min",
		"same_top_pct", "same_top_se_pp", "delta_p_mean", "delta_p_se", "delta_p_rms", "delta_entropy_bits_mean", "delta_entropy_bits_se"}
	for _, v := range c.Variants {
		head = append(head, "accuracy_pct_"+v, "k_"+v, "n_"+v, "drop_pp_"+v)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, m := range c.Models {
		rec := []string{m.Path, m.Label, m.Quantization, g(m.BitsPerWeight), strconv.FormatBool(m.Reference), strconv.FormatBool(m.SameFamily)}
		if a := m.Agreement; a != nil {
			k := a.KL
			rec = append(rec, strconv.Itoa(a.Items), strconv.Itoa(a.Tokens),
				g(k.Mean), g(k.SE), g(k.Max), g(k.P999), g(k.P99), g(k.P95), g(k.P90), g(k.Median), g(k.P10), g(k.P5), g(k.P1), g(k.P01), g(k.Min),
				g(a.SameTopPct), g(a.SameTopSE), g(a.DeltaP.Mean), g(a.DeltaP.SE), g(a.DeltaP.RMS), g(a.DeltaH.Mean), g(a.DeltaH.SE))
		} else {
			rec = append(rec, make([]string, 22)...)
		}
		for _, v := range c.Variants {
			va := FindAccuracy(m.Accuracy, v)
			acc, drop := "", ""
			if va.Pct != nil {
				acc = g(*va.Pct)
			}
			if va.DropPP != nil {
				drop = g(*va.DropPP)
			}
			rec = append(rec, acc, g(va.K), strconv.Itoa(va.N), drop)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// FindAccuracy returns the accuracy of variant v among as (the zero value,
// with Variant empty, when v is not there).
func FindAccuracy(as []VariantAccuracy, v string) VariantAccuracy {
	for _, a := range as {
		if a.Variant == v {
			return a
		}
	}
	return VariantAccuracy{Variant: v}
}
