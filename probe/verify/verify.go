package verify

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/templates"
)

// VerifyOptions are the settings of Verify.
type VerifyOptions struct {
	// Force replays the run even when the environment differs from the
	// recorded one (model sha256, llama.cpp commit, build flags, CPU
	// features, backend); the differences are then listed in the result.
	Force bool
	// Log receives one-line notices; may be nil.
	Log io.Writer
	// Progress, when set, is called after every replayed batch with the
	// items checked so far and the number to check.
	Progress func(done, total int)
	// Threads and ThreadsBatch, when positive, replace the recorded thread
	// counts (llm.Params): thread counts change speed, not logits, so the
	// replay must give the same bits with any.
	Threads, ThreadsBatch int
}

// EnvDifference is one recorded fact of a run's environment that differs
// from the environment of this process.
type EnvDifference struct {
	What     string `json:"what"` // e.g. "model 0 sha256", "llama.cpp commit", "build flags", "backend of model 0"
	Recorded string `json:"recorded"`
	Now      string `json:"now"`
}

// String renders the difference on one line.
func (d EnvDifference) String() string {
	return fmt.Sprintf("%s: recorded %q, now %q", d.What, d.Recorded, d.Now)
}

// EnvMismatchError is returned by Verify without Force when the environment
// differs from the recorded run, so a replay could not be expected to be
// bit-identical.
type EnvMismatchError struct {
	Dir         string
	Differences []EnvDifference
}

// Error lists every difference on one line and says how to override.
func (e *EnvMismatchError) Error() string {
	parts := make([]string, len(e.Differences))
	for i, d := range e.Differences {
		parts[i] = d.String()
	}
	return fmt.Sprintf("%s: cannot verify: this environment differs from the recorded run (%s); use --force to replay anyway",
		e.Dir, strings.Join(parts, "; "))
}

// Divergence fields: what differs at a position.
const (
	DivPrompt       = "prompt"           // the chat re-rendered now differs from the recorded prompt text (Position −1)
	DivPromptTokens = "prompt_token_ids" // the recorded prompt re-tokenized now differs (Position = index in the prompt)
	DivToken        = "token"            // a different token id was generated
	DivEntropy      = "entropy_bits"     // same token, entropy not bit-identical
	DivLogProb      = "logprob"          // same token and entropy, log-probability not bit-identical
	DivLength       = "length"           // one generation is longer than the other
	// DivResponse: the tokens reproduce, but the response results.csv
	// records is not the replay's text (Position = its first differing byte).
	DivResponse = "response"
)

// Divergence is one difference between a recorded trace and its replay.
// Float values are written in shortest round-trip form followed by their
// IEEE-754 bits in hex, so that a one-bit difference is visible.
type Divergence struct {
	Item     string `json:"item_id"`
	Model    string `json:"model"`    // path of the model
	Position int    `json:"position"` // 0-based index of the generated token (of the prompt token for DivPromptTokens; −1 for DivPrompt)
	Field    string `json:"field"`    // one of the Div* constants
	Recorded string `json:"recorded"`
	Replayed string `json:"replayed"`
}

// String renders the divergence on one line.
func (d Divergence) String() string {
	where := fmt.Sprintf("generated token %d", d.Position)
	switch d.Field {
	case DivPrompt:
		where = "prompt text"
	case DivPromptTokens:
		where = fmt.Sprintf("prompt token %d", d.Position)
	case DivAnswerScore:
		where = fmt.Sprintf("forced answer %d", d.Position)
	case DivAnswerFirst:
		where = "answer forced first"
	case DivResponse:
		where = fmt.Sprintf("%s response byte %d", rundir.FileResults, d.Position)
	}
	return fmt.Sprintf("item %s (%s), %s: %s recorded %s, replayed %s", d.Item, filepath.Base(d.Model), where, d.Field, d.Recorded, d.Replayed)
}

// VerifyResult is what Verify found. A run verifies when Divergences = 0.
type VerifyResult struct {
	Dir            string          `json:"dir"`
	Items          int             `json:"items"`           // items replayed and compared
	Skipped        int             `json:"skipped"`         // items recorded as skipped (prompt too long): not replayed
	Tokens         int             `json:"tokens"`          // recorded generated tokens compared
	Differences    []EnvDifference `json:"env_differences"` // environment differences accepted with Force
	Divergences    int             `json:"divergences"`     // positions (tokens, or the prompt) that differ, over all items
	DivergentItems int             `json:"divergent_items"` // items with at least one divergence
	First          *Divergence     `json:"first_divergence,omitempty"`

	divergent map[string]bool
}

