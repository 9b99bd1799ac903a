package probe_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/verify"
	"github.com/fragility/fragility/templates"
)

// TestAnswerScoreRunMatchesIndependentPass runs a tiny probe (one sequence
// per batch, prompts decoded whole) and checks every trial's
// answer_logprob, and the own answer's when scored, against a fresh pass
// over the prompt followed by the kept generated tokens and the forced ones
// (llm.Model.ScoreForced; Score for the model's own tokens): |Δ| ≤ 1e-9
// nats. Then verify replays the scoring pass bit for bit, and a
// one-bit change of a recorded log-probability is reported.
func TestAnswerScoreRunMatchesIndependentPass(t *testing.T) {
	model := probetest.GemmaModel(t)
	out := filepath.Join(t.TempDir(), "run")
	params := llm.Params{Threads: 1, NCtx: 512, NSeq: 1}
	cfg := rundir.Config{Models: []string{model}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop},
		Instances: 1, Seed: 7, MaxTokens: 16, BootstrapB: 50, Decode: probe.DecodePerBatch, Params: params, OutDir: out}
	if _, err := probe.Run(context.Background(), cfg, probe.Options{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	man, err := rundir.ReadManifest(out)
	if err != nil || man.AnswerScore != probe.AnswerScoreVersion {
		t.Fatalf("manifest answer_score %q (%v), want %s", man.AnswerScore, err, probe.AnswerScoreVersion)
	}
	traces, err := rundir.ReadTraces(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.Load(model, params)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	scored := 0
	for i, tr := range traces {
		if tr.AnswerScore == nil || !trials[i].AnswerScored || trials[i].ItemID != tr.ItemID {
			t.Fatalf("%s: not scored (trial %+v)", tr.ItemID, trials[i].AnswerScored)
		}
		s := tr.AnswerScore
		for k, a := range s.Answers {
			var forced []llm.Token
			for _, r := range tr.Tokens[:s.Keep] {
				forced = append(forced, r.ID)
			}
			forced = append(forced, a.Tokens...)
			var want float64
			var err error
			if a.FromGeneration {
				// The model's own tokens: generation's log-probabilities,
				// decoded one token per call as Score decodes them.
				err = m.Score(context.Background(), tr.PromptTokenIDs, forced, 0, func(step int, logits []float32, d llm.Dist) error {
					if step >= s.Keep+a.From {
						want += d.LogProb(logits[forced[step]])
					}
					return nil
				})
			} else {
				// Forced tokens: decoded together after the kept ones
				// (answer-score/3), as ScoreForced decodes them.
				err = m.ScoreForced(context.Background(), tr.PromptTokenIDs, forced[:s.Keep], a.Tokens, a.From, func(step int, logits []float32, d llm.Dist) error {
					want += d.LogProb(logits[a.Tokens[step]])
					return nil
				})
			}
			if err != nil {
				t.Fatal(err)
			}
			got := trials[i].AnswerLogProb
			if k == 1 {
				got = trials[i].OwnAnswerLogProb
			}
			if d := math.Abs(got - want); d > 1e-9 || got >= 0 {
				t.Errorf("%s answer %d %q: recorded %v nats, independent pass %v (|Δ| %g)", tr.ItemID, k, a.Answer, got, want, d)
			}
			t.Logf("%s answer %d %q after %d kept tokens (prefix %q): %v nats over %d tokens, |Δ| %g", tr.ItemID, k, a.Answer, s.Keep, s.Prefix, got, len(a.TokenLogProbs), math.Abs(got-want))
			scored++
		}
	}
	if scored == 0 {
		t.Fatal("no answer scored")
	}
	res, err := verify.Verify(context.Background(), out, verify.VerifyOptions{})
	if err != nil || !res.OK() {
		t.Fatalf("verify: %v, %+v", err, res)
	}
	traces[0].AnswerScore.Answers[0].LogProb = math.Nextafter(traces[0].AnswerScore.Answers[0].LogProb, 0)
	probetest.WriteTraces(t, out, traces)
	// The row edited to match, so that the files agree and only the replay
	// can tell (report refuses a row its trace contradicts).
	tr0 := &trials[0]
	tr0.AnswerScored, tr0.AnswerLogProb, tr0.AnswerLogProbTokens, tr0.OwnAnswerLogProb, tr0.OwnAnswerLogProbTokens, tr0.AnswerLogProbMargin = false, 0, 0, 0, 0, 0
	probe.FillAnswerScore(tr0, traces[0].AnswerScore)
	probetest.WriteTrials(t, filepath.Join(out, rundir.FileResults), trials)
	res, err = verify.Verify(context.Background(), out, verify.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.First == nil || res.First.Field != verify.DivAnswerScore {
		t.Fatalf("verify after a one-bit change: %+v, want an answer_score divergence", res)
	}
}

// runTraces runs cfg into out and returns its traces and rows.
func runTraces(t *testing.T, cfg rundir.Config) ([]rundir.Trace, []results.Trial) {
	t.Helper()
	t0 := time.Now()
	if _, err := probe.Run(context.Background(), cfg, probe.Options{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("%s: run in %.1f s", cfg.OutDir, time.Since(t0).Seconds())
	traces, err := rundir.ReadTraces(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(cfg.OutDir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trials, err := results.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	return traces, trials
}

// TestAnswerFirstRun runs a tiny probe on the default model (two sequences
// per batch, the kept prefix decoded once: a run's defaults) with and
// without the answer first (probe.AnswerScoreVersion step 4) and checks that:
// every numeric item has it, in traces.jsonl and in results.csv
// (answer_first_logprob, answer_first_logprob_tokens); its forced tokens
// are the final-answer form and the expected answer, scored from the
// number on; its log-probability equals an independent computation
// (ScoreForced in a fresh context over the recorded prompt and the forced
// tokens, no generated token: |Δ| ≤ 1e-6 nats, as llama.cpp is not batch-invariant;
// the same bits on the development machine); the generated tokens, their entropies and
// log-probabilities are the same bits with it as without it (the batches
// after a forcing included); verify replays it bit for bit and reports a
// one-bit change of it. It logs the pass's cost beside generation's.
func TestAnswerFirstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	model, err := models.PathOf(probetest.ChatName)
	if err != nil {
		t.Fatal(err)
	}
	params := llm.Params{Threads: 2, NCtx: 1024, NSeq: 2}
	cfg := rundir.Config{Models: []string{model}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop},
		Instances: 1, Seed: 3, MaxTokens: 24, BootstrapB: 50, Params: params, OutDir: filepath.Join(t.TempDir(), "with")}
	traces, trials := runTraces(t, cfg)
	without := cfg
	without.OutDir = filepath.Join(t.TempDir(), "without")
	probe.SetNoAnswerFirst(true)
	bare, _ := runTraces(t, without)
	probe.SetNoAnswerFirst(false)

	if len(bare) != len(traces) {
		t.Fatalf("%d traces without the answer first, %d with", len(bare), len(traces))
	}
	byID := map[string]rundir.Trace{}
	for _, tr := range bare {
		byID[tr.ItemID] = tr
	}
	for _, tr := range traces {
		b := byID[tr.ItemID]
		if b.AnswerFirst != nil {
			t.Errorf("%s: answer first recorded with the hook set", tr.ItemID)
		}
		if len(b.Tokens) != len(tr.Tokens) {
			t.Errorf("%s: %d tokens with the answer first, %d without", tr.ItemID, len(tr.Tokens), len(b.Tokens))
			continue
		}
		for k := range tr.Tokens {
			x, y := tr.Tokens[k], b.Tokens[k]
			if x.ID != y.ID || math.Float64bits(x.EntropyBits) != math.Float64bits(y.EntropyBits) || math.Float64bits(x.LogProb) != math.Float64bits(y.LogProb) {
				t.Errorf("%s token %d: %+v with the answer first, %+v without", tr.ItemID, k, x, y)
				break
			}
		}
	}

	m, err := llm.Load(model, llm.Params{Threads: 2, NCtx: 1024, NSeq: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lead, _, _ := probe.AnswerLead(probe.PromptFragility)
	for i, tr := range traces {
		a, row := tr.AnswerFirst, trials[i]
		if a == nil || row.ItemID != tr.ItemID || row.AnswerFirstLogProbTokens == 0 {
			t.Fatalf("%s: no answer first (row %s, %d tokens)", tr.ItemID, row.ItemID, row.AnswerFirstLogProbTokens)
		}
		want, _ := probe.RenderAnswer(row.Expected)
		var text, num strings.Builder
		for k, id := range a.Tokens {
			text.WriteString(m.Piece(id))
			if k >= a.From {
				num.WriteString(m.Piece(id))
			}
		}
		if a.Answer != want || text.String() != lead+want || strings.TrimSpace(num.String()) != want {
			t.Errorf("%s: forced %q (scored %q) for answer %q, want %q", tr.ItemID, text.String(), num.String(), a.Answer, lead+want)
		}
		var ref float64
		var terms []float64
		err := m.ScoreForced(context.Background(), tr.PromptTokenIDs, nil, a.Tokens, a.From, func(step int, logits []float32, d llm.Dist) error {
			lp := d.LogProb(logits[a.Tokens[step]])
			ref += lp
			terms = append(terms, lp)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(a.LogProb - ref); d > 1e-6 || a.LogProb > 0 || len(terms) != len(a.TokenLogProbs) {
			t.Errorf("%s: answer first %v nats over %d tokens, fresh context %v over %d (|Δ| %g)", tr.ItemID, a.LogProb, len(a.TokenLogProbs), ref, len(terms), d)
		}
		if math.Float64bits(row.AnswerFirstLogProb) != math.Float64bits(a.LogProb) || row.AnswerFirstLogProbTokens != len(a.TokenLogProbs) {
			t.Errorf("%s: row %v over %d tokens, trace %v over %d", tr.ItemID, row.AnswerFirstLogProb, row.AnswerFirstLogProbTokens, a.LogProb, len(a.TokenLogProbs))
		}
		t.Logf("%s: answer first %q: %v nats over %d tokens (fresh context %v, |Δ| %g, same bits %v); after the reasoning %v (%s, %s)", tr.ItemID, a.Answer, a.LogProb, len(a.TokenLogProbs),
			ref, math.Abs(a.LogProb-ref), math.Float64bits(a.LogProb) == math.Float64bits(ref), row.AnswerLogProb, row.StopReason, row.Extracted)
	}

	res, err := verify.Verify(context.Background(), cfg.OutDir, verify.VerifyOptions{})
	if err != nil || !res.OK() {
		t.Fatalf("verify: %v, %+v", err, res)
	}
	traces[0].AnswerFirst.TokenLogProbs[len(traces[0].AnswerFirst.TokenLogProbs)-1] = math.Nextafter(traces[0].AnswerFirst.TokenLogProbs[len(traces[0].AnswerFirst.TokenLogProbs)-1], 0)
	probetest.WriteTraces(t, cfg.OutDir, traces)
	res, err = verify.Verify(context.Background(), cfg.OutDir, verify.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.First == nil || res.First.Field != verify.DivAnswerFirst {
		t.Fatalf("verify after a one-bit change of a term: %+v, want an answer_first divergence", res)
	}
}