// OK reports whether every token and every entropy was reproduced bit for bit.
func (r *VerifyResult) OK() bool { return r.Divergences == 0 }

// Environment returns the differences between the environment recorded in
// man and this process: for each model the sha256 of the file now at its
// path (and its backend summary, where one was recorded), the llama.cpp
// commit, the ggml build flags, llama.cpp's CPU feature line
// (llama_print_system_info) and GOOS/GOARCH. Errors: a model file that cannot
// be read.
func Environment(man *rundir.Manifest) ([]EnvDifference, error) {
	var diffs []EnvDifference
	add := func(what, rec, now string) {
		if rec != now {
			diffs = append(diffs, EnvDifference{What: what, Recorded: rec, Now: now})
		}
	}
	for i, me := range man.Models {
		sum, err := models.SHA256File(me.Path)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", i, err)
		}
		add(fmt.Sprintf("model %d (%s) sha256", i, me.Path), me.SHA256, sum)
		if me.Backend != "" {
			add(fmt.Sprintf("backend of model %d", i), me.Backend, llm.BackendSummary(man.Config.Params.GPULayers))
		}
	}
	add("llama.cpp commit", man.LlamaCommit, llm.LlamaCommit)
	add("build flags", man.BuildFlags, llm.BuildFlags)
	add("llama.cpp system info (CPU features)", man.SystemInfo, llm.SystemInfo())
	add("GOOS/GOARCH", man.GOOS+"/"+man.GOARCH, runtime.GOOS+"/"+runtime.GOARCH)
	return diffs, nil
}

// Verify re-runs the recorded run in dir and checks that it reproduces to the
// last bit (the reproducibility contract of DESIGN.md). It reads
// manifest.json, set.jsonl and traces.jsonl; refuses with an
// *EnvMismatchError when Environment reports a difference, unless
// opt.Force; then, model by model, replays every batch of items exactly as
// the run grouped them (the same items decoded together in one llama_batch,
// since llama.cpp is not batch-invariant) from the recorded prompt token ids
// with the recorded parameters, and compares every generated token id and
// the float64 bits (math.Float64bits) of every per-token entropy and
// log-probability. The entropies are computed with the kernel the run
// recorded (RecordedEntropyKernel). It also re-renders and re-tokenizes each prompt and
// compares them with the recorded ones, and compares the text of each
// replay whose tokens reproduce with the response its results.csv row
// records (DivResponse). Before any replay, the files are checked against
// each other (verifyRecords): an edited row is an error, not a divergence.
//
// Divergences are counted, not returned as an error: see VerifyResult. Errors
// are for what prevents a replay: a missing or corrupt run file, a trace
// naming an unknown item, a broken batch, a model that does not load.
func Verify(ctx context.Context, dir string, opt VerifyOptions) (*VerifyResult, error) {
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{Dir: dir}
	if err := checkReplayable(dir, man, opt, res); err != nil {
		return nil, err
	}
	questions, err := readQuestions(dir, man)
	if err != nil {
		return nil, err
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 {
		return nil, fmt.Errorf("%s: no trace: nothing to verify", filepath.Join(dir, rundir.FileTraces))
	}
	responses, err := verifyRecords(dir, man, traces)
	if err != nil {
		return nil, err
	}
	groups, err := batchGroups(traces, len(man.Models), questions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.FileTraces), err)
	}
	if err := replayGroups(ctx, man, groups, questions, responses, opt, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkReplayable refuses to verify a run whose environment differs from
// this process's (unless opt.Force; the differences are then recorded in
// res), whose decode procedure or entropy kernel this binary cannot
// replay, or whose answer scoring is not this binary's
// (probe.AnswerScoreVersion; "", a run without it, replays); it logs a run
// that is not complete.
func checkReplayable(dir string, man *rundir.Manifest, opt VerifyOptions, res *VerifyResult) error {
	diffs, err := Environment(man)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(diffs) > 0 {
		if !opt.Force {
			return &EnvMismatchError{Dir: dir, Differences: diffs}
		}
		res.Differences = diffs
	}
	if man.Status != "complete" && opt.Log != nil {
		fmt.Fprintf(opt.Log, "verify: the run's status is %q: checking the %s it finished\n", man.Status, rundir.FileTraces)
	}
	switch man.Config.Decode {
	case "", probe.DecodePerBatch, probe.DecodeKeepPrefix, probe.DecodeKeepPrefixV1: // "": recorded before the procedure was, which is DecodePerBatch
	default:
		return fmt.Errorf("%s: decode procedure %q is not one this binary can replay (%s, %s)", filepath.Join(dir, rundir.FileManifest), man.Config.Decode, probe.DecodeKeepPrefix, probe.DecodePerBatch)
	}
	if err := llm.CheckEntropyKernel(rundir.RecordedEntropyKernel(man)); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, rundir.FileManifest), err)
	}
	return checkAnswerScore(dir, man)
}

// readQuestions reads the run's set file and returns each instance's text
// as the prompt shows it, by instance ID.
func readQuestions(dir string, man *rundir.Manifest) (map[string]string, error) {
	setPath := filepath.Join(dir, man.SetFile)
	if man.SetFile == "" {
		setPath = filepath.Join(dir, rundir.FileSet)
	}
	sf, err := os.Open(setPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setPath, templates.BarePathError(err))
	}
	set, err := templates.ReadSet(sf)
	sf.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setPath, err)
	}
	questions := map[string]string{}
	for _, in := range set.Instances {
		questions[in.ID] = probe.ItemText(&in)
	}
	return questions, nil
}

// replayGroups decodes every batch of the run again (loading each model
// when its first batch comes) and compares it with its traces (replayGroup);
// skipped items are counted in res.Skipped.
func replayGroups(ctx context.Context, man *rundir.Manifest, groups []traceGroup, questions, responses map[string]string, opt VerifyOptions, res *VerifyResult) error {
	total := 0
	for _, g := range groups {
		if g.skipped {
			res.Skipped++
		} else {
			total += len(g.traces)
		}
	}

	cfg := man.Config
	kernel := rundir.RecordedEntropyKernel(man)
	if opt.Threads > 0 {
		cfg.Params.Threads = opt.Threads
	}
	if opt.ThreadsBatch > 0 {
		cfg.Params.ThreadsBatch = opt.ThreadsBatch
	}
	var m *llm.Model
	var keeps probe.KeptPrefixes
	var err error
	loaded := -1
	defer func() { m.Close() }()
	done := 0
	for _, g := range groups {
		if g.skipped {
			continue
		}
		if g.model != loaded {
			m.Close()
			m = nil
			path := man.Models[g.model].Path
			if m, err = llm.Load(path, cfg.Params); err != nil {
				return err
			}
			loaded, keeps = g.model, nil
		}
		if err := replayGroup(ctx, m, g, cfg, kernel, questions, responses, &keeps, res); err != nil {
			return err
		}
		done += len(g.traces)
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	return nil
}

// traceGroup is one batch of a run (or one skipped item), in traces.jsonl order.
type traceGroup struct {
	model   int
	skipped bool
	traces  []rundir.Trace
}

// batchGroups cuts traces into the batches the run decoded together: a
// trace with BatchSize k starts a batch of itself and the k−1 traces after
// it (skipped items stand alone, and are written between batches).
func batchGroups(traces []rundir.Trace, nModels int, questions map[string]string) ([]traceGroup, error) {
	var out []traceGroup
	for i := 0; i < len(traces); {
		t := traces[i]
		mi, inst, err := probe.SplitItemID(t.ItemID, nModels)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if _, ok := questions[inst]; !ok {
			return nil, fmt.Errorf("line %d: item %s: instance %s is not in the run's set", i+1, t.ItemID, inst)
		}
		if t.SkipReason != "" {
			out = append(out, traceGroup{model: mi, skipped: true, traces: []rundir.Trace{t}})
			i++
			continue
		}
		k := max(t.BatchSize, 1)
		if i+k > len(traces) {
			return nil, fmt.Errorf("line %d: item %s starts a batch of %d but only %d traces follow", i+1, t.ItemID, k, len(traces)-i)
		}
		g := traceGroup{model: mi}
		for j := i; j < i+k; j++ {
			u := traces[j]
			mj, inst, err := probe.SplitItemID(u.ItemID, nModels)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", j+1, err)
			}
			if _, ok := questions[inst]; !ok {
				return nil, fmt.Errorf("line %d: item %s: instance %s is not in the run's set", j+1, u.ItemID, inst)
			}
			if mj != mi || u.SkipReason != "" || max(u.BatchSize, 1) != k {
				return nil, fmt.Errorf("line %d: item %s does not belong to the batch of %d started by %s on line %d", j+1, u.ItemID, k, t.ItemID, i+1)
			}
			if len(u.PromptTokenIDs) == 0 {
				return nil, fmt.Errorf("line %d: item %s has no prompt token ids", j+1, u.ItemID)
			}
			g.traces = append(g.traces, u)
		}
		out = append(out, g)
		i += k
	}
	return out, nil
}

// replayGroup replays one batch and adds its divergences to res; responses
// are the results.csv responses by item ID.
func replayGroup(ctx context.Context, m *llm.Model, g traceGroup, cfg rundir.Config, kernel string, questions, responses map[string]string, keeps *probe.KeptPrefixes, res *VerifyResult) error {
	md := m.Metadata()
	prompts := make([][]llm.Token, len(g.traces))
	promptDiv := make([]*Divergence, len(g.traces))
	var stop []string
	for i, t := range g.traces {
		_, inst, _ := probe.SplitItemID(t.ItemID, math.MaxInt)
		r, err := probe.RenderCondition(m, cfg, questions[inst], results.ItemCondition(t.ItemID), variantOfItem(t.ItemID) == templates.VariantPlacebo)
		if err != nil {
			return fmt.Errorf("%s: item %s: %w", md.Path, t.ItemID, err)
		}
		if i == 0 {
			stop = r.Stop
		}
		if r.Text != t.Prompt {
			promptDiv[i] = &Divergence{Item: t.ItemID, Model: md.Path, Position: -1, Field: DivPrompt,
				Recorded: strconv.Quote(t.Prompt), Replayed: strconv.Quote(r.Text)}
		} else if toks, err := m.Tokenize(r.Text, true, true); err != nil {
			return fmt.Errorf("%s: item %s: %w", md.Path, t.ItemID, err)
		} else if j := firstTokenDiff(t.PromptTokenIDs, toks); j >= 0 {
			promptDiv[i] = &Divergence{Item: t.ItemID, Model: md.Path, Position: j, Field: DivPromptTokens,
				Recorded: tokenAt(t.PromptTokenIDs, j), Replayed: tokenAt(toks, j)}
		}
		prompts[i] = t.PromptTokenIDs
	}
	opt := llm.GenerateOptions{MaxTokens: cfg.MaxTokens, Stop: stop, Temperature: cfg.Temperature, Seed: uint64(cfg.Seed), EntropyKernel: kernel, KeepFirstLogits: true}
	var err error
	if opt.KeepPrefix, err = keeps.Get(m, cfg, results.ItemCondition(g.traces[0].ItemID)); err != nil {
		return fmt.Errorf("%s: %w", md.Path, err)
	}
	// A calculator batch is replayed with the calculator: its results are
	// fed at the same points, so the replay is compared token by token.
	probe.NewCalculator(cfg, results.ItemCondition(g.traces[0].ItemID), len(g.traces)).SetOptions(&opt)
	gens, err := m.GenerateBatch(ctx, prompts, opt)
	if err != nil {
		return fmt.Errorf("%s: replaying the batch of %s: %w", md.Path, g.traces[0].ItemID, err)
	}
	for i, t := range g.traces {
		res.Items++
		res.Tokens += len(t.Tokens)
		if promptDiv[i] != nil {
			res.diverge(*promptDiv[i])
		}
		before := res.Divergences
		compareTokens(t, gens[i], md.Path, res)
		if resp, ok := responses[t.ItemID]; ok && res.Divergences == before {
			compareResponse(t.ItemID, resp, gens[i].Text, md.Path, res)
		}
	}
	preset, err := probe.ParsePrompt(cfg.Prompt)
	if err != nil {
		return err
	}
	return replayAnswerScores(ctx, m, gens, g.traces, preset, kernel, res)
}

// compareTokens compares one recorded trace with its replay, position by
// position, and counts every position that differs.
func compareTokens(t rundir.Trace, g *llm.Generation, model string, res *VerifyResult) {
	n := max(len(t.Tokens), len(g.Tokens))
	for j := 0; j < n; j++ {
		d := Divergence{Item: t.ItemID, Model: model, Position: j}
		switch {
		case j >= len(t.Tokens) || j >= len(g.Tokens):
			d.Field = DivLength
			d.Recorded = fmt.Sprintf("%d tokens (stop: %s)", len(t.Tokens), t.StopReason)
			d.Replayed = fmt.Sprintf("%d tokens (stop: %s)", len(g.Tokens), g.StopReason)
		case t.Tokens[j].ID != g.Tokens[j].ID:
			d.Field = DivToken
			d.Recorded = fmt.Sprintf("%d %q", t.Tokens[j].ID, t.Tokens[j].Piece)
			d.Replayed = fmt.Sprintf("%d %q", g.Tokens[j].ID, g.Tokens[j].Piece)
		case math.Float64bits(t.Tokens[j].EntropyBits) != math.Float64bits(g.Tokens[j].EntropyBits):
			d.Field = DivEntropy
			d.Recorded, d.Replayed = floatBits(t.Tokens[j].EntropyBits), floatBits(g.Tokens[j].EntropyBits)
		case math.Float64bits(t.Tokens[j].LogProb) != math.Float64bits(g.Tokens[j].LogProb):
			d.Field = DivLogProb
			d.Recorded, d.Replayed = floatBits(t.Tokens[j].LogProb), floatBits(g.Tokens[j].LogProb)
		default:
			continue
		}
		res.diverge(d)
	}
}

// compareResponse compares the response results.csv records for an item
// with the text of its replay whose tokens reproduced (as results.csv gives
// it back: rundir.CSVText), and counts a difference as one divergence at its
// first differing byte.
func compareResponse(item, recorded, replayed, model string, res *VerifyResult) {
	replayed = rundir.CSVText(replayed)
	if recorded == replayed {
		return
	}
	j := rundir.CommonPrefix(recorded, replayed)
	res.diverge(Divergence{Item: item, Model: model, Position: j, Field: DivResponse,
		Recorded: rundir.Excerpt(recorded, j), Replayed: rundir.Excerpt(replayed, j)})
}

// diverge counts d and keeps it when it is the first.
func (r *VerifyResult) diverge(d Divergence) {
	if r.divergent == nil {
		r.divergent = map[string]bool{}
	}
	if !r.divergent[d.Item] {
		r.divergent[d.Item] = true
		r.DivergentItems++
	}
	if r.First == nil {
		first := d
		r.First = &first
	}
	r.Divergences++
}

// floatBits renders a float64 as its shortest round-trip decimal and its bits.
func floatBits(v float64) string {
	return fmt.Sprintf("%s (0x%016x)", strconv.FormatFloat(v, 'g', -1, 64), math.Float64bits(v))
}

func firstTokenDiff(a, b []llm.Token) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func tokenAt(ts []llm.Token, i int) string {
	if i >= len(ts) {
		return fmt.Sprintf("end of prompt (%d tokens)", len(ts))
	}
	return strconv.Itoa(int(ts[i]))
}

// verifyRecords refuses a complete run whose results.csv or traces.jsonl
// lost or gained items (CheckRecords), whose correct column was edited
// (CheckScores) or a response (CheckResponses): verify replays the traces
// it has, so a trace that is gone would otherwise go unnoticed. It returns
// the responses of results.csv by item ID.
func verifyRecords(dir string, man *rundir.Manifest, traces []rundir.Trace) (map[string]string, error) {
	path := filepath.Join(dir, rundir.FileResults)
	trials, err := rundir.ReadResults(path)
	if err != nil {
		return nil, err
	}
	if err := probe.CheckScores(path, man.ExtractionRules, man.ErrorRules, trials); err != nil {
		return nil, err
	}
	if err := probe.CheckResponses(path, man, trials, traces); err != nil {
		return nil, err
	}
	ids := make([]string, len(traces))
	for i := range traces {
		ids[i] = traces[i].ItemID
	}
	if err := probe.CheckRecords(dir, man, trials, ids); err != nil {
		return nil, err
	}
	responses := make(map[string]string, len(trials))
	for i := range trials {
		responses[trials[i].ItemID] = trials[i].Response
	}
	return responses, nil
}

// variantOfItem is the variant named by an item ID
// ("m<model>/<template>/<variant>/<index>[#<condition>]": the instance ID's
// second-to-last part; templates.Instance.ID), "" when it names none.
func variantOfItem(id string) templates.Variant {
	id, _, _ = strings.Cut(id, "#")
	parts := strings.Split(id, "/")
	if len(parts) < 3 {
		return ""
	}
	return templates.Variant(parts[len(parts)-2])
}
